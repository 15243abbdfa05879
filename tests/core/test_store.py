"""The store: migrations, durability settings, and a clear error when it cannot open."""

import sqlite3
from pathlib import Path

import pytest

from bot.core.clock import FixedClock
from bot.core.errors import StoreUnavailable
from bot.core.messages import Cohort
from bot.store import Store
from bot.store.schema import SCHEMA_VERSION
from bot.store.sqlite_engine import migrate


async def test_a_file_of_the_first_schema_is_upgraded_and_keeps_its_rows(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    with sqlite3.connect(path, isolation_level=None) as c:
        migrate(c, target=1)
        c.execute("INSERT INTO learners (platform, cohort, user_id, last_seen) VALUES ('slack','T1','U1','x')")
    assert SCHEMA_VERSION > 1
    store = await Store.open(path, FixedClock())
    try:
        assert [a.user_id for a in await store.learners.of_cohort(Cohort("slack", "T1"))] == ["U1"]
        version = (await store.engine.read("PRAGMA user_version"))[0][0]
        assert version == SCHEMA_VERSION
        columns = {r["name"] for r in await store.engine.read("PRAGMA table_info(learners)")}
        assert "remind" in columns
    finally:
        await store.close()


async def test_wal_normal_and_foreign_keys(tmp_path: Path) -> None:
    store = await Store.open(tmp_path / "s.db", FixedClock())
    try:
        assert (await store.engine.read("PRAGMA journal_mode"))[0][0] == "wal"
        assert (await store.engine.read("PRAGMA synchronous"))[0][0] == 1  # NORMAL
        assert (await store.engine.read("PRAGMA foreign_keys"))[0][0] == 1
    finally:
        await store.close()


async def test_missing_folder_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(StoreUnavailable, match="does not exist"):
        await Store.open(tmp_path / "nope" / "s.db", FixedClock())


async def test_a_newer_schema_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "new.db"
    with sqlite3.connect(path) as c:
        c.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    with pytest.raises(StoreUnavailable, match="newer"):
        await Store.open(path, FixedClock())


async def test_weekly_post_timers_learn_their_platform_on_upgrade(tmp_path: Path) -> None:
    """Schema 3: a weekly-post timer keyed by a bare cohort id takes the platform its learners are on;
    one whose cohort nobody used is dropped (start-up arms it again from the settings)."""
    path = tmp_path / "v2.db"
    with sqlite3.connect(path, isolation_level=None) as c:
        migrate(c, target=2)
        c.execute("INSERT INTO learners (platform, cohort, user_id, last_seen) VALUES ('discord','123','U1','x')")
        c.execute("INSERT INTO timers (key, due_at) VALUES ('leaderboard:123', '2026-12-07'),"
                  " ('leaderboard:T9', '2026-12-07'), ('round:1:0', '2026-12-01')")
    store = await Store.open(path, FixedClock())
    try:
        rows = await store.engine.read("SELECT key FROM timers ORDER BY key")
        assert [r["key"] for r in rows] == ["leaderboard:discord:123", "round:1:0"]
        columns = {r["name"] for r in await store.engine.read("PRAGMA table_info(timers)")}
        assert "data" not in columns and {"key", "due_at"} <= columns
    finally:
        await store.close()
