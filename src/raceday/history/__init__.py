"""Progress across sessions: every finished session, indexed into `history.db`.

The history is derived data: `transcripts/history.db` is a plain SQLite file (open it in
datasette or sqlite-utils) that is always rebuilt, identically, from the session folders
beside it. The transcripts are the truth; deleting the file loses nothing.
"""
