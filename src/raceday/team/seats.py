"""Seats and their tokens: who may send which role's commands.

A seat is given one role. Its token is handed out by the host and never stored: session.db
keeps only its hash (so a client finds its seat) and each command carries a MAC of its
content under the token with a number that must grow (so a copied row is refused as a
replay). On one machine every player can read session.db; the MAC is what keeps a seat's
commands its own.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class SeatSpec:
    """A seat the host opens: its name (how players and scripts call it) and its role."""

    name: str
    role: str


def seats_from_roles(roles: Sequence[str]) -> list[SeatSpec]:
    """`responder,enactor-a,responder` -> seats responder, enactor-a, responder-2."""
    seats: list[SeatSpec] = []
    counts: dict[str, int] = {}
    for role in roles:
        counts[role] = counts.get(role, 0) + 1
        name = role if counts[role] == 1 else f"{role}-{counts[role]}"
        seats.append(SeatSpec(name, role))
    return seats


def new_token() -> str:
    """A seat's secret; never starting with '-', which `--token T` would read as an option
    (one token in 64 did, and its join line failed)."""
    while True:
        token = secrets.token_urlsafe(9)
        if not token.startswith("-"):
            return token


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def sign(token: str, seat: str, nonce: int, kind: str, payload: str, team: str = "") -> str:
    """The MAC of a command; `team` binds it to one team's world when a host runs several."""
    message = f"{seat}\n{nonce}\n{kind}\n{payload}".encode()
    if team:
        message = f"{team}\n".encode() + message
    return hmac.new(token.encode("utf-8"), message, hashlib.sha256).hexdigest()


def verify(token: str, seat: str, nonce: int, kind: str, payload: str, mac: str,
           team: str = "") -> bool:
    return hmac.compare_digest(sign(token, seat, nonce, kind, payload, team), mac)
