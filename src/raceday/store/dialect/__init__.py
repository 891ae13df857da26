"""SQL text in each database's dialect: one tokenizer and one splitter per dialect.

`sqlite.py` and `postgres.py` each say where a statement ends (`statement_pieces`), what its
first keyword is, and what its words are. The stores run what they cut, the world builder and
the exercise check build with it, and the editor (store/sqltext.py) shows the statement under
the cursor with the same cut, so no two parts of raceday disagree where a statement ends.
Pure text: nothing here opens a database or imports psycopg (SQLite users load both).
"""
