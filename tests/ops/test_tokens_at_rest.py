"""Secrets at rest: the workspaces' bot and refresh tokens are encrypted in the database under
STUDYBOT_SECRET_KEY (rows stored in plaintext before a key was set keep working and are encrypted at the
next start; a new key first re-encrypts every row), and the SQLite file, its -wal and -shm and the pid
file are created 0600 whatever the umask."""

from __future__ import annotations

import asyncio
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from cryptography.fernet import Fernet
from test_run_signals import HERE, environment, until

from bot.core.clock import SystemClock
from bot.core.config import secret_keys
from bot.store import Store
from bot.store.installs import Install

OLD_KEY, NEW_KEY = Fernet.generate_key().decode(), Fernet.generate_key().decode()
TOKEN, REFRESH = "xoxe.xoxb-1-tokenatrest0123456789", "xoxe-1-refreshatrest0123456789"


async def save(db: Path, key: str | None) -> None:
    store = await Store.open(db, SystemClock(), keys=secret_keys(key))
    try:
        await store.installs.save(Install("slack", "T1", TOKEN, refresh_token=REFRESH, installer_id="U1"))
    finally:
        await store.close()


async def read(db: Path, key: str) -> Install | None:
    store = await Store.open(db, SystemClock(), keys=secret_keys(key))
    try:
        return await store.installs.find("slack", "T1")
    finally:
        await store.close()


def on_disk(db: Path) -> str:
    """The database's bytes (and its write-ahead log's) as text, to look for a token in."""
    return "".join(f.read_bytes().decode("latin-1") for f in (db, db.with_name(db.name + "-wal")) if f.exists())


async def serve_once(tmp_path: Path, **extra: str) -> str:
    """`studybot run` (umask 022) until it serves, the modes of its files read meanwhile; then stopped."""
    log = tmp_path / "run.log"
    with log.open("wb") as out:
        proc = await asyncio.create_subprocess_exec(
            "sh", "-c", f'umask 022; exec "{sys.executable}" "{HERE / "fake_platform.py"}" run', cwd=tmp_path,
            env=environment(tmp_path, FAKE_PLATFORM="serve", **extra), stdin=asyncio.subprocess.DEVNULL,
            stdout=out, stderr=out)
    db = tmp_path / "bot.db"
    files = [db, db.with_name("bot.db-wal"), db.with_name("bot.db-shm"), db.with_name("bot.db.pid")]
    await until(lambda: "studybot is running" in log.read_text() and all(f.exists() for f in files), "serving",
                proc, log)
    modes = {f.name: stat.S_IMODE(f.stat().st_mode) for f in files}
    proc.terminate()
    assert await asyncio.wait_for(proc.wait(), 20) == 0, log.read_text()
    assert modes == dict.fromkeys(modes, 0o600), modes
    return log.read_text()


async def test_tokens_are_encrypted_at_rest_and_read_back(tmp_path: Path) -> None:
    db = tmp_path / "bot.db"
    await save(db, NEW_KEY)
    assert TOKEN not in on_disk(db) and REFRESH not in on_disk(db)
    found = await read(db, NEW_KEY)
    assert found is not None and (found.bot_token, found.refresh_token) == (TOKEN, REFRESH)


async def test_plaintext_rows_keep_working_and_are_encrypted_at_the_next_start(tmp_path: Path) -> None:
    db = tmp_path / "bot.db"
    await save(db, None)  # stored before a key was set
    assert TOKEN in on_disk(db)
    log = await serve_once(tmp_path, STUDYBOT_SECRET_KEY=NEW_KEY)
    assert "encrypted the stored tokens of 1 workspace(s)" in log, log
    assert TOKEN not in on_disk(db) and REFRESH not in on_disk(db)
    found = await read(db, NEW_KEY)
    assert found is not None and found.bot_token == TOKEN


async def test_a_new_key_first_re_encrypts_every_row_then_the_old_one_can_go(tmp_path: Path) -> None:
    db = tmp_path / "bot.db"
    await save(db, OLD_KEY)
    await serve_once(tmp_path, STUDYBOT_SECRET_KEY=f"{NEW_KEY},{OLD_KEY}")
    found = await read(db, NEW_KEY)  # the old key is gone
    assert found is not None and found.bot_token == TOKEN


async def test_encrypted_tokens_without_their_key_stop_start_up_in_one_line(tmp_path: Path) -> None:
    db = tmp_path / "bot.db"
    await save(db, OLD_KEY)
    for key, says in ((None, "STUDYBOT_SECRET_KEY is not set"), (NEW_KEY, "with a key STUDYBOT_SECRET_KEY does not")):
        proc = await asyncio.create_subprocess_exec(
            sys.executable, str(HERE / "fake_platform.py"), "run", cwd=tmp_path,
            env=environment(tmp_path, FAKE_PLATFORM="serve", **({"STUDYBOT_SECRET_KEY": key} if key else {})),
            stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
        out, err = await asyncio.wait_for(proc.communicate(), 60)
        assert proc.returncode == 2 and out == b"", err
        [line] = err.decode().splitlines()
        assert line.startswith("studybot: the workspaces' tokens in the database") and says in line, line
        checked = subprocess.run([sys.executable, "-m", "adapters.cli", "check"], cwd=tmp_path, text=True,
                                 env=environment(tmp_path, **({"STUDYBOT_SECRET_KEY": key} if key else {})),
                                 capture_output=True, timeout=60)
        assert checked.returncode == 2 and checked.stderr.splitlines() == [line]  # check says what run would


async def test_without_a_key_a_new_database_is_still_private_and_check_warns(tmp_path: Path) -> None:
    db = tmp_path / "bot.db"
    await serve_once(tmp_path)  # creates the database under umask 022
    await save(db, None)
    proc = await asyncio.create_subprocess_exec(sys.executable, "-m", "adapters.cli", "check", cwd=tmp_path,
                                                env=environment(tmp_path), stdout=asyncio.subprocess.PIPE,
                                                stderr=asyncio.subprocess.PIPE)
    out, _ = await asyncio.wait_for(proc.communicate(), 60)
    assert "warning: 1 workspace(s) have their bot token stored unencrypted; set STUDYBOT_SECRET_KEY" in out.decode()


@pytest.mark.parametrize("key", ["not-a-key", f"{NEW_KEY},short"], ids=["not a key", "a key, then not one"])
def test_a_key_that_is_not_a_fernet_key_is_one_line(tmp_path: Path, key: str) -> None:
    done = subprocess.run([sys.executable, "-m", "adapters.cli", "check"], cwd=tmp_path,
                          env={**environment(tmp_path), "STUDYBOT_SECRET_KEY": key}, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 2 and key.split(",")[-1] not in done.stderr
    [line] = done.stderr.splitlines()
    assert line.startswith("studybot: STUDYBOT_SECRET_KEY: key ") and "is not a Fernet key" in line
