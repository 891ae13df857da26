"""raceday: a terminal tabletop incident exercise in real SQL."""

import logging

__version__ = "0.1.0"

# Records go to a session's raceday.log once one is open (logfile.py); until then
# nowhere, and never to the terminal the TUI draws on.
logging.getLogger("raceday").addHandler(logging.NullHandler())
