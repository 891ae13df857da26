"""The exercise model and its loader: exercises are data."""

EXERCISE_FILE = "exercise.yaml"
"""The file an exercise folder holds (here, not in the loader: finding an exercise, as
`raceday play ID` does before its first screen, imports neither the loader nor YAML)."""
