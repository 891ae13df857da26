"""A login per seat in a PostgreSQL meeting: each seat (and the projector) reaches only what
is published to players, and appends only its own seat's commands.

The meeting's tables (`rd_team_<id>`) stay the host's: no seat login has USAGE on them, on
the world's schemas or on the answer key. A second schema, `rd_team_<id>_pub`, holds views
over what players may read (the published events, the state, the meta, the seats without
other seats' token hashes) and a view of the seat's own commands, WITH CHECK OPTION, the one
thing a seat may insert into. A seat login may take no lock that holds the host up: SELECT
(ACCESS SHARE) and INSERT (ROW EXCLUSIVE) conflict with none of the host's writes, and no
seat login has UPDATE, DELETE or TRUNCATE anywhere. Seats are woken by the host on channels
whose names only the host and each seat know (one per login), and the host by a trigger on
the commands table, on a channel named in a table no seat can read; `NOTIFY` cannot be
revoked in PostgreSQL, but no seat knows a channel another listens on.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, urlsplit, urlunsplit

PUBLIC_VIEWS = ("meta", "seats", "events", "state", "commands", "me")
SEAT_COLUMNS = "seat, nonce, kind, payload, mac, submitted_at"
ROLE_SETTINGS = {"statement_timeout": "10s", "lock_timeout": "2s",
                 "idle_in_transaction_session_timeout": "10s"}
CONNECTIONS_PER_LOGIN = 6
"""A client holds two (its reads and its LISTEN); a reconnecting one briefly more."""


@dataclass(frozen=True)
class Login:
    """A seat's (or the projector's) own login: `seat` None is the projector."""

    name: str
    password: str
    seat: str | None
    channel: str


def pub_schema(schema: str) -> str:
    return f"{schema}_pub"


def public_sql(schema: str) -> str:
    """The host-only tables and the players' views beside the meeting's tables."""
    s, p = f'"{schema}"', f'"{pub_schema(schema)}"'
    mine = f"(SELECT l.seat FROM {s}.logins l WHERE l.login = session_user)"
    return f"""
CREATE TABLE {s}.logins (login NAME PRIMARY KEY, seat TEXT, channel TEXT NOT NULL);
CREATE TABLE {s}.secrets (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE FUNCTION {s}.wake_host() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER
    SET search_path = pg_catalog AS $$
BEGIN
    PERFORM pg_notify((SELECT value FROM {s}.secrets WHERE key = 'host_channel'), '');
    RETURN NULL;
END $$;
REVOKE ALL ON FUNCTION {s}.wake_host() FROM PUBLIC;
CREATE TRIGGER wake_host AFTER INSERT ON {s}.commands
    FOR EACH STATEMENT EXECUTE FUNCTION {s}.wake_host();
CREATE SCHEMA {p};
REVOKE ALL ON SCHEMA {p} FROM PUBLIC;
CREATE VIEW {p}.me WITH (security_barrier) AS
    SELECT seat, channel FROM {s}.logins WHERE login = session_user;
CREATE VIEW {p}.meta WITH (security_barrier) AS SELECT key, value FROM {s}.meta;
CREATE VIEW {p}.seats WITH (security_barrier) AS
    SELECT pos, name, role,
           CASE WHEN name = {mine} THEN token_hash ELSE '' END AS token_hash,
           player, joined_at, last_nonce
    FROM {s}.seats;
CREATE VIEW {p}.events WITH (security_barrier) AS
    SELECT seq, kind, private, line FROM {s}.events WHERE NOT private;
CREATE VIEW {p}.state WITH (security_barrier) AS SELECT * FROM {s}.state;
CREATE VIEW {p}.commands WITH (security_barrier) AS
    SELECT * FROM {s}.commands WHERE seat = {mine}
    WITH CHECK OPTION;
"""


def new_host_channel() -> str:
    """A channel name nobody can guess."""
    return "rd_" + secrets.token_hex(16)


def login_sql(schema: str, login: Login) -> list[tuple[str, tuple[Any, ...]]]:
    """Statements (with parameters) that create `login` with exactly its rights."""
    s, p, name = f'"{schema}"', f'"{pub_schema(schema)}"', f'"{login.name}"'
    statements: list[tuple[str, tuple[Any, ...]]] = [
        (f"CREATE ROLE {name} LOGIN NOINHERIT CONNECTION LIMIT {CONNECTIONS_PER_LOGIN} "
         f"PASSWORD '{login.password}'", ()),
        (f"GRANT {name} TO current_user", ()),  # so the host may end its backends at the end
        *((f"ALTER ROLE {name} SET {key} = '{value}'", ()) for key, value in ROLE_SETTINGS.items()),
        (f"INSERT INTO {s}.logins (login, seat, channel) VALUES (%s, %s, %s)",
         (login.name, login.seat, login.channel)),
        (f"GRANT USAGE ON SCHEMA {p} TO {name}", ()),
        (f"GRANT SELECT ON {', '.join(f'{p}.{v}' for v in PUBLIC_VIEWS)} TO {name}", ()),
    ]
    if login.seat is not None:
        statements += [
            (f"GRANT INSERT ({SEAT_COLUMNS}) ON {p}.commands TO {name}", ()),
            (f"GRANT USAGE ON SEQUENCE {s}.commands_id_seq TO {name}", ()),
        ]
    return statements


def new_login(session: str, index: int | None, seat: str | None) -> Login:
    """A login for seat number `index` (None: the projector), with a random password."""
    suffix = "watch" if index is None else f"seat{index}"
    return Login(name=f"rd_{session}_{suffix}", password=secrets.token_urlsafe(18), seat=seat,
                 channel="rd_" + secrets.token_hex(16))


def login_address(dsn: str, login: Login) -> str:
    """The DSN with the login's user and password in place of the host's."""
    parts = urlsplit(dsn)
    where = parts.hostname or ""
    if ":" in where:
        where = f"[{where}]"
    if parts.port is not None:
        where += f":{parts.port}"
    netloc = f"{quote(login.name, safe='')}:{quote(login.password, safe='')}@{where}"
    return urlunsplit(parts._replace(netloc=netloc))
