"""What `studybot health` says of processes that are not simply serving: one still retrying its platform is
running (not "no studybot process"), and not healthy yet; Discord shards across processes with a gap, an
overlap or totals that disagree are reported by `check` and `health`; `health --self` judges the process
named STUDYBOT_PROCESS_NAME only (a replica's own healthcheck)."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

import pytest
from pg import PgServer
from test_run_signals import HERE, environment, until

from bot.core.clock import SystemClock
from bot.store import Store


def studybot(tmp_path: Path, *argv: str, **extra: str) -> subprocess.CompletedProcess[str]:
    """The real CLI (Discord registered) for `check`; the fake platform's for the others."""
    program = ["-m", "adapters.cli"] if argv[0] == "check" else [str(HERE / "fake_platform.py")]
    return subprocess.run([sys.executable, *program, *argv], cwd=tmp_path,
                          env=environment(tmp_path, **extra), capture_output=True, text=True, timeout=60)


async def test_health_while_run_retries_its_platform_says_it_is_running_and_connecting(tmp_path: Path) -> None:
    log, marker = tmp_path / "studybot.log", tmp_path / "attempts"
    with log.open("ab") as out:
        proc = await asyncio.create_subprocess_exec(
            sys.executable, str(HERE / "fake_platform.py"), "run", cwd=tmp_path,
            env=environment(tmp_path, FAKE_PLATFORM="unreachable", FAKE_MARKER=str(marker)),
            stdin=asyncio.subprocess.DEVNULL, stdout=out, stderr=out)
    try:
        await until(lambda: "retrying in" in log.read_text(), "retrying", proc, log)
        seen = await asyncio.to_thread(studybot, tmp_path, "health")
        assert seen.returncode == 1 and seen.stdout == "", seen.stdout
        [line] = seen.stderr.splitlines()
        assert "no studybot process is running" not in line
        assert line.startswith(f"unhealthy: studybot is running on {tmp_path / 'bot.db'} (process ")
        assert f" pid {proc.pid} (fake)" in line and line.endswith(
            "but is still connecting fake: it retries on its own; its log says why it cannot connect")
    finally:
        proc.terminate()
        assert await asyncio.wait_for(proc.wait(), 20) == 0


async def beat(url: str, shards: str, name: str = "") -> None:
    """A process running Discord `shards` (like 0/2) beats on the database."""
    store = await Store.open(url, SystemClock())
    try:
        store.processes.platforms, store.processes.shards = "discord", shards
        if name:
            store.processes.host = name
        await store.beat()
    finally:
        await store.close()


@pytest.mark.postgres
async def test_check_and_health_report_a_gap_an_overlap_and_totals_that_disagree(
        tmp_path: Path, database: str) -> None:
    for shards in ("0/2", "0/2", "1/3"):  # the red team's layout: nobody runs shard 1 of 2, shard 0 runs twice
        await beat(database, shards)
    seen = await asyncio.to_thread(studybot, tmp_path, "health", STUDYBOT_DATABASE_URL=database)
    assert seen.returncode == 1, seen.stdout + seen.stderr
    assert seen.stderr.startswith("unhealthy: discord shards: the processes disagree on the total (2, 3)")
    checked = await asyncio.to_thread(studybot, tmp_path, "check", STUDYBOT_DATABASE_URL=database,
                                      DISCORD_TOKEN="x", STUDYBOT_DISCORD_SHARDS="1/2")
    assert "warning: discord shards: the processes disagree on the total (2, 3)" in checked.stdout, checked.stdout


@pytest.mark.postgres
async def test_overlap_and_gap_are_reported_when_the_totals_agree(tmp_path: Path, database: str) -> None:
    await beat(database, "0/3")
    await beat(database, "0/3")
    seen = await asyncio.to_thread(studybot, tmp_path, "health", STUDYBOT_DATABASE_URL=database)
    assert seen.returncode == 1
    [line] = seen.stderr.splitlines()
    assert line.startswith("unhealthy: discord shards: shard 0 runs in 2 processes")
    assert line.endswith("(and 1 more problem(s))")  # the gap: shards 1 and 2
    checked = await asyncio.to_thread(studybot, tmp_path, "check", STUDYBOT_DATABASE_URL=database,
                                      DISCORD_TOKEN="x", STUDYBOT_DISCORD_SHARDS="1,2/3")
    assert "warning: discord shards: shard 0 runs in 2 processes" in checked.stdout, checked.stdout
    assert "no process runs shard" not in checked.stdout  # this process would run 1 and 2


@pytest.mark.postgres
async def test_shards_that_fit_together_are_healthy(tmp_path: Path, database: str) -> None:
    await beat(database, "0/2")
    await beat(database, "1/2")
    seen = await asyncio.to_thread(studybot, tmp_path, "health", STUDYBOT_DATABASE_URL=database)
    assert seen.returncode == 0 and "warning" not in seen.stdout, seen.stdout + seen.stderr


@pytest.mark.postgres
async def test_a_replicas_own_health_check_judges_itself(tmp_path: Path, pg_server: PgServer) -> None:
    url = pg_server.new_database()
    try:
        await beat(url, "", name="replica-a")
        alive = await asyncio.to_thread(studybot, tmp_path, "health", "--self", STUDYBOT_DATABASE_URL=url,
                                        STUDYBOT_PROCESS_NAME="replica-a")
        assert alive.returncode == 0, alive.stderr
        other = await asyncio.to_thread(studybot, tmp_path, "health", "--self", STUDYBOT_DATABASE_URL=url,
                                        STUDYBOT_PROCESS_NAME="replica-b")
        assert other.returncode == 1  # replica-a beating does not make replica-b healthy
        assert other.stderr.startswith("unhealthy: no studybot process named replica-b is running")
    finally:
        pg_server.drop(url)
