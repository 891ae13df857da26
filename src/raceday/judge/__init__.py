"""The judge: what the customers were spared, measured by raceday itself.

Pure: it is handed facts (`facts`: what the session saw; the minutes each harm was present in
each replayed night, the good writes the team's world refused) and gives verdicts; it reads
no database and no screen. `harms` keeps the history a harm needs, `guards` grades what the
guards kept away, `tasks` and `detection` hold the final replay against the live night's
claims, `variant` draws the session's variant night, and `score` turns it all into points
with reasons.
"""
