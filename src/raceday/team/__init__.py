"""Team play on one machine: a host that owns the session, seats that send it commands, and
views that read what it records, all meeting in the session folder's `session.db`."""
