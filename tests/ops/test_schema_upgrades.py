"""Schema upgrades are idempotent, and `studybot check` runs what `studybot run` runs: a database made by an
older commit (its disputes step, with the `instructor_graded` columns, numbered 9 before the installs'
step took that number) is upgraded by `run` on both engines, and `check` says so; an upgrade that would
fail at `run` fails at `check` first, in one line."""

from __future__ import annotations

import asyncio
import sqlite3
import sys
from contextlib import closing
from pathlib import Path

import psycopg
import pytest
from pg import PgServer
from test_run_signals import HERE, environment, until

from bot.store import schema
from bot.store.engine import POSTGRESQL, SQLITE
from bot.store.postgres_engine import FUNCTIONS

OLD_STEPS = (*range(1, 9), 10)  # what the older commit's schema 9 held: today's steps 1 to 8, then its disputes step


def old_sqlite(path: Path, steps: tuple[int, ...] = OLD_STEPS, version: int = 9) -> None:
    with closing(sqlite3.connect(path, isolation_level=None)) as c:
        for step in steps:
            for statement in schema.statements(step, SQLITE):
                c.execute(statement)
        c.execute(f"PRAGMA user_version = {version}")


def old_postgres(url: str) -> None:
    with psycopg.connect(url, autocommit=True) as c:
        c.execute("CREATE TABLE schema_version (version INTEGER PRIMARY KEY, applied_at TEXT)")
        c.execute(FUNCTIONS)
        for step in OLD_STEPS:
            for statement in schema.statements(step, POSTGRESQL):
                c.execute(statement)
        for version in range(1, 10):
            c.execute("INSERT INTO schema_version (version) VALUES (%s)", (version,))


async def studybot(tmp_path: Path, *argv: str, **extra: str) -> tuple[int, str]:
    proc = await asyncio.create_subprocess_exec(sys.executable, str(HERE / "fake_platform.py"), *argv, cwd=tmp_path,
                                                env=environment(tmp_path, **extra), stdin=asyncio.subprocess.DEVNULL,
                                                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT)
    out, _ = await asyncio.wait_for(proc.communicate(), 60)
    return proc.returncode or 0, out.decode()


async def serves(tmp_path: Path, **extra: str) -> None:
    """`studybot run` gets to serving (the schema upgraded), then stops cleanly."""
    log = tmp_path / "run.log"
    with log.open("wb") as out:
        proc = await asyncio.create_subprocess_exec(sys.executable, str(HERE / "fake_platform.py"), "run",
                                                    cwd=tmp_path, env=environment(tmp_path, FAKE_PLATFORM="serve",
                                                                                  **extra),
                                                    stdin=asyncio.subprocess.DEVNULL, stdout=out, stderr=out)
    await until(lambda: "studybot is running" in log.read_text(), "serving on the upgraded database", proc, log)
    proc.terminate()
    assert await asyncio.wait_for(proc.wait(), 20) == 0


async def test_an_older_commits_sqlite_database_is_upgraded_and_check_says_so(tmp_path: Path) -> None:
    old_sqlite(tmp_path / "bot.db")
    code, out = await studybot(tmp_path, "check")
    assert code == 0 and f"(schema 9, upgraded to {schema.SCHEMA_VERSION} at start" in out, out
    await serves(tmp_path)
    with closing(sqlite3.connect(tmp_path / "bot.db")) as c:
        tables = {r[0] for r in c.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        assert {"installs", "oauth_states", "disputes"} <= tables  # the step its number hid was applied too
        assert c.execute("PRAGMA user_version").fetchone()[0] == schema.SCHEMA_VERSION


@pytest.mark.postgres
async def test_an_older_commits_postgresql_database_is_upgraded_and_check_says_so(
        tmp_path: Path, pg_server: PgServer) -> None:
    url = pg_server.empty_database()
    try:
        old_postgres(url)
        code, out = await studybot(tmp_path, "check", STUDYBOT_DATABASE_URL=url)
        assert code == 0 and f"schema 9, upgraded to {schema.SCHEMA_VERSION} at start" in out, out
        await serves(tmp_path, STUDYBOT_DATABASE_URL=url)
        with psycopg.connect(url) as c:
            assert c.execute("SELECT to_regclass('installs') IS NOT NULL").fetchone()[0]
            assert c.execute("SELECT MAX(version) FROM schema_version").fetchone()[0] == schema.SCHEMA_VERSION
    finally:
        pg_server.drop(url)


async def test_check_fails_where_the_upgrade_at_run_would_fail(tmp_path: Path) -> None:
    """Two open rounds in one channel (possible before schema 8) stop the upgrade to one open round per
    channel: `run` stops there, and `check` says so first instead of OK."""
    db = tmp_path / "bot.db"
    old_sqlite(db, steps=tuple(range(1, 8)), version=7)
    with closing(sqlite3.connect(db, isolation_level=None)) as c:
        for _ in range(2):
            c.execute("INSERT INTO rounds (platform, cohort, channel_id, lesson_id, question_ids, position, state,"
                      " started_at) VALUES ('slack', 'T1', 'C1', 'l', '[]', 0, 'open', '2026-01-01')")
    code, run_out = await studybot(tmp_path, "run", FAKE_PLATFORM="serve")
    assert code == 2 and "UNIQUE constraint failed" in run_out, run_out
    code, out = await studybot(tmp_path, "check")
    assert code == 2, out
    [line] = [line for line in out.splitlines() if line.startswith("studybot:")]
    assert f"cannot be upgraded to schema {schema.SCHEMA_VERSION}" in line and "UNIQUE constraint failed" in line
