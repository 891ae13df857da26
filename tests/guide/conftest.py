"""The facilitator guide's tests: `raceday guide` from every bundled exercise."""
