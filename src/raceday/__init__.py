"""raceday: a terminal tabletop incident exercise in real SQL."""

import logging

__version__ = "0.1.0"

# Records go to a session's raceday.log once one is open (logfile.py); until then
# nowhere, and never to the terminal the TUI draws on. The PostgreSQL driver's too: a
# connection closed under a night played ahead (at exit) is a record, not a line on stderr.
for _name in ("raceday", "psycopg"):
    logging.getLogger(_name).addHandler(logging.NullHandler())
