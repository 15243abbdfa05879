"""`studybot migrate-db --to URL`: a SQLite store populated through the core (a simulated cohort)
moves into PostgreSQL in one transaction; afterwards the leaderboards, the results files and
/insights read the same from both engines, new answers get new ids, and every refusal is one line."""

from __future__ import annotations

import asyncio
import re
import sqlite3
from contextlib import closing
from datetime import timedelta
from pathlib import Path
from urllib.parse import urlsplit

import psycopg
import pytest
from pg import with_database
from simulated_cohort import simulate, start
from support import choice_for

from bot.core.clock import SystemClock
from bot.core.messages import Actor, ChoiceMade, Command, Place
from bot.runtime.app import StudyBot
from bot.store import Store
from bot.store.postgres_engine import redacted
from bot.store.schema import SCHEMA_VERSION

CHART_ID = re.compile(r"chart-[0-9a-f]{8}-[0-9a-f-]{27}")
TEACHER = Actor("slack", "T1", "UTEACH", "Teacher", True)
LEARNER = Actor("slack", "T1", "U03", "Learner U03")
PLACE = Place("slack", "T1", "C1")
VIEWS = [(TEACHER, "leaderboard", ""), (TEACHER, "leaderboard", "all"), (LEARNER, "leaderboard", "week"),
         (TEACHER, "results", "cohort"), (LEARNER, "results", ""), (LEARNER, "progress", ""),
         (TEACHER, "insights", ""), (TEACHER, "insights", "core-basics all"), (TEACHER, "insights", "export")]


def shown(replies) -> list[tuple[str, str | None]]:
    """What the replies say, with any file's contents (the report's charts get random ids)."""
    return [(r.text, CHART_ID.sub("chart", r.file.content.decode()) if r.file else None) for r in replies]


async def views(bot: StudyBot) -> list:
    return [shown(await bot.handle(Command(name, args, who, PLACE))) for who, name, args in VIEWS]


@pytest.fixture
def studybot(studybot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """`studybot ARGS` on the simulated cohort's SQLite file."""
    monkeypatch.setenv("STUDYBOT_DB", str(tmp_path / "studybot.db"))
    return studybot


def one_line(result: tuple[int, str, str]) -> str:
    code, _, err = result
    assert code == 2 and "Traceback" not in err, err
    [line] = err.splitlines()
    assert line.startswith("studybot: ")
    return line


def counts(path: Path) -> dict[str, int]:
    with closing(sqlite3.connect(path)) as c:
        tables = [r[0] for r in c.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        return {t: c.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0] for t in tables}


async def test_a_simulated_cohort_reads_the_same_after_moving_to_postgresql(tmp_path, pg_server, studybot) -> None:
    bot, clock = await start(tmp_path)
    await simulate(bot, clock)
    before = await views(bot)
    await bot.close()
    in_file = counts(tmp_path / "studybot.db")
    url = pg_server.empty_database()
    try:
        code, out, err = await asyncio.to_thread(studybot, "migrate-db", "--to", url)
        assert code == 0, err
        assert f"answers: {in_file['answers']} row(s)" in out and "every count checked" in out
        assert in_file["answers"] > 50 and in_file["glossary_lookups"] > 0

        (tmp_path / "pg").mkdir()  # its own results folder: the files are written again from PostgreSQL
        moved, _ = await start(tmp_path / "pg", url)
        try:
            assert await views(moved) == before
            with psycopg.connect(url) as c:
                for table, n in in_file.items():
                    if table != "sqlite_sequence":
                        assert c.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0] == n, table
            # the identities continue after the copied ids: a new learner's answers are recorded
            newcomer = Actor("slack", "T1", "UNEW", "Newcomer")
            [asked] = await moved.handle(Command("quiz", "", newcomer, PLACE))
            await moved.handle(ChoiceMade(choice_for(asked, 0).token, newcomer, PLACE))
            assert await moved.store.count("answers") == in_file["answers"] + 1
            assert await moved.store.count("learners") == in_file["learners"] + 1
        finally:
            await moved.close()

        refused = one_line(await asyncio.to_thread(studybot, "migrate-db", "--to", url))  # it now holds studybot rows
        assert "already holds studybot data" in refused and "empty database" in refused
    finally:
        pg_server.drop(url)


async def test_a_freshly_migrated_database_is_accepted_and_an_emptied_file_copies_nothing(tmp_path, pg_server,
                                                                                          studybot) -> None:
    bot, _ = await start(tmp_path)
    await bot.close()
    url = pg_server.new_database()  # schema applied, no rows
    try:
        code, out, err = await asyncio.to_thread(studybot, "migrate-db", "--to", url)
        assert code == 0, err
        assert "copied 0 row(s)" in out
        with psycopg.connect(url) as c:
            assert c.execute("SELECT MAX(version) FROM schema_version").fetchone()[0] == SCHEMA_VERSION
    finally:
        pg_server.drop(url)


async def test_what_the_files_processes_held_is_not_copied_as_live(tmp_path, pg_server, studybot) -> None:
    """None of the file's processes runs on the new database: their heartbeats are not copied (health
    lists no ghost) and a timer one of them had claimed is copied free for any process to claim."""
    bot, _ = await start(tmp_path)
    await bot.close()
    store = await Store.open(tmp_path / "studybot.db", SystemClock())  # a process that beat, then was killed
    await store.timers.set("reminder:slack:T1:U03", SystemClock().now())
    assert await store.timers.claim(SystemClock().now(), store.processes.me, timedelta(hours=1))
    await store.beat()
    await store.close()
    url = pg_server.empty_database()
    try:
        code, copied, err = await asyncio.to_thread(studybot, "migrate-db", "--to", url)
        assert code == 0, err
        code, out, err = await asyncio.to_thread(studybot, "health", STUDYBOT_DATABASE_URL=url)
        assert (code, out) == (1, "") and err.startswith("unhealthy: no studybot process is running on "), out

        moved = await Store.open(url, SystemClock())
        try:
            assert await moved.processes.listed() == []
            claimed = await moved.timers.claim(SystemClock().now(), "a process on the new database",
                                               timedelta(seconds=90))
            assert [c.key for c in claimed] == ["reminder:slack:T1:U03"]
        finally:
            await moved.close()
        assert "timers: 1 row(s)" in copied.splitlines()
        assert "processes: not copied (each process lists itself on the database it runs on)" in copied.splitlines()
    finally:
        pg_server.drop(url)


def test_cli_failures_are_one_line(tmp_path, studybot) -> None:
    assert "not a PostgreSQL URL" in one_line(studybot("migrate-db", "--to", "mysql://x@127.0.0.1/db"))
    assert "does not exist" in one_line(studybot("migrate-db", "--to", "postgresql://x@127.0.0.1:1/db"))
    sqlite3.connect(tmp_path / "studybot.db").close()
    line = one_line(studybot("migrate-db", "--to", "postgresql://studybot@127.0.0.1:1/db"))
    assert "cannot reach PostgreSQL at postgresql://studybot@127.0.0.1:1/db" in line
    assert "--to" in one_line(studybot("migrate-db"))  # the URL is required


@pytest.mark.parametrize("problem", ["no such database", "no such user", "unreachable"])
def test_a_target_it_cannot_use_is_named_as_given_with_to(tmp_path, pg_server, studybot, problem: str) -> None:
    """The advice names the --to URL the user typed, not STUDYBOT_DATABASE_URL (which migrate-db does not read)."""
    sqlite3.connect(tmp_path / "studybot.db").close()
    host = urlsplit(pg_server.url).netloc.rpartition("@")[2]
    url = {"no such database": with_database(pg_server.url, "studybot_no_such_db"),
           "no such user": urlsplit(pg_server.url)._replace(netloc=f"studybot_no_such_user@{host}").geturl(),
           "unreachable": "postgresql://studybot@127.0.0.1:1/db"}[problem]
    line = one_line(studybot("migrate-db", "--to", url))
    assert "the --to URL" in line and "STUDYBOT_DATABASE_URL" not in line, line
    if problem == "no such database":
        assert line.endswith("does not exist on " + redacted(url) + "; create it (createdb studybot_no_such_db) or "
                             "point the --to URL at an existing database"), line
