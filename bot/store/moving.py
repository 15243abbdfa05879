"""Moving house: copy a SQLite store into PostgreSQL, in one transaction, and check every table's count.

The SQLite file is first brought to this studybot's schema (as a start would, the features' own
areas too), then read through a read-only connection; PostgreSQL gets the same schema steps
(`migrate`, and each area's) and must hold no studybot rows yet. Every table is copied with COPY,
its ids kept, its identity moved past them; before the commit each table's count is compared with
the file's. A copy that fails or is killed commits nothing, so running it again starts from the
same empty database.

What the file's processes held is not data, and none of them runs on the new database: their
heartbeats (`processes`) are not copied, and the timers they had claimed are copied unclaimed.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg

from bot.core.clock import SystemClock
from bot.core.errors import SetupError, StoreUnavailable
from bot.store import postgres_engine, sqlite_engine
from bot.store.areas import Area, bring_up_to_date
from bot.store.engine import POSTGRESQL, SQLITE
from bot.store.postgres_engine import PgConn, explain, redacted

COLUMNS = "SELECT column_name FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = ?"
SKIPPED = frozenset({"schema_version", "area_versions"})  # PostgreSQL keeps its own
NOT_COPIED = {"processes": "each process lists itself on the database it runs on"}  # table: why
RELEASED = {"timers": ("lease_until", "lease_owner")}  # a claim held by a process of the file: copied as NULL


@dataclass(frozen=True)
class Moved:
    """What was copied: rows per table, in copy order."""

    counts: dict[str, int]

    @property
    def rows(self) -> int:
        return sum(self.counts.values())


async def move(source: Path, url: str, areas: Sequence[Area[Any]] = ()) -> Moved:
    """Copy the studybot database `source` (a SQLite file, not in use) into the PostgreSQL database
    at `url`, with the features' own `areas`; SetupError or StoreUnavailable says in one line what stops it."""
    postgres_engine.readable(url, given_in="the --to URL")  # refused without quoting it
    if not source.is_file():
        raise SetupError(f"the database {source} does not exist; set STUDYBOT_DB to the SQLite file to move")
    if sqlite_engine.in_use(source):
        raise SetupError(f"a running studybot has {source} open; stop it first, then run migrate-db again")
    engine = await sqlite_engine.SqliteEngine.open(source, SystemClock())  # brought to this schema
    try:
        await engine.run(bring_up_to_date, SQLITE, areas)
    finally:
        await engine.close()
    try:
        with psycopg.connect(url, autocommit=True, connect_timeout=postgres_engine.CONNECT_TIMEOUT) as raw:
            target = PgConn(raw)
            postgres_engine.migrate(target)
            bring_up_to_date(target, POSTGRESQL, areas)
            with closing(sqlite_engine.read_only(source)) as file:
                return _copy(file, target, url)
    except psycopg.Error as exc:
        raise StoreUnavailable(explain(url, exc, given_in="the --to URL")) from exc


def _check_empty(target: PgConn, url: str, tables: list[str]) -> None:
    """The target has every table of the file (the schema steps made them), and no rows in any."""
    theirs = {r[0] for r in target.execute("SELECT tablename FROM pg_tables WHERE schemaname = current_schema()")}
    if missing := [t for t in tables if t not in theirs]:
        raise SetupError(f"{redacted(url)} has no table {missing[0]} after the schema steps; is it another "
                         "program's database? Give an empty one")
    for table in tables:
        if target.execute(f"SELECT EXISTS (SELECT 1 FROM {table})").fetchone()[0]:
            raise SetupError(f"{redacted(url)} already holds studybot data (table {table} has rows); migrate-db "
                             "copies into an empty database only: create one (createdb) and give its URL")


def _copy_table(file: sqlite3.Connection, target: PgConn, table: str) -> int:
    """Copy one table's rows (what RELEASED names as NULL), set its id sequence past them; the file's count."""
    columns = [r[1] for r in file.execute(f"PRAGMA table_info({table})")]
    known = {r[0] for r in target.execute(COLUMNS, (table,))}
    if unknown := [c for c in columns if c not in known]:
        raise SetupError(f"the file's table {table} has a column {unknown[0]!r} that this studybot's schema "
                         "lacks; give a database made by studybot")
    names = ", ".join(columns)
    read = ", ".join("NULL" if c in RELEASED.get(table, ()) else c for c in columns)
    with target.conn.cursor().copy(f"COPY {table} ({names}) FROM STDIN") as copy:
        for row in file.execute(f"SELECT {read} FROM {table}"):
            copy.write_row(row)
    sequence = target.execute("SELECT pg_get_serial_sequence(?, 'id')", (table,)).fetchone()[0] \
        if "id" in columns else None
    if sequence is not None:  # the next id PostgreSQL assigns comes after the copied ones
        target.execute(f"SELECT setval(?, COALESCE(MAX(id), 0) + 1, false) FROM {table}", (sequence,))
    return int(file.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0])


def _tables(file: sqlite3.Connection) -> list[str]:
    """The file's tables in creation order (a table is created after those it refers to)."""
    rows = file.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
                        " ORDER BY rowid").fetchall()
    return [r[0] for r in rows if r[0] not in SKIPPED]


def _copy(file: sqlite3.Connection, target: PgConn, url: str) -> Moved:
    tables = _tables(file)
    _check_empty(target, url, tables)
    counts: dict[str, int] = {}
    target.execute("BEGIN")
    try:
        for table in (t for t in tables if t not in NOT_COPIED):
            counts[table] = _copy_table(file, target, table)
        for table, expected in counts.items():
            found = target.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]
            if found != expected:
                raise StoreUnavailable(f"the copy of table {table} holds {found} rows, the file {expected}; nothing "
                                       "was committed: run migrate-db again")
        target.execute("COMMIT")
    except BaseException:
        if not target.conn.broken and not target.conn.closed:
            target.execute("ROLLBACK")
        raise
    return Moved(counts)
