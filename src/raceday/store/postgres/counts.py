"""The server's own counts, per world table, of the rows this backend wrote and the scans it
made (its pending statistics, not per transaction): read before and after a statement, their
differences name the tables it wrote and read, triggers' and views' included, and the row
for the catalogs tells a schema change whatever the statement's keyword said.

Found by the schema's name once (`COUNTS_BY_NAME`), then asked by oid (`counts_by_oid`):
the view pg_stat_xact_user_tables, or a scan of pg_class and pg_index, costs the server more
than the counts themselves, twice for each statement.
"""

from __future__ import annotations

from collections.abc import Sequence

from raceday.store.postgres.world import literal
from raceday.store.results import Row

_WRITTEN = ("pg_catalog.pg_stat_get_xact_tuples_inserted({0}) "
            "+ pg_catalog.pg_stat_get_xact_tuples_updated({0}) "
            "+ pg_catalog.pg_stat_get_xact_tuples_deleted({0})")
CATALOG_ROW = (f"SELECT 0::oid, '', sum({_WRITTEN.format('k')}), 0, NULL::oid[] "
               "FROM pg_catalog.unnest("
               "'{1259,1249,1255,1247,2618,2620,3256,2608,2606,2615,2610,2604,2611}'::oid[]) k")
"""The rows this backend wrote to the catalogs a query's answer and tables rest on (pg_class,
pg_attribute, pg_proc, pg_type, pg_rewrite, pg_trigger, pg_policy, pg_depend, pg_constraint,
pg_namespace, pg_index, pg_attrdef, pg_inherits: their fixed oids), named '' (no table can
be): DDL, a TRUNCATE (a table's new file), a function doing either."""
COUNTS_BY_NAME = (f"SELECT t.oid, t.relname, {_WRITTEN.format('t.oid')}, "
                  "pg_catalog.pg_stat_get_xact_numscans(t.oid) + coalesce((SELECT "
                  "sum(pg_catalog.pg_stat_get_xact_numscans(i.indexrelid)) "
                  "FROM pg_catalog.pg_index i WHERE i.indrelid = t.oid), 0), "
                  "ARRAY(SELECT i.indexrelid FROM pg_catalog.pg_index i WHERE i.indrelid = t.oid) "
                  "FROM pg_catalog.pg_class t "
                  "JOIN pg_catalog.pg_namespace n ON n.oid = t.relnamespace "
                  "WHERE n.nspname = %s AND t.relkind IN ('r', 't', 'm', 'p') "
                  f"UNION ALL {CATALOG_ROW}")
"""Each world table's oid, name, rows written and scans (its indexes' too), and its indexes'
oids; found by the schema's name."""


def counts_by_oid(found: Sequence[Row]) -> str:
    """`COUNTS_BY_NAME`'s counts for the tables and indexes it found (`found`), written out
    by oid: no values to send, the same text each time (psycopg prepares it once a connection
    has used it a few times); `%` doubled, as psycopg reads it as a placeholder."""
    rows = []
    for oid, name, _written, _scans, indexes in found:
        if not name:
            continue
        scans = " + ".join(f"pg_catalog.pg_stat_get_xact_numscans({int(o)})"
                           for o in (oid, *(indexes or ())))
        rows.append(f"({int(oid)}::oid, {literal(str(name)).replace('%', '%%')}, {scans})")
    if not rows:
        return CATALOG_ROW
    return (f"SELECT v.oid, v.relname, {_WRITTEN.format('v.oid')}, v.scans, NULL::oid[] "
            f"FROM (VALUES {', '.join(rows)}) AS v(oid, relname, scans) UNION ALL {CATALOG_ROW}")


def tallies(found: Sequence[Row]) -> tuple[dict[str, int], dict[str, int]]:
    """The counts' rows as rows written per table (the catalogs' under '') and scans per
    world table."""
    return ({str(r[1]): int(r[2] or 0) for r in found},
            {str(r[1]): int(r[3]) for r in found if r[1]})
