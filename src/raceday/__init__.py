"""raceday: a terminal tabletop incident exercise in real SQL."""

__version__ = "0.1.0"
