"""The exercise model and its loader: exercises are data."""
