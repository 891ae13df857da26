"""raceday in the browser: `raceday serve` (textual-serve starts one raceday process per
browser). Nothing of the core imports this package; the CLI imports it inside `serve` only."""
