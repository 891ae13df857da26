"""What a player's look at the world can show, in words a player understands.

A look is one read of the world by a person (a query, or a monitor's run that returned rows).
It can show the fault only when its answer follows the world: a query that calls random() or
reads the computer's clock gives an answer that nothing in the night's world set, and one
that answers differently when run again at once on the same world shows nothing about it.
The session asks these questions when a look is taken; the final replay then asks the last
one (does it show something a night without the fault would not?).
"""

from __future__ import annotations

import re

# Calls whose answer comes from chance or from the computer's clock, never from the world:
# SQLite's random()/randomblob() and 'now'; PostgreSQL's now(), current_* and the like.
_CHANCE = re.compile(
    r"\b(?:random|randomblob|gen_random_uuid|clock_timestamp|statement_timestamp|"
    r"transaction_timestamp|timeofday|now)\s*\("
    r"|'now'|\bcurrent_(?:date|time|timestamp)\b|\blocaltime(?:stamp)?\b"
    r"|\bunixepoch\s*\(\s*\)",
    re.IGNORECASE)

CHANCE = ("it calls random() or reads the computer's clock, which nothing in the exercise's "
          "world sets")
UNSTEADY = "it gave a different answer when run again at once on the same world"


def chance(sql: str) -> bool:
    """Does the query's answer depend on chance or the computer's clock (read on the text)?"""
    return _CHANCE.search(sql) is not None


def short_sql(sql: str, width: int = 60) -> str:
    """A statement on one line, cut to `width` characters."""
    one = " ".join(sql.split())
    return one if len(one) <= width else one[: width - 1] + "…"


def tables_words(tables: set[str] | frozenset[str]) -> str:
    """`a`, `a or b`, `a, b or c`."""
    names = sorted(tables)
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " or " + names[-1]


def declared_why(verdict: str, look: str, unshown: str, cost: int, *, replayed: bool) -> str:
    """What the player is told at once about a declaration: does it count, and if not, why.
    `look`: the look it rests on ("23:49 (SELECT ...)"); `unshown`: why nothing looked at
    shows it; `cost`: a wrong finding's or false alarm's cost; `replayed`: the final replay
    checks the look against a night without the fault."""
    costs = f" (it costs {cost} points)" if cost else ""
    if verdict == "confirmed":
        later = (" The final replay checks that the look shows what a night without the fault "
                 "would not." if replayed else "")
        return f"It counts: your look at {look} shows it.{later}" if look else "It counts."
    if verdict == "unseen":
        return (f"It does not count yet: nothing you have looked at shows this yet; {unshown}. "
                "Look where it shows, then declare it again.")
    if verdict == "repeat":
        return "Already declared: a finding counts once."
    if verdict == "false_alarm":
        return f"It does not count: the world does not show this (yet){costs}."
    if verdict == "wrong":
        return f"It does not count: this is not what went wrong{costs}."
    if verdict == "to_rule":
        then = f" (then it costs {cost} points)" if cost else ""
        return ("In your own words, so the facilitator rules on it: it counts once ruled right, "
                f"and costs nothing unless ruled wrong{then}.")
    return ""
