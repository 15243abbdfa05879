"""The core schema's steps, in order: each store area owns the steps of its tables (its `SCHEMA`,
keyed by schema version; a feature's own tables are its `Area`'s, `bot.store.areas`); this runner
only gathers them by version, in an order where every table exists before another refers to it.
Both databases apply the same steps; the few words that differ are the dialect's (`Dialect.ddl`)."""

from __future__ import annotations

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
from bot.store.engine import Dialect

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
