"""The only code that talks to a database."""
