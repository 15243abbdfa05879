"""`studybot check` and `studybot health` on PostgreSQL, against the real server: a database they can
use, one that does not exist, and one whose schema is newer than this studybot; each answer one line."""

from __future__ import annotations

import asyncio

import psycopg
import pytest
from conftest import Run
from pg import PgServer, with_database
from test_cli_errors import failure

from bot.core.clock import SystemClock
from bot.store import Store
from bot.store.postgres_engine import redacted
from bot.store.schema import SCHEMA_VERSION

pytestmark = pytest.mark.postgres


def ahead(url: str) -> None:
    """The schema of a newer studybot."""
    with psycopg.connect(url, autocommit=True) as c:
        c.execute("INSERT INTO schema_version (version) VALUES (%s)", (SCHEMA_VERSION + 1,))


def test_check_reports_the_postgresql_database(studybot: Run, database: str) -> None:  # noqa: F811
    code, out, err = studybot("check", STUDYBOT_DATABASE_URL=database)
    assert (code, err) == (0, "")
    [line] = [line for line in out.splitlines() if line.startswith("database:")]
    assert line.startswith(f"database: OK, {redacted(database)} (PostgreSQL ")
    assert line.endswith(f", schema {SCHEMA_VERSION})")


def test_check_says_a_missing_database_is_missing(studybot: Run, pg_server: PgServer) -> None:  # noqa: F811
    url = with_database(pg_server.url, "studybot_no_such_db")
    line = failure(studybot("check", STUDYBOT_DATABASE_URL=url))
    assert "the database 'studybot_no_such_db' does not exist" in line and "createdb studybot_no_such_db" in line


def test_check_refuses_a_schema_ahead_of_this_studybot(studybot: Run, database: str) -> None:  # noqa: F811
    ahead(database)
    line = failure(studybot("check", STUDYBOT_DATABASE_URL=database))
    assert f"has schema {SCHEMA_VERSION + 1}, newer than this studybot's {SCHEMA_VERSION}" in line


def test_health_lists_the_processes_beating_on_the_database(studybot: Run, database: str) -> None:  # noqa: F811
    code, out, err = studybot("health", STUDYBOT_DATABASE_URL=database)
    assert code == 1 and out == ""
    assert err.splitlines() == [f"unhealthy: no studybot process is running on {redacted(database)}; start it with "
                                "studybot run, or set STUDYBOT_DATABASE_URL to the database it runs on"]

    async def beat() -> None:  # a running process's scheduler beats
        store = await Store.open(database, SystemClock())
        await store.beat()
        await store.close()

    asyncio.run(beat())
    code, out, err = studybot("health", STUDYBOT_DATABASE_URL=database)
    assert (code, err) == (0, "")
    assert out.splitlines()[0].startswith("healthy: heartbeat 0 s ago, 1 process(es) running")


def test_health_says_a_missing_database_is_missing(studybot: Run, pg_server: PgServer) -> None:  # noqa: F811
    url = with_database(pg_server.url, "studybot_no_such_db")
    code, out, err = studybot("health", STUDYBOT_DATABASE_URL=url)
    assert code == 1 and out == "" and len(err.splitlines()) == 1
    assert err.startswith("unhealthy: the database 'studybot_no_such_db' does not exist")


def test_health_refuses_a_schema_ahead_of_this_studybot(studybot: Run, database: str) -> None:  # noqa: F811
    ahead(database)
    code, out, err = studybot("health", STUDYBOT_DATABASE_URL=database)
    assert code == 1 and out == "" and len(err.splitlines()) == 1
    assert f"has schema {SCHEMA_VERSION + 1}, newer than this studybot's {SCHEMA_VERSION}" in err
