"""A feature's own tables, declared in the feature's folder beside its handlers: the area's name, its
schema steps (numbered by the area itself, from 1) and the class that reads and writes them.

    AREA = Area("streaks", {1: "CREATE TABLE streaks (...)"}, Streaks)
    FEATURE = Feature("streaks", ..., storage=(AREA,))      # handlers use ctx.store.area(AREA)

The store applies each area's steps after the core schema, once per database, each step in its own
transaction, and records how far each area has come in `area_versions`: a feature added later, or
one that gains a step, is brought up to date at the next start, on SQLite and PostgreSQL alike."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from bot.store.engine import Conn, Dialect, Engine
from bot.store.schema import run_idempotently

A = TypeVar("A")
LOCK = "feature schema"  # held while a process brings the features' areas up to date
_VERSIONS = "CREATE TABLE IF NOT EXISTS area_versions (area TEXT PRIMARY KEY, version INTEGER NOT NULL)"


@dataclass(frozen=True)
class Area(Generic[A]):
    """One feature's tables: `make` builds what its handlers call, on the store's engine."""

    name: str
    schema: Mapping[int, str]  # step number: statements separated by ";" ({serial} as in the core schema)
    make: Callable[[Engine], A]


def bring_up_to_date(c: Conn, dialect: Dialect, areas: Sequence[Area]) -> None:
    """Apply each area's steps after the one it last recorded, each with its record in one transaction."""
    c.execute(_VERSIONS)
    for area in areas:
        row = c.execute("SELECT version FROM area_versions WHERE area = ?", (area.name,)).fetchone()
        done = int(row[0]) if row else 0
        for number in sorted(n for n in area.schema if n > done):
            c.execute("BEGIN")
            try:
                for statement in (s.strip() for s in dialect.ddl(area.schema[number]).split(";")):
                    if statement:  # idempotent as the core's steps are: a step cut short, or made by hand, is no error
                        run_idempotently(c, dialect, statement)
                c.execute("INSERT INTO area_versions (area, version) VALUES (?, ?) ON CONFLICT (area)"
                          " DO UPDATE SET version = excluded.version", (area.name, number))
                c.execute("COMMIT")
            except BaseException:
                c.execute("ROLLBACK")
                raise
