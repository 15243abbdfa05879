"""SQLite serves one process: while a studybot serves a SQLite file (its pid file locked), a second
`studybot console` or `studybot run` on the same file is refused with one line, before it takes the
first one's rounds and timers. What serves nobody (`reload`, `backup`, `health`) still works beside
it, and once the first one stops the file is free again."""

from __future__ import annotations

import asyncio
import fcntl
import os
import sys
import threading
from pathlib import Path

import pytest
from support import CORE_PACK
from test_console import Console
from test_reload_process import HERE, environment, studybot_reload

from adapters.runner import pid_file, serving_alone
from bot.core.config import Settings
from bot.core.errors import SetupError


async def studybot(tmp_path: Path, *argv: str, **extra: str) -> tuple[int, str, str]:
    """A studybot command run to its end (with the fake platform registered), from another folder."""
    proc = await asyncio.create_subprocess_exec(sys.executable, str(HERE / "fake_platform.py"), *argv, cwd=tmp_path,
                                                env=environment(tmp_path, CORE_PACK, **extra),
                                                stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
                                                stderr=asyncio.subprocess.PIPE)
    out, err = await asyncio.wait_for(proc.communicate(), 30)
    return proc.returncode or 0, out.decode(), err.decode()


@pytest.mark.parametrize("argv", [("console",), ("run",)], ids=" ".join)
async def test_a_second_serving_process_on_one_sqlite_file_is_refused(tmp_path: Path, argv: tuple[str, ...]) -> None:
    db = tmp_path / "db" / "studybot.db"
    first = await Console.start(tmp_path, CORE_PACK)
    try:
        await first.ready()
        await first.type("/quiz round 3 seconds:20")
        assert "Round started" in await first.reply()

        code, out, err = await studybot(tmp_path, *argv, FAKE_PLATFORM="serve")
        assert (code, out) == (2, ""), out + err
        assert err.splitlines() == [f"studybot: {db} is in use by studybot pid {first.proc.pid} (it holds "
                                    f"{pid_file(db)}); stop it first, or use PostgreSQL (STUDYBOT_DATABASE_URL) "
                                    "to run many processes"]

        code, out, err = await studybot(tmp_path, "backup", str(tmp_path / "backup.db"))  # serves nobody
        assert code == 0 and (tmp_path / "backup.db").exists(), out + err
        code, out, err = await studybot_reload(tmp_path, environment(tmp_path, CORE_PACK))
        assert code == 0 and f"(process {first.proc.pid})" in out, out + err

        await first.type("/quiz round stop")  # the round stayed the first console's
        await first.expect("Round over")
        assert await first.quit() == 0
    finally:
        if first.proc.returncode is None:
            first.proc.kill()
            await first.proc.wait()
    assert not pid_file(db).exists()

    second = await Console.start(tmp_path, CORE_PACK)  # the file is free once the first one stopped
    try:
        await second.ready()
        assert await second.quit() == 0
    finally:
        if second.proc.returncode is None:
            second.proc.kill()
            await second.proc.wait()


def test_a_moments_read_of_the_pid_file_does_not_refuse_a_start(tmp_path: Path) -> None:
    """`studybot reload` reads the pid file under a shared lock for a moment; a start at that moment waits it
    out, while a studybot that keeps the file locked is refused."""
    settings = Settings(db_path=tmp_path / "bot.db", content_dir=CORE_PACK, results_dir=tmp_path / "results")
    marker = pid_file(settings.db_path)
    with marker.open("a+") as reading:
        fcntl.flock(reading, fcntl.LOCK_SH)
        threading.Timer(0.1, fcntl.flock, (reading, fcntl.LOCK_UN)).start()
        with serving_alone(settings):
            assert marker.read_text().split() == [str(os.getpid())]
    with marker.open("a+") as holding:
        fcntl.flock(holding, fcntl.LOCK_EX)
        with pytest.raises(SetupError, match="is in use by"), serving_alone(settings):
            pass


@pytest.mark.parametrize("link", ["symbolic", "hard"])
async def test_another_path_to_the_same_file_is_refused_too(tmp_path: Path, link: str) -> None:
    """The lock is on the file, not its path: a symbolic or hard link to a served database is refused as the
    database itself is, so that a weekly board is never posted twice."""
    db = tmp_path / "db" / "studybot.db"
    first = await Console.start(tmp_path, CORE_PACK)
    try:
        await first.expect("Type /help")
        elsewhere = tmp_path / "elsewhere"
        (elsewhere / "db").mkdir(parents=True)
        other = elsewhere / "db" / "studybot.db"  # where the second one's STUDYBOT_DB points
        if link == "symbolic":
            other.symlink_to(db)
        else:
            os.link(db, other)
        code, out, err = await studybot(elsewhere, "run", FAKE_PLATFORM="serve")
        assert (code, out) == (2, ""), out + err
        [line] = err.splitlines()
        assert line.startswith(f"studybot: {other} is in use by ") and "stop it first" in line, line
        assert not pid_file(other).exists() or pid_file(other) == pid_file(db)  # none left behind
        assert await first.quit() == 0
    finally:
        if first.proc.returncode is None:
            first.proc.kill()
            await first.proc.wait()
