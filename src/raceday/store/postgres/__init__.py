"""A world in PostgreSQL (`--db postgresql://...`): the store, its SQL text, its hostile guards.

Nothing here is imported unless a PostgreSQL DSN is given; psycopg is imported only then.
"""
