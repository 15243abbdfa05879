"""`studybot health` lists the processes that run: a console or `studybot run` that ends cleanly (end
of input, /quit, Ctrl-C, SIGTERM) leaves the table at once, as real processes; one that stopped
without leaving (killed) is no longer counted as running once it has been silent for a while."""

from __future__ import annotations

import asyncio
import re
import signal
import sqlite3
import subprocess
import sys
from contextlib import closing
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from readiness import until
from test_run_signals import HERE, STOPPED_WITHIN, environment

from adapters.cli import RUNNING_WITHIN
from bot.core.clock import FixedClock, SystemClock
from bot.store import Store


def health(tmp_path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "adapters.cli", "health"], cwd=tmp_path, env=environment(tmp_path),
                          capture_output=True, text=True, timeout=60)


def pids_listed(db: Path) -> list[int]:
    """The pids in the processes table (none before the database has it)."""
    try:
        with closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as c:
            return [r[0] for r in c.execute("SELECT pid FROM processes")]
    except sqlite3.OperationalError:
        return []


async def ends(proc: asyncio.subprocess.Process, how: str) -> None:
    assert proc.stdin is not None
    if how == "end of input":
        proc.stdin.close()
    elif how == "/quit":
        proc.stdin.write(b"/quit\n")
        await proc.stdin.drain()
    else:
        proc.send_signal(signal.SIGINT if how == "Ctrl-C" else signal.SIGTERM)


@pytest.mark.parametrize("argv, how", [
    (("console",), "end of input"),
    (("console",), "/quit"),
    (("console",), "Ctrl-C"),
    (("console",), "SIGTERM"),
    (("run",), "SIGTERM"),
    (("run",), "Ctrl-C"),
], ids=lambda value: " ".join(value) if isinstance(value, tuple) else value)
async def test_a_process_that_ends_cleanly_leaves_the_processes_health_lists(tmp_path: Path, argv: tuple[str, ...],
                                                                             how: str) -> None:
    log, db = tmp_path / "studybot.log", tmp_path / "bot.db"
    with log.open("ab") as out:
        proc = await asyncio.create_subprocess_exec(sys.executable, str(HERE / "fake_platform.py"), *argv,
                                                    cwd=tmp_path, env=environment(tmp_path, FAKE_PLATFORM="serve"),
                                                    stdin=asyncio.subprocess.PIPE, stdout=out, stderr=out)
    await until(lambda: proc.pid in pids_listed(db), "its first heartbeat", proc, log)
    running = await asyncio.to_thread(health, tmp_path)
    assert running.returncode == 0 and f" pid {proc.pid}" in running.stdout, running.stdout + running.stderr

    await ends(proc, how)
    code = await asyncio.wait_for(proc.wait(), STOPPED_WITHIN)
    assert code == 0 and "Traceback" not in log.read_text(), log.read_text()
    assert pids_listed(db) == []
    gone = await asyncio.to_thread(health, tmp_path)
    assert gone.returncode == 1 and gone.stdout == "", gone.stdout
    assert gone.stderr.splitlines() == [f"unhealthy: no studybot process is running on {db}; start it with "
                                        "studybot run, or set STUDYBOT_DB to the database it runs on"]


async def beat_at(db: Path, when: datetime, platforms: str = "") -> None:
    """A process's heartbeat at `when` (a process killed then has its last beat there)."""
    store = await Store.open(db, FixedClock(when))
    try:
        store.processes.platforms = platforms
        await store.beat()
    finally:
        await store.close()


async def test_a_process_silent_longer_than_a_few_beats_is_not_counted_as_running(tmp_path: Path) -> None:
    db, now = tmp_path / "bot.db", SystemClock().now()
    killed = (now - RUNNING_WITHIN - timedelta(seconds=5)).replace(microsecond=0)
    await beat_at(db, killed, "slack")
    alone = await asyncio.to_thread(health, tmp_path)
    assert alone.returncode == 1 and alone.stdout == ""
    assert alone.stderr.splitlines() == [f"unhealthy: no studybot process is running on {db} (the last heartbeat was "
                                         f"at {killed.isoformat()}); start it with studybot run, or set STUDYBOT_DB "
                                         "to the database it runs on"]

    await beat_at(db, SystemClock().now())
    both = await asyncio.to_thread(health, tmp_path)
    assert both.returncode == 0, both.stderr
    healthy, running, silent = both.stdout.splitlines()
    assert healthy.startswith("healthy: heartbeat ") and healthy.endswith(", 1 process(es) running")
    assert re.fullmatch(r"process \S+ pid \d+: beat [0-9] s ago, up since \S+", running), running
    assert silent.startswith("process ") and silent.endswith(
        f" (slack): not heard from since {killed.isoformat()}; it was killed or is stuck, or its machine "
        "went down")

