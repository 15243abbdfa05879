"""`studybot restore` on PostgreSQL refuses while any studybot process of that database is alive (it beat
within the last minute; the processes table lists every one, on every machine), as the SQLite restore
refuses a file a studybot holds: a restore under a live bot drops the tables it is answering from."""

from __future__ import annotations

import asyncio
import shutil

import psycopg
import pytest
from conftest import Run

from bot.core.clock import SystemClock
from bot.store import Store

pytestmark = pytest.mark.postgres


async def a_live_process(url: str) -> Store:
    """A store whose process has beat (as a running studybot's scheduler does), left open."""
    store = await Store.open(url, SystemClock())
    store.processes.platforms = "slack"
    await store.beat()
    return store


def learners(url: str) -> int:
    with psycopg.connect(url) as c:
        return int(c.execute("SELECT COUNT(*) FROM learners").fetchone()[0])


def test_restore_refuses_while_a_process_of_the_database_is_alive(studybot: Run, database: str, tmp_path) -> None:
    if shutil.which("pg_dump") is None or shutil.which("pg_restore") is None:
        pytest.skip("pg_dump and pg_restore are not installed")
    dump = tmp_path / "before.pg"
    code, out, err = studybot("backup", str(dump), STUDYBOT_DATABASE_URL=database)
    assert code == 0, err
    with psycopg.connect(database, autocommit=True) as c:  # answered after the backup
        c.execute("INSERT INTO learners (platform, cohort, user_id, display_name, last_seen)"
                  " VALUES ('slack', 'T1', 'U1', 'A', '2026-01-01')")

    store = asyncio.run(a_live_process(database))
    try:
        code, out, err = studybot("restore", str(dump), STUDYBOT_DATABASE_URL=database)
        assert (code, out) == (2, "")
        [line] = err.splitlines()
        assert line.startswith("studybot: cannot restore into postgresql://") and \
            "1 studybot process(es) run on it (" in line and "stop every one of them first" in line, line
        assert learners(database) == 1  # nothing was restored
    finally:
        asyncio.run(store.processes.leave())
        asyncio.run(store.close())

    code, out, err = studybot("restore", str(dump), STUDYBOT_DATABASE_URL=database)  # every process stopped
    assert code == 0 and out.startswith(f"restored {dump} to "), err
    assert learners(database) == 0
