"""Storage faults: a database folder the bot cannot write or that does not exist stops `studybot`
at start with one clear line; a locked or full database makes a click answer "busy … try again"
with nothing recorded, keeps what was recorded before, and the same click records once it clears."""

from __future__ import annotations

import asyncio
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from support import CONTENT, REPO, channel, learner

from bot.core.config import Settings
from bot.core.messages import ChoiceMade, Command
from bot.runtime.app import StudyBot

NOBODY = 65534
BUSY_TIMEOUT_MS = 200
RECORDED = ("✅ Correct", "❌ Not quite")

RELIABILITY = [
    ("`studybot run` / `studybot console` as an unprivileged user with STUDYBOT_DB in a missing folder, a "
     "root-owned read-only folder (empty, and holding an existing WAL database) and a read-only database file",
     "6 start-ups",
     "exit code 1, one stderr line naming the path and what to do, no traceback; the existing database unchanged"),
    ("a click while a second connection holds BEGIN EXCLUSIVE past the store's busy timeout", "1 click, then retry",
     "the learner gets 'busy … try again', no answer, prompt use or card is stored; after the lock is released the "
     "same click records once; answers recorded before are intact"),
    ("clicks while the database is full (PRAGMA max_page_count at the current page count), alone and in a "
     "concurrent burst that shares one group commit", "up to 60 learners",
     "every click is recorded and said so, or answered 'busy … try again'; an answer is stored whole or not at all; "
     "rows recorded before are intact, integrity_check ok; a 'try again' means nothing was stored (the answer's "
     "follow-up buttons are left out instead); after raising the limit every learner has one answer"),
]


# ------------------------------------------------------------ start-up with an unusable database folder


def _unprivileged() -> list[str] | None:
    """A prefix that runs a command as `nobody` (root only), or None to run as this user.

    `nobody` keeps CAP_DAC_READ_SEARCH so that it can read the interpreter and the repository wherever
    they live (e.g. under /root): it still cannot write anywhere it has no write permission."""
    if os.geteuid() != 0 or shutil.which("setpriv") is None:
        return None
    return ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups",
            "--inh-caps=+dac_read_search", "--ambient-caps=+dac_read_search"]


def _read_only(folder: Path) -> None:
    """Make `folder` unwritable for the user who runs studybot (root owns it 0755; else 0555)."""
    folder.mkdir(parents=True, exist_ok=True)
    folder.chmod(0o755 if _unprivileged() else 0o555)


async def _make_database(db: Path) -> None:
    """A real studybot database (WAL, migrated) with one learner, then closed cleanly."""
    bot = await StudyBot.start(Settings(db_path=db, content_dir=CONTENT, results_dir=db.parent / "results"))
    try:
        await bot.handle(Command("quiz", "", learner("U1"), channel()))
    finally:
        await bot.close()


def _env(db: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if "PROXY" not in k.upper() and not k.startswith(("SLACK_", "DISCORD_", "STUDYBOT_"))}
    env.update(STUDYBOT_DB=str(db), STUDYBOT_CONTENT=str(CONTENT), STUDYBOT_RESULTS_DIR=str(db.parent / "results"),
               PYTHONDONTWRITEBYTECODE="1", **extra)
    return env


def _studybot(command: str, db: Path) -> subprocess.CompletedProcess[str]:
    """`studybot run` (Discord configured, nothing reachable beyond 127.0.0.1) or `studybot console`
    with stdin closed, as a user who cannot write the database folder."""
    extra = {}
    if command == "run":
        extra = {"DISCORD_TOKEN": "dummy-token", "DISCORD_API_URL": "http://127.0.0.1:9/api/v10",
                 "DISCORD_GATEWAY_URL": "ws://127.0.0.1:9/gateway"}
    argv = [*(_unprivileged() or []), sys.executable, "-m", "adapters.cli", command]
    return subprocess.run(argv, env=_env(db, **extra), cwd=REPO, stdin=subprocess.DEVNULL, capture_output=True,
                          text=True, timeout=30)


def _assert_clear_start_up_error(result: subprocess.CompletedProcess[str], path: Path, advice: tuple[str, ...]) -> str:
    assert result.returncode != 0, (result.stdout, result.stderr)
    assert "Traceback" not in result.stderr and "Traceback" not in result.stdout, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    [line] = lines
    assert line.startswith("studybot: ") and str(path) in line, line
    assert any(word in line for word in advice), line
    return line


@pytest.fixture
def db_root(tmp_path: Path):
    root = tmp_path / "srv"
    root.mkdir()
    root.chmod(0o755)
    yield root
    for folder in (root, *root.rglob("*")):  # writable again, so that pytest can delete it
        if folder.is_dir():
            folder.chmod(0o755)


def test_missing_folder_is_a_clear_start_up_error(db_root: Path) -> None:
    db = db_root / "missing" / "studybot.db"
    line = _assert_clear_start_up_error(_studybot("run", db), db.parent, ("create it", "STUDYBOT_DB"))
    assert "does not exist" in line
    assert not db.parent.exists()


def test_console_cannot_create_the_folder_is_a_clear_start_up_error(db_root: Path) -> None:
    _read_only(db_root)
    db = db_root / "missing" / "studybot.db"
    _assert_clear_start_up_error(_studybot("console", db), db.parent, ("writable", "STUDYBOT_DB"))
    assert not db.parent.exists()


@pytest.mark.parametrize("command", ["run", "console"])
def test_read_only_folder_is_a_clear_start_up_error(db_root: Path, command: str) -> None:
    folder = db_root / "data"
    _read_only(folder)
    db = folder / "studybot.db"
    _assert_clear_start_up_error(_studybot(command, db), db, ("writable", "STUDYBOT_DB"))
    assert list(folder.iterdir()) == []


async def test_existing_database_in_a_read_only_folder_is_a_clear_start_up_error(db_root: Path) -> None:
    folder = db_root / "data"
    folder.mkdir()
    db = folder / "studybot.db"
    await _make_database(db)
    before = sorted(p.name for p in folder.iterdir()), db.read_bytes()
    _read_only(folder)
    _assert_clear_start_up_error(_studybot("run", db), db, ("writable", "STUDYBOT_DB"))
    assert (sorted(p.name for p in folder.iterdir()), db.read_bytes()) == before


async def test_read_only_database_file_fails_at_start_not_at_the_first_answer(db_root: Path) -> None:
    folder = db_root / "data"
    folder.mkdir()
    db = folder / "studybot.db"
    await _make_database(db)
    if _unprivileged():
        os.chown(folder, NOBODY, NOBODY)  # nobody may create the -wal and -shm files, but not write the database
        db.chmod(0o644)
    else:
        db.chmod(0o444)
    _assert_clear_start_up_error(_studybot("run", db), db, ("writable", "STUDYBOT_DB"))
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT COUNT(*) FROM learners").fetchone()[0] == 1


# ------------------------------------------------------------ a locked database during an answer


async def _question_token(bot: StudyBot, user: str) -> str:
    [reply] = await bot.handle(Command("quiz", "", learner(user), channel()))
    return reply.choices[0].token


async def _click(bot: StudyBot, user: str, token: str) -> str:
    [reply] = await bot.handle(ChoiceMade(token, learner(user), channel()))
    return reply.text


async def _rows_of(bot: StudyBot, user: str) -> dict[str, int]:
    """How many rows of each per-answer table belong to a learner."""
    counts = {}
    for table in ("answers", "prompt_uses", "cards", "weekly_scores"):
        rows = await bot.store.engine.read(
            f"SELECT COUNT(*) AS n FROM {table} t JOIN learners l ON l.id = t.learner_id WHERE l.user_id = ?", (user,))
        counts[table] = rows[0]["n"]
    return counts


def _is_busy(text: str) -> bool:
    return "busy" in text and "try again" in text.lower() and "nothing was recorded" in text


async def test_locked_database_says_try_again_and_records_nothing(bot: StudyBot) -> None:
    before = {user: await _question_token(bot, user) for user in ("U1", "U2")}
    assert (await _click(bot, "U1", before["U1"])).startswith(RECORDED)
    token = await _question_token(bot, "U3")
    await bot.store.engine.run(lambda c: c.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}"))

    blocker = sqlite3.connect(bot.settings.db_path, isolation_level=None, timeout=0)
    try:
        blocker.execute("BEGIN EXCLUSIVE")
        started = asyncio.get_running_loop().time()
        text = await _click(bot, "U3", token)
        waited = asyncio.get_running_loop().time() - started
        assert _is_busy(text), text
        assert waited >= BUSY_TIMEOUT_MS / 1000 * 0.9  # it waited for the lock before giving up
        assert await _rows_of(bot, "U3") == {"answers": 0, "prompt_uses": 0, "cards": 0, "weekly_scores": 0}
    finally:
        blocker.execute("ROLLBACK")
        blocker.close()

    assert (await _click(bot, "U3", token)).startswith(RECORDED)  # the same click, once the lock is gone
    assert (await _click(bot, "U3", token)).startswith("You already answered")
    assert await _rows_of(bot, "U3") == {"answers": 1, "prompt_uses": 1, "cards": 1, "weekly_scores": 1}
    assert (await _rows_of(bot, "U1"))["answers"] == 1
    assert await bot.store.count("answers") == 2
    assert (await _click(bot, "U2", before["U2"])).startswith(RECORDED)


# ------------------------------------------------------------ a full database


async def test_full_database_says_try_again_and_keeps_what_was_recorded(bot: StudyBot) -> None:
    users = [f"U{n:03d}" for n in range(60)]
    tokens = {user: await _question_token(bot, user) for user in users}
    early, rest = users[:5], users[5:]
    for user in early:
        assert (await _click(bot, user, tokens[user])).startswith(RECORDED)
    [(pages,)] = await bot.store.engine.read("PRAGMA page_count")
    await bot.store.engine.run(lambda c: c.execute(f"PRAGMA max_page_count = {pages}"))

    recorded, refused = set(early), []
    for user in rest:  # one at a time until the free room in the last pages is used up
        text = await _click(bot, user, tokens[user])
        if _is_busy(text):
            refused.append(user)
            break
        assert text.startswith(RECORDED), text
        recorded.add(user)
    assert refused, "the database never filled up"

    waiting = [user for user in rest if user not in recorded and user not in refused]
    texts = await asyncio.gather(*(_click(bot, user, tokens[user]) for user in waiting))  # one group commit
    for user, text in zip(waiting, texts, strict=True):
        if _is_busy(text):
            refused.append(user)
        else:
            assert text.startswith(RECORDED), text
            recorded.add(user)

    for user in users:
        rows = await _rows_of(bot, user)
        assert rows["answers"] == rows["prompt_uses"] <= 1, (user, rows)  # an answer is stored whole or not at all
        if user in recorded:
            assert rows["answers"] == 1, user
    for user in refused:
        assert (await _rows_of(bot, user))["answers"] == 0, user  # 'try again' stored nothing
    assert await bot.store.count("answers") == len(recorded)
    [(check,)] = await bot.store.engine.read("PRAGMA integrity_check")
    assert check == "ok"

    await bot.store.engine.run(lambda c: c.execute("PRAGMA max_page_count = 1073741823"))
    for user in refused:
        text = await _click(bot, user, tokens[user])
        assert text.startswith(RECORDED), (user, text)
    assert {u: (await _rows_of(bot, u))["answers"] for u in users} == dict.fromkeys(users, 1)


async def test_busy_reply_means_nothing_was_recorded(bot: StudyBot, monkeypatch: pytest.MonkeyPatch) -> None:
    token = await _question_token(bot, "U1")
    await bot.store.engine.run(lambda c: c.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}"))
    blocker = sqlite3.connect(bot.settings.db_path, isolation_level=None, timeout=0)
    real = bot.store.answers.record

    async def then_locked(*args, **kwargs):  # the lock arrives right after the answer committed
        recorded = await real(*args, **kwargs)
        blocker.execute("BEGIN EXCLUSIVE")
        return recorded

    monkeypatch.setattr(bot.store.answers, "record", then_locked)
    try:
        text = await _click(bot, "U1", token)
    finally:
        if blocker.in_transaction:
            blocker.execute("ROLLBACK")
        blocker.close()
    assert not _is_busy(text) or (await _rows_of(bot, "U1"))["answers"] == 0, text
