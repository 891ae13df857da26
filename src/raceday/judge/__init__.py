"""The judge: what the customers were spared, measured by raceday itself.

Pure: it is handed facts (the minutes each harm was present in each replayed night, the good
writes the team's world refused) and gives verdicts; it reads no database and no screen.
"""
