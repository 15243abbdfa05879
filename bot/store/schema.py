"""The core schema's steps, in order: each store area owns the steps of its tables (its `SCHEMA`,
keyed by schema version; a feature's own tables are its `Area`'s, `bot.store.areas`); this runner
only gathers them by version, in an order where every table exists before another refers to it.
Both databases apply the same steps; the few words that differ are the dialect's (`Dialect.ddl`).

Every step is applied idempotently: a table or index that exists is not created again, a column that
exists is not added again (nor one that is gone dropped). So a database whose steps were numbered
otherwise by an older studybot (its version says a step ran that did not, or a later step's columns
are already there) is brought to this schema as well: `plan` adds each earlier step whose tables or
columns are missing to the steps after the database's version."""

from __future__ import annotations

import re

from bot.store import (
    answers,
    boards,
    cards,
    cohort_stats,
    installs,
    learners,
    processes,
    prompts,
    round_rows,
    teachbacks,
    timers,
)
from bot.store.engine import Conn, Dialect

AREAS = (learners, round_rows, prompts, answers, boards, teachbacks, cards, timers, cohort_stats, processes, installs)
SCHEMA_VERSION = max(version for area in AREAS for version in area.SCHEMA)


def statements(version: int, dialect: Dialect) -> list[str]:
    """The statements of one schema step, for one database."""
    found = []
    for area in AREAS:
        text = area.SCHEMA.get(version)
        if text:
            found += [s.strip() for s in dialect.ddl(text).split(";") if s.strip()]
    return found


_CREATE = re.compile(r"^CREATE\s+(UNIQUE\s+)?(TABLE|INDEX)\s+(?!IF\s+NOT\s+EXISTS)", re.I)
_CREATE_TABLE = re.compile(r"^CREATE\s+TABLE\s+(?:IF\s+NOT\s+EXISTS\s+)?(\w+)", re.I)
_DROP_TABLE = re.compile(r"^DROP\s+TABLE\s+(?:IF\s+EXISTS\s+)?(\w+)", re.I)
_ADD_COLUMN = re.compile(r"^ALTER\s+TABLE\s+(\w+)\s+ADD\s+COLUMN\s+(\w+)", re.I)
_DROP_COLUMN = re.compile(r"^ALTER\s+TABLE\s+(\w+)\s+DROP\s+COLUMN\s+(\w+)", re.I)


def _columns(c: Conn, dialect: Dialect, table: str) -> set[str]:
    return {r[0] for r in c.execute(dialect.columns_sql, (table,)).fetchall()}


def _tables(c: Conn, dialect: Dialect) -> set[str]:
    return {r[0] for r in c.execute(dialect.tables_sql).fetchall()}


def apply(c: Conn, version: int, dialect: Dialect) -> None:
    """Run one step's statements, each skipped when what it makes is already there."""
    for statement in statements(version, dialect):
        run_idempotently(c, dialect, statement)


def run_idempotently(c: Conn, dialect: Dialect, statement: str) -> None:
    """One schema statement, skipped when what it makes is already there (or what it drops is gone)."""
    if (added := _ADD_COLUMN.match(statement)) and added[2] in _columns(c, dialect, added[1]):
        return
    if (dropped := _DROP_COLUMN.match(statement)) and dropped[2] not in _columns(c, dialect, dropped[1]):
        return
    statement = _CREATE.sub(lambda m: m.group(0) + "IF NOT EXISTS ", statement, count=1)
    statement = re.sub(r"^DROP\s+TABLE\s+(?!IF\s+EXISTS)", "DROP TABLE IF EXISTS ", statement, count=1, flags=re.I)
    c.execute(statement)


def _made_by(dialect: Dialect, upto: int) -> tuple[dict[str, int], dict[tuple[str, str], int]]:
    """Which step makes each table, and each column added to a table, that the steps up to `upto` leave."""
    tables: dict[str, int] = {}
    columns: dict[tuple[str, str], int] = {}
    for version in range(1, upto + 1):
        for statement in statements(version, dialect):
            if made := _CREATE_TABLE.match(statement):
                tables[made[1]] = version
            elif gone := _DROP_TABLE.match(statement):
                tables.pop(gone[1], None)
                columns = {key: v for key, v in columns.items() if key[0] != gone[1]}
            elif added := _ADD_COLUMN.match(statement):
                columns[(added[1], added[2])] = version
            elif dropped := _DROP_COLUMN.match(statement):
                columns.pop((dropped[1], dropped[2]), None)
    return tables, columns


def plan(c: Conn, dialect: Dialect, version: int, target: int) -> list[int]:
    """The steps to apply to a database at `version`: each earlier step whose tables or columns are
    missing (an older studybot numbered it otherwise), then every step after `version` up to `target`."""
    tables, columns = _made_by(dialect, min(version, target))
    present = _tables(c, dialect)
    missing = {step for table, step in tables.items() if table not in present}
    for (table, column), step in columns.items():
        if table in present and column not in _columns(c, dialect, table):
            missing.add(step)
    return sorted(missing) + list(range(version + 1, target + 1))

