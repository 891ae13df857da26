"""How an AAR rates an objective, as HSEEP does: P performed without challenges, S with some,
M with major ones, U unable to be performed; here from the share of it achieved."""

from __future__ import annotations

RATINGS = {
    "P": "performed without challenges",
    "S": "performed with some challenges",
    "M": "performed with major challenges",
    "U": "unable to be performed",
}


def rating(points: int, maximum: int) -> str:
    share = points / maximum if maximum else 0.0
    return "P" if share >= 0.8 else "S" if share >= 0.5 else "M" if share > 0 else "U"
