"""The database file under a running bot, a damaged file, backups to where they cannot go, and
`studybot restore`: each ends in one clear line, and no acknowledged answer goes where it is lost."""

from __future__ import annotations

import asyncio
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from support import CORE_PACK, learner, record

from bot.core.clock import FixedClock
from bot.core.errors import SetupError, StoreBusy, StoreUnavailable
from bot.store import Store
from bot.store.sqlite_engine import restore

NOBODY = 65534


def studybot(*args: str, db: Path, cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if not k.startswith(("SLACK_", "DISCORD_", "STUDYBOT_"))}
    environ.update(STUDYBOT_DB=str(db), STUDYBOT_CONTENT=str(CORE_PACK), **env)
    return subprocess.run([sys.executable, "-m", "adapters.cli", *args], cwd=cwd, env=environ, capture_output=True,
                          text=True, timeout=60, stdin=subprocess.DEVNULL)


def one_line(done: subprocess.CompletedProcess[str]) -> str:
    """The single stderr line of a failure (and no traceback)."""
    assert "Traceback" not in done.stderr, done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, done.stderr
    return lines[0]


# ------------------------------------------------------------ the file under a running bot


@pytest.mark.parametrize("change", ["deleted", "replaced"])
async def test_writes_stop_when_the_file_is_deleted_or_replaced(tmp_path: Path, change: str) -> None:
    db = tmp_path / "bot.db"
    store = await Store.open(db, FixedClock())
    try:
        await store.learners.touch(learner("U1"))
        if change == "deleted":
            db.unlink()
        else:
            await (await Store.open(tmp_path / "other.db", FixedClock())).close()
            os.replace(tmp_path / "other.db", db)
        with pytest.raises(StoreBusy):  # the learner hears "nothing was recorded, try again"
            await store.learners.touch(learner("U2"))
        assert store.engine.failed.is_set()
        assert f"the database file {db} was deleted or replaced while studybot ran" in str(store.engine.failure)
        with pytest.raises(StoreBusy):
            await store.beat()  # every later write too, without touching the file
    finally:
        await store.close()


async def test_a_write_batch_after_an_unchanged_file_commits(tmp_path: Path) -> None:
    store = await Store.open(tmp_path / "bot.db", FixedClock())
    try:
        await asyncio.gather(*(store.learners.touch(learner(f"U{n}")) for n in range(5)))
        assert store.engine.check_file() is None and await store.count("learners") == 5
    finally:
        await store.close()


# ------------------------------------------------------------ a damaged file


def damage(db: Path) -> None:
    """Overwrite the root page of the answers table (an interior page once it holds a few hundred rows)."""
    c = sqlite3.connect(db, isolation_level=None)
    with c:
        c.execute("INSERT INTO learners (platform, cohort, user_id, last_seen) VALUES ('slack', 'T1', 'U1', 'x')")
        c.executemany("INSERT INTO answers (learner_id, prompt_id, lesson_id, question_id, mode, correct, scored, "
                      "points, week, answered_at) VALUES (1, ?, 'l', 'q', 'practice', 1, 0, 0, 'w', 't')",
                      [(f"p{n}",) for n in range(2000)])
    root = c.execute("SELECT rootpage FROM sqlite_master WHERE name = 'answers'").fetchone()[0]
    size = c.execute("PRAGMA page_size").fetchone()[0]
    c.close()  # the last connection: everything is checkpointed into the file
    with db.open("r+b") as f:
        f.seek((root - 1) * size)
        f.write(b"\x0d" + b"\xff" * 64)  # a leaf-page type with nonsense cell counts and offsets


OLD, NEW = "2026-01-01T08:00:00+00:00", "2026-06-01T08:00:00+00:00"


async def test_a_wal_left_by_a_replaced_file_is_refused_at_start(tmp_path: Path) -> None:
    """The file replaced with `mv` while a studybot ran, then a crash: the old -wal (and its -shm)
    stay beside the new file, and SQLite would replay them over it. Start-up and `check` refuse
    instead, and the new file keeps what it holds."""
    db = tmp_path / "bot.db"
    store = await Store.open(db, FixedClock(OLD))
    await store.beat()
    left = {suffix: file.read_bytes() for suffix in ("-wal", "-shm", "-wal.owner")
            if (file := db.with_name(db.name + suffix)).exists()}
    await store.close()  # a crash would leave the files above behind: they are put back below
    assert not db.with_name(db.name + "-wal.owner").exists()  # a clean stop leaves no note
    replacement = tmp_path / "other.db"
    other = await Store.open(replacement, FixedClock(NEW))
    await other.beat()
    await other.close()
    os.replace(replacement, db)
    for suffix, content in left.items():
        db.with_name(db.name + suffix).write_bytes(content)
    with pytest.raises(StoreUnavailable, match=f"the write-ahead log {db}-wal belongs to another file than {db}"):
        await Store.open(db, FixedClock())
    done = studybot("check", db=db, cwd=tmp_path, STUDYBOT_RESULTS_DIR=str(tmp_path / "results"))
    assert done.returncode == 2 and "belongs to another file" in one_line(done)
    for suffix in ("-wal", "-shm"):  # as the message says
        db.with_name(db.name + suffix).unlink()
    store = await Store.open(db, FixedClock(NEW))
    try:
        assert str(await store.processes.last_beat()) == str(FixedClock(NEW).now())  # the new file's, not the old log's
    finally:
        await store.close()


async def test_a_damaged_file_is_refused_at_start_and_health_says_why(tmp_path: Path) -> None:
    db = tmp_path / "bot.db"
    await (await Store.open(db, FixedClock())).close()
    damage(db)
    with pytest.raises(StoreUnavailable, match=f"the database {db} is damaged .*restore the latest backup"):
        await Store.open(db, FixedClock())
    done = studybot("health", db=db, cwd=tmp_path)
    assert done.returncode == 1 and one_line(done).startswith(f"unhealthy: the database {db} is damaged (SQLite:")
    done = studybot("console", db=db, cwd=tmp_path)
    assert done.returncode == 2 and one_line(done).startswith(f"studybot: the database {db} is damaged")


def test_health_reports_a_deleted_database_without_creating_one(tmp_path: Path) -> None:
    db = tmp_path / "bot.db"
    done = studybot("health", db=db, cwd=tmp_path)
    assert done.returncode == 1
    assert one_line(done) == (f"unhealthy: the database {db} does not exist: start studybot (studybot run) to "
                              "create it, or set STUDYBOT_DB to the database it runs on; if it was deleted, restore "
                              "the latest backup with `studybot restore BACKUP`")
    assert not db.exists()


# ------------------------------------------------------------ backup and restore


def unprivileged() -> list[str]:
    """Run as `nobody` (who can read everything, write only what is open to all) when root."""
    if os.geteuid() != 0:
        return []
    if shutil.which("setpriv") is None:
        pytest.skip("needs setpriv to drop root")
    return ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups",
            "--inh-caps=+dac_read_search", "--ambient-caps=+dac_read_search"]


async def test_a_backup_to_a_folder_it_cannot_write_is_one_line(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir(mode=0o777)
    data.chmod(0o777)
    db = data / "bot.db"
    await (await Store.open(db, FixedClock())).close()
    db.chmod(0o666)
    locked = tmp_path / "readonly"
    locked.mkdir(mode=0o555)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SLACK_", "DISCORD_", "STUDYBOT_"))}
    done = subprocess.run([*unprivileged(), sys.executable, "-m", "adapters.cli", "backup", str(locked / "b.db")],
                          cwd=data, env={**env, "STUDYBOT_DB": str(db)}, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert one_line(done) == (f"studybot: cannot write the backup {locked / 'b.db'}: it is in a folder this user "
                              f"cannot write ({locked}); choose another path")
    done = studybot("backup", str(tmp_path / "missing" / "b.db"), db=db, cwd=tmp_path)
    assert done.returncode == 2 and "it is in a folder that does not exist" in one_line(done)


async def test_a_backup_never_replaces_a_file(tmp_path: Path) -> None:
    db = tmp_path / "bot.db"
    await (await Store.open(db, FixedClock())).close()
    kept = tmp_path / "yesterday.db"
    kept.write_bytes(b"last week's backup")
    done = studybot("backup", str(kept), db=db, cwd=tmp_path)
    assert done.returncode == 2 and one_line(done) == (
        f"studybot: cannot write the backup {kept}: it already exists, and a backup never replaces a file; choose a "
        "new path, or delete that file first")
    assert kept.read_bytes() == b"last week's backup"
    done = studybot("backup", str(tmp_path / "today.db"), db=db, cwd=tmp_path)
    assert done.returncode == 0 and (tmp_path / "today.db").stat().st_size > 0


def leave_a_wal(db: Path, user: str) -> None:
    """A process that commits into the WAL and dies before any checkpoint (a crashed bot)."""
    script = ("import os, sqlite3, sys\n"
              "c = sqlite3.connect(sys.argv[1], isolation_level=None)\n"
              "c.execute('PRAGMA wal_autocheckpoint = 0')\n"
              "c.execute(\"INSERT INTO learners (platform, cohort, user_id, last_seen)\"\n"
              "          \" VALUES ('slack', 'T1', ?, 'x')\", (sys.argv[2],))\n"
              "os._exit(0)\n")
    subprocess.run([sys.executable, "-c", script, str(db), user], check=True, timeout=30)


@pytest.mark.parametrize("lost", ["nothing", "the database file"])
async def test_restore_brings_the_backup_back_and_no_old_wal_overwrites_it(bot, tmp_path: Path, lost: str) -> None:
    db = bot.settings.db_path
    await record(bot, learner("U1"), "q-before", lesson_id="core-basics")
    backup = tmp_path / "backup.db"
    await bot.store.backup(backup)
    await record(bot, learner("U2"), "q-after", lesson_id="core-basics")
    await bot.close()
    leave_a_wal(db, "U-in-the-wal")
    assert Path(f"{db}-wal").stat().st_size > 0
    if lost != "nothing":
        db.unlink()  # deleted by mistake: its -wal and -shm are still there

    done = studybot("restore", str(backup), db=db, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"restored {backup} to {db}; start studybot again"
    assert not Path(f"{db}-wal").exists() and not Path(f"{db}-shm").exists()

    store = await Store.open(db, FixedClock())  # as studybot starts
    try:
        rows = await store.engine.read("SELECT l.user_id, a.question_id FROM answers a JOIN learners l "
                                       "ON l.id = a.learner_id")
        users = await store.engine.read("SELECT user_id FROM learners ORDER BY user_id")
    finally:
        await store.close()
    assert [(r["user_id"], r["question_id"]) for r in rows] == [("U1", "q-before")]
    assert [r["user_id"] for r in users] == ["U1"]  # neither the later answer nor the old WAL came back


async def test_restore_refuses_while_a_bot_has_the_database_open(bot, tmp_path: Path) -> None:
    backup = tmp_path / "backup.db"
    await bot.store.backup(backup)
    done = studybot("restore", str(backup), db=bot.settings.db_path, cwd=tmp_path)
    assert done.returncode == 2
    assert one_line(done) == (f"studybot: cannot restore to {bot.settings.db_path}: a running studybot has it open; "
                              "stop it first, then restore")


@pytest.mark.parametrize("write, message", [
    (lambda p: p.write_text("not a database"), "it is not a SQLite database"),
    (lambda p: sqlite3.connect(p).execute("CREATE TABLE t (x)").connection.commit(), "it is not a studybot database"),
    (lambda p: None, "no such file"),
])
def test_restore_checks_the_backup_first(tmp_path: Path, write, message) -> None:
    source, db = tmp_path / "backup.db", tmp_path / "bot.db"
    write(source)
    db.write_text("the current database, untouched")
    with pytest.raises(SetupError, match=message):
        restore(source, db)
    assert db.read_text() == "the current database, untouched"


@pytest.mark.parametrize("command", ["console", "check"])
async def test_a_database_path_error_says_what_is_wrong_with_the_path(tmp_path: Path, command: str) -> None:
    """Not "make it writable": what the path actually is."""
    a_file = tmp_path / "a-file"
    a_file.write_text("notes")
    newer = tmp_path / "newer.db"
    with sqlite3.connect(newer) as c:
        c.execute("PRAGMA user_version = 999")
    cases = {
        a_file / "bot.db": f"is under {a_file}, which is a file, not a folder",
        tmp_path: "is a folder; set STUDYBOT_DB to a file, such as",
        a_file: "is not a SQLite file",
        newer: "run the newer studybot, or restore a backup made by this one",
    }
    garbage = tmp_path / "garbage.db"
    garbage.write_bytes(b"SQLite format 3\x00" + b"\xff" * 200)
    for db, says in cases.items():
        done = studybot(command, db=db, cwd=tmp_path, STUDYBOT_RESULTS_DIR=str(tmp_path / "results"))
        line = one_line(done)
        assert done.returncode == 2 and says in line and "writable" not in line, (db, line)
    done = studybot(command, db=garbage, cwd=tmp_path, STUDYBOT_RESULTS_DIR=str(tmp_path / "results"))
    assert done.returncode == 2 and "writable" not in one_line(done), one_line(done)
