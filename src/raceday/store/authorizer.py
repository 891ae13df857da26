"""The SQLite authorizer that keeps a role inside the world and inside its rights.

An allow-list: every action SQLite reports is checked here at prepare time (and at run time
for the statements SQLite prepares internally, such as VACUUM's ATTACH), and anything not
named below is denied. Each denial is recorded as one clear sentence, because SQLite itself
only says "not authorized"; the store shows the first one to the player.

What the measurements in reference/sql-safety.md taught, and this code relies on:
- the 5th argument names the trigger *or view or CTE* an action comes from, so it is never
  trusted for reads (`WITH trg AS (SELECT * FROM secret) ...` spoofs it); for writes it is
  trusted only when it names a real trigger of the world (CTEs and views cannot write);
- VACUUM and VACUUM INTO only show up as an ATTACH (run time), and ATTACH is denied;
- the first use of an eponymous virtual table (`pragma_table_info`) updates sqlite_master
  internally with no source: that UPDATE must pass;
- printf/format can burn seconds inside one opcode that no progress handler can stop;
- `INSERT OR REPLACE` / `UPDATE OR REPLACE` delete conflicting rows with no DELETE callback.
  Rights here are per table and writing a table includes deleting from it, so a REPLACE
  deletes nothing the role could not delete itself: accepted, no TEMP triggers needed.

Rights follow the object, not the name (docs/exercise-format.md, "Rights and the schema"):
- changing a table of the world's schema (DROP, ALTER, CREATE INDEX or TRIGGER on it) is
  writing it: the role must be allowed to write it (a break-glass right counts, and is
  marked);
- a table of the world keeps its name: `ALTER TABLE ... RENAME TO` is refused for it (SQLite
  reports the rename as a call of `sqlite_rename_table`, after the ALTER names the table);
  a table made during play may be renamed, also to a name the world's table left free when
  it was dropped, and then it is guarded as that table;
- a trigger made during play acts for the role that made it: its writes need that role's
  write right, and its reads need that role's read right as well as the right of the role
  whose statement fired it (the source argument names the trigger, or a CTE spoofing its
  name: requiring both rights means a spoof can only narrow, never widen).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping
from dataclasses import dataclass, field

from raceday.store.protocol import RoleRights

# Tables whose names start with this belong to raceday, not to the world.
RESERVED_PREFIX = "_raceday"

READ_ONLY_PRAGMAS = frozenset(
    {
        "table_info",
        "table_xinfo",
        "index_list",
        "index_info",
        "index_xinfo",
        "foreign_key_list",
        "foreign_key_check",
        "table_list",
    }
)
FORBIDDEN_FUNCTIONS = frozenset(
    {"load_extension", "fts3_tokenizer", "readfile", "writefile", "edit", "printf", "format"}
)
UNINTERRUPTIBLE_FUNCTIONS = frozenset({"printf", "format"})
FORBIDDEN_VTABLES = frozenset({"dbstat", "sqlite_dbpage", "sqlite_stmt"})
READABLE_SYSTEM_TABLES = frozenset(
    {"sqlite_master", "sqlite_schema", "sqlite_sequence", "sqlite_stat1", "sqlite_stat4"}
)
SCHEMA_TABLES = frozenset({"sqlite_master", "sqlite_schema"})
TEMP_SCHEMA_TABLES = frozenset({"sqlite_temp_master", "sqlite_temp_schema"})

_OK = sqlite3.SQLITE_OK
_DENY = sqlite3.SQLITE_DENY
# The actions every statement reports, most of them per column: checked first, by constant.
_READ_ACTION = sqlite3.SQLITE_READ
_SELECT_ACTIONS = frozenset({sqlite3.SQLITE_SELECT, sqlite3.SQLITE_RECURSIVE})
_FUNCTION_ACTION = sqlite3.SQLITE_FUNCTION

_CREATE = {
    sqlite3.SQLITE_CREATE_TABLE,
    sqlite3.SQLITE_CREATE_INDEX,
    sqlite3.SQLITE_CREATE_TRIGGER,
    sqlite3.SQLITE_CREATE_VIEW,
}
_DROP = {
    sqlite3.SQLITE_DROP_TABLE,
    sqlite3.SQLITE_DROP_INDEX,
    sqlite3.SQLITE_DROP_TRIGGER,
    sqlite3.SQLITE_DROP_VIEW,
}
_TEMP_DDL = {
    sqlite3.SQLITE_CREATE_TEMP_TABLE,
    sqlite3.SQLITE_CREATE_TEMP_INDEX,
    sqlite3.SQLITE_CREATE_TEMP_TRIGGER,
    sqlite3.SQLITE_CREATE_TEMP_VIEW,
    sqlite3.SQLITE_DROP_TEMP_TABLE,
    sqlite3.SQLITE_DROP_TEMP_INDEX,
    sqlite3.SQLITE_DROP_TEMP_TRIGGER,
    sqlite3.SQLITE_DROP_TEMP_VIEW,
}
_WRITES = {sqlite3.SQLITE_INSERT, sqlite3.SQLITE_UPDATE, sqlite3.SQLITE_DELETE}
# DDL that changes a table: which argument names it (0: the object's name, 1: its table).
_TABLE_OF = {
    sqlite3.SQLITE_DROP_TABLE: 0,
    sqlite3.SQLITE_ALTER_TABLE: 0,
    sqlite3.SQLITE_CREATE_INDEX: 1,
    sqlite3.SQLITE_DROP_INDEX: 1,
    sqlite3.SQLITE_CREATE_TRIGGER: 1,
    sqlite3.SQLITE_DROP_TRIGGER: 1,
}


@dataclass
class WorldNames:
    """What the authorizers must know about the world; the store refreshes it after DDL.

    Keys are lower case (SQLite names are case-insensitive); values are the declared names.
    `original` are the tables and views of the world as first built: only they are guarded
    by role rights; tables created during play (a lease, a fencing token) are open to all.
    """

    original: frozenset[str] = frozenset()
    tables: dict[str, str] = field(default_factory=dict)
    views: frozenset[str] = frozenset()
    triggers: frozenset[str] = frozenset()
    trigger_owners: dict[str, str] = field(default_factory=dict)
    """Triggers made during play (lower case) and the role that made each."""


@dataclass
class StatementContext:
    """What the authorizer saw while one statement was prepared and run."""

    first_keyword: str = ""
    called: frozenset[str] = frozenset()
    denials: list[str] = field(default_factory=list)
    writes: list[str] = field(default_factory=list)
    target: str | None = None
    ddl: bool = False
    alter: bool = False
    dropping: str | None = None
    altering: str | None = None
    """The table an ALTER TABLE names (lower case)."""
    created_trigger: str | None = None
    """The trigger a CREATE TRIGGER makes (lower case): the store records its maker."""
    break_glass: list[str] = field(default_factory=list)
    """World tables changed under a break-glass right (the role's, or a trigger maker's)."""
    made_writes: list[tuple[str, str]] = field(default_factory=list)
    """(trigger, table) for each table a trigger made during play may write in this statement:
    the team's object writing inside whoever's statement fired it (the automation's too)."""
    reads: dict[tuple[str | None, str | None, bool, str | None], str | None] = field(default_factory=dict)
    """Decisions on reads so far, by (table, database, alter, trigger maker): SQLite asks
    once per column."""
    prepared: bool = False
    """SQLite asked about this statement: it was prepared (or prepared again), not taken
    as it was from the connection's statement cache (the store then keeps this record)."""

    def reused(self) -> StatementContext:
        """This record for a run of the same statement taken from the statement cache: what
        was decided when it was prepared, in containers of its own (no denial: a statement
        SQLite refused to prepare is not in the cache)."""
        return StatementContext(
            first_keyword=self.first_keyword, called=self.called, writes=list(self.writes),
            target=self.target, ddl=self.ddl, alter=self.alter, dropping=self.dropping,
            altering=self.altering, created_trigger=self.created_trigger,
            break_glass=list(self.break_glass), made_writes=list(self.made_writes),
            reads=dict(self.reads))


class Authorizer:
    """The callback for one role's connection (`conn.set_authorizer(Authorizer(...))`).

    `internal` lets raceday's own statements on the role's connection through (the probe's
    SAVEPOINT and ROLLBACK, the names the store re-reads). The connection has a statement
    cache, and SQLite asks the authorizer only when it prepares a statement, so the store
    expires every prepared statement of the connection (`set_authorizer` again) after each
    use of `internal` and whenever the names change: a statement is reused unchecked only
    while its answer here cannot have changed (same text, same role, same names, and no
    other state: everything else recorded is the statement's own, see `begin`).
    """

    def __init__(self, role: RoleRights, names: WorldNames,
                 roles: Mapping[str, RoleRights] | None = None) -> None:
        self.role = role
        self.names = names
        self.roles: Mapping[str, RoleRights] = roles if roles is not None else {role.id: role}
        self.context = StatementContext()
        self.internal = False

    def begin(self, first_keyword: str = "", called: frozenset[str] = frozenset()) -> None:
        """Start recording for a new statement."""
        self.context = StatementContext(first_keyword=first_keyword, called=called)

    def __call__(
        self, action: int, arg1: str | None, arg2: str | None, db: str | None, source: str | None
    ) -> int:
        if self.internal:
            return _OK
        self.context.prepared = True
        try:
            if action == _READ_ACTION:
                # A read's verdict depends only on these within one statement (the names
                # and the role do not change while it is prepared).
                reads = self.context.reads
                maker = self.names.trigger_owners.get(source.lower()) if source else None
                key = (arg1, db, self.context.alter, maker)
                if key in reads:
                    reason = reads[key]
                else:
                    reason = reads[key] = self._read(arg1, db) or self._maker_read(arg1, source, maker)
            else:
                reason = self._check(action, arg1, arg2, db, source)
        except Exception as exc:  # a raising authorizer denies anyway; say why
            reason = f"the sandbox could not check this statement ({type(exc).__name__})"
        if reason is None:
            return _OK
        self.context.denials.append(reason)
        return _DENY

    # -- the rules ------------------------------------------------------------------------

    def _check(
        self, action: int, arg1: str | None, arg2: str | None, db: str | None, source: str | None
    ) -> str | None:
        if action in _SELECT_ACTIONS:
            return None
        if action == _READ_ACTION:
            return self._read(arg1, db)
        if action in _WRITES:
            return self._write(action, arg1 or "", db, source)
        if action == _FUNCTION_ACTION:
            return self._function((arg2 or "").lower())
        if action == sqlite3.SQLITE_PRAGMA:
            return self._pragma((arg1 or "").lower(), db)
        if action in _CREATE or action in _DROP:
            return self._ddl(action, arg1 or "", arg2, db)
        if action == sqlite3.SQLITE_ALTER_TABLE:
            # arguments: database, table
            return self._ddl(action, arg2 or "", arg2, arg1)
        if action == sqlite3.SQLITE_REINDEX:
            # CREATE INDEX reports a REINDEX of the new index.
            if self.role.schema and db in (None, "main"):
                return None
            return self._no_schema()
        if action in _TEMP_DDL:
            return "TEMP objects are not allowed (the temp database is off limits)"
        if action in (sqlite3.SQLITE_CREATE_VTABLE, sqlite3.SQLITE_DROP_VTABLE):
            return "virtual tables are not allowed"
        if action == sqlite3.SQLITE_ATTACH:
            if self.context.first_keyword == "VACUUM":
                return "VACUUM is not allowed"
            return "ATTACH is not allowed"
        if action == sqlite3.SQLITE_DETACH:
            return "DETACH is not allowed"
        if action == sqlite3.SQLITE_TRANSACTION:
            return (
                f"{(arg1 or 'BEGIN').upper()} is not allowed: raceday runs each statement "
                "in its own transaction"
            )
        if action == sqlite3.SQLITE_SAVEPOINT:
            verb = "SAVEPOINT" if (arg1 or "").upper() == "BEGIN" else (arg1 or "").upper()
            return f"{verb} is not allowed: raceday runs each statement in its own transaction"
        if action == sqlite3.SQLITE_ANALYZE:
            return "ANALYZE is not allowed"
        return f"this operation is not allowed (SQLite action {action})"

    def _maker_read(self, table: str | None, source: str | None, maker: str | None) -> str | None:
        """A trigger made during play reads only what its maker may read, too."""
        if maker is None or table is None:
            return None
        role = self.roles.get(maker)
        if role is None:
            return f"trigger {source} was made by role {maker}, which is not in this session"
        if self._may_read(role, table):
            return None
        return f"trigger {source} (made by role {maker}) may not read table {self._declared(table)}"

    def _declared(self, table: str) -> str:
        return self.names.tables.get(table.lower(), table)

    def _guarded(self, table: str) -> bool:
        """A table or view of the world as first built: role rights apply to it."""
        return table.lower() in self.names.original

    def _may_read(self, role: RoleRights, table: str) -> bool:
        if not self._guarded(table) or table.lower() in self.names.views:
            return True  # a view's rows are checked as reads of its tables
        return role.may_read(self._declared(table)) or role.may_read(table.lower())

    def _write_right(self, role: RoleRights, table: str) -> str | None:
        """'write', 'break_glass' or None: how `role` may write `table` (not the world's: 'write')."""
        if not self._guarded(table):
            return "write"
        names = {self._declared(table), table.lower()}
        if "*" in role.write or names & set(role.write):
            return "write"
        if names & set(role.break_glass):
            return "break_glass"
        return None

    def _changed(self, role: RoleRights, table: str) -> str | None:
        """Check that `role` may change `table`; note a break-glass change. None when allowed."""
        right = self._write_right(role, table)
        if right is None:
            return f"role {role.id} may not write table {self._declared(table)}"
        if right == "break_glass":
            declared = self._declared(table)
            if declared not in self.context.break_glass:
                self.context.break_glass.append(declared)
        return None

    def _read(self, table: str | None, db: str | None) -> str | None:
        if table is None:
            return None
        name = table.lower()
        if db not in (None, "main"):
            if self.context.alter and name in TEMP_SCHEMA_TABLES:
                return None  # ALTER TABLE rewrites any temp triggers too (there are none)
            return _off_limits(db)
        if name.startswith(RESERVED_PREFIX):
            return f"table {table} is internal to raceday"
        if name in FORBIDDEN_VTABLES:
            return f"{table} is not allowed"
        if name.startswith("sqlite_"):
            return None if name in READABLE_SYSTEM_TABLES else f"table {table} may not be read"
        declared = self.names.tables.get(name)
        if name in self.names.views:
            # SQLite reports a view's rows as a read of the view when it cannot flatten it,
            # and reads of the view's tables always: those are what rights are checked on.
            return None
        if declared is None or name not in self.names.original:
            # A CTE, a subquery, an eponymous table-valued function, or a table created
            # during play. The source argument is never consulted: a CTE can fake it.
            return None
        if self.role.may_read(declared) or self.role.may_read(name):
            return None
        return f"role {self.role.id} may not read table {declared}"

    def _write(self, action: int, table: str, db: str | None, source: str | None) -> str | None:
        name = table.lower()
        ctx = self.context
        if db != "main":
            if ctx.alter and db == "temp" and name in TEMP_SCHEMA_TABLES:
                return None  # ALTER TABLE rewrites temp triggers too (no role can make any)
            return _off_limits(db)
        if name.startswith(RESERVED_PREFIX):
            return f"table {table} is internal to raceday"
        if name in SCHEMA_TABLES:
            if self.role.schema:
                # DDL writes the schema table; a direct UPDATE of it is still refused by
                # SQLite itself, since writable_schema is OFF and no role may turn it on.
                return None
            if action == sqlite3.SQLITE_UPDATE and source is None:
                # Internal: the first use of pragma_table_info and friends. A player's own
                # UPDATE of sqlite_master is refused by SQLite (writable_schema is OFF).
                return None
            return self._no_schema()
        if name.startswith("sqlite_"):
            if ctx.ddl and self.role.schema:
                return None  # DROP/ALTER TABLE keep sqlite_sequence in step
            return f"table {table} may not be written"
        if ctx.dropping == name and action == sqlite3.SQLITE_DELETE:
            return None  # DROP TABLE empties the table first; the DROP itself was checked
        if source is not None:
            maker = self.names.trigger_owners.get(source.lower())
            if maker is not None:
                # A trigger made during play writes for the role that made it.
                role = self.roles.get(maker)
                if role is None:
                    return f"trigger {source} was made by role {maker}, which is not in this session"
                refusal = self._changed(role, table)
                if refusal is not None:
                    declared = self._declared(table)
                    return f"trigger {source} (made by role {maker}) may not write table {declared}"
                self._wrote(table)
                made = (source.lower(), table.lower())
                if made not in ctx.made_writes:
                    ctx.made_writes.append(made)
                return None
            if source.lower() in self.names.triggers:
                # A trigger of the world runs with the statement that fires it; CTEs and
                # views cannot write, so no spoof here.
                self._wrote(table)
                return None
            return f"role {self.role.id} may not write table {table}"
        if ctx.target is None:
            ctx.target = name
        elif name != ctx.target and action in (sqlite3.SQLITE_DELETE, sqlite3.SQLITE_UPDATE):
            # A second table written by the same statement with no trigger as source is a
            # foreign-key action (ON DELETE CASCADE, SET NULL): the schema's rule, like a
            # trigger's. A single statement cannot name two tables to write.
            self._wrote(table)
            return None
        refusal = self._changed(self.role, table)
        if refusal is None:
            self._wrote(table)
        return refusal

    def _function(self, name: str) -> str | None:
        altering = self.context.altering
        if name == "sqlite_rename_table" and altering is not None and self._guarded(altering):
            declared = self._declared(altering)
            return (
                f"table {declared} belongs to the world and keeps its name (its rights go with it); "
                f"to rebuild it, create a new table, copy the rows, DROP {declared} and rename the new one"
            )
        if name in UNINTERRUPTIBLE_FUNCTIONS:
            if self.context.alter and not (self.context.called & UNINTERRUPTIBLE_FUNCTIONS):
                return None  # SQLite's own rewrite of the CREATE TABLE text uses printf
            return f"function {name} is not allowed (it cannot be interrupted); build text with || instead"
        if name in FORBIDDEN_FUNCTIONS:
            return f"function {name} is not allowed"
        return None

    def _pragma(self, name: str, db: str | None) -> str | None:
        if self.context.alter and name == "quick_check":
            return None  # ADD COLUMN with a CHECK tests the rows already there
        if db not in (None, "main"):
            return _off_limits(db)
        if name in READ_ONLY_PRAGMAS:
            return None
        return (
            f"PRAGMA {name} is not allowed (only read-only ones: "
            + ", ".join(sorted(READ_ONLY_PRAGMAS))
            + ")"
        )

    def _ddl(self, action: int, name: str, table: str | None, db: str | None) -> str | None:
        ctx = self.context
        if not self.role.schema:
            return self._no_schema()
        if db not in (None, "main"):
            return _off_limits(db)
        for each in (name, table):
            if each and each.lower().startswith(RESERVED_PREFIX):
                return f"table {each} is internal to raceday"
        forbidden = sorted(ctx.called & UNINTERRUPTIBLE_FUNCTIONS)
        if forbidden:
            # SQLite stores some expressions of a DDL statement without showing them to
            # the authorizer (column DEFAULTs, ADD COLUMN checks): refuse on the text.
            return (
                f"function {forbidden[0]} is not allowed (it cannot be interrupted), "
                "not even inside the schema"
            )
        # Changing a table of the world is writing it (the object's rights, not the name's).
        changed = _TABLE_OF.get(action)
        if changed is not None:
            target = name if changed == 0 else table
            if target:
                refusal = self._changed(self.role, target)
                if refusal is not None:
                    return f"{refusal}, so it may not change its schema either"
        ctx.ddl = True
        if action == sqlite3.SQLITE_ALTER_TABLE:
            ctx.alter = True
            ctx.altering = name.lower()
        if action == sqlite3.SQLITE_CREATE_TRIGGER:
            ctx.created_trigger = name.lower()
        if action in (sqlite3.SQLITE_DROP_TABLE, sqlite3.SQLITE_DROP_VIEW):
            ctx.dropping = name.lower()
        return None

    def _no_schema(self) -> str:
        return f"role {self.role.id} may not change the schema"

    def _wrote(self, table: str) -> None:
        if table not in self.context.writes:
            self.context.writes.append(table)


def _off_limits(db: str | None) -> str:
    if db == "temp":
        return "the temp database is off limits (TEMP objects are not allowed)"
    return f"database {db} is off limits: only the world (main) may be used"
