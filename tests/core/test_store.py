"""The store: migrations, durability settings, and a clear error when it cannot open."""

import sqlite3
from pathlib import Path

import pytest

from bot.clock import FixedClock
from bot.store import SCHEMA_VERSION, Store, StoreUnavailable, migrate
from support import learner


async def test_a_file_of_the_first_schema_is_upgraded_and_keeps_its_rows(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    with sqlite3.connect(path, isolation_level=None) as c:
        migrate(c, target=1)
        c.execute("INSERT INTO learners (platform, cohort, user_id, last_seen) VALUES ('slack','T1','U1','x')")
    assert SCHEMA_VERSION > 1
    store = await Store.open(path, FixedClock())
    try:
        assert await store.find_learner(learner("U1")) == 1
        version = (await store._read("PRAGMA user_version"))[0][0]
        assert version == SCHEMA_VERSION
        columns = {r["name"] for r in await store._read("PRAGMA table_info(learners)")}
        assert "remind" in columns
    finally:
        await store.close()


async def test_wal_normal_and_foreign_keys(tmp_path: Path) -> None:
    store = await Store.open(tmp_path / "s.db", FixedClock())
    try:
        assert (await store._read("PRAGMA journal_mode"))[0][0] == "wal"
        assert (await store._read("PRAGMA synchronous"))[0][0] == 1  # NORMAL
        assert (await store._read("PRAGMA foreign_keys"))[0][0] == 1
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
