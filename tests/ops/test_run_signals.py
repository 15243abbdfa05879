"""`studybot run` as a process: SIGTERM or Ctrl-C while connecting, retrying or serving ends it
within 10 seconds with status 0; a rejected token ends start-up with status 2 and one line.

The fake platform (fake_platform.py, registered through the real CLI) stands in where the
adapters do not raise PlatformUnreachable/PlatformRejected themselves; connecting is also shown
with the real discord.py, against the Discord stand-in and a gateway that never answers."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from pathlib import Path

import pytest
from fake_platform import REJECTED
from readiness import until
from support import CORE_PACK, REPO

from standins.discord_standin import DiscordStandIn

HERE = Path(__file__).resolve().parent
STOPPED_WITHIN = 10


def environment(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if "PROXY" not in k.upper() and not k.startswith(("SLACK_", "DISCORD_", "STUDYBOT_", "FAKE_"))}
    env.update(STUDYBOT_DB=str(tmp_path / "bot.db"), STUDYBOT_CONTENT=str(CORE_PACK),
               STUDYBOT_RESULTS_DIR=str(tmp_path / "results"), PYTHONPATH=f"{HERE}{os.pathsep}{REPO}", **extra)
    return env


async def start(tmp_path: Path, *argv: str, **extra: str) -> tuple[asyncio.subprocess.Process, Path]:
    log = tmp_path / "studybot.log"
    with log.open("ab") as out:
        proc = await asyncio.create_subprocess_exec(*argv, cwd=tmp_path, env=environment(tmp_path, **extra),
                                                    stdin=asyncio.subprocess.DEVNULL, stdout=out, stderr=out)
    return proc, log


async def stopped(proc: asyncio.subprocess.Process, sig: signal.Signals, log: Path) -> None:
    proc.send_signal(sig)
    try:
        code = await asyncio.wait_for(proc.wait(), STOPPED_WITHIN)
    except TimeoutError:
        proc.kill()
        await proc.wait()
        pytest.fail(f"still running {STOPPED_WITHIN} s after {sig.name}:\n{log.read_text()[-2000:]}")
    text = log.read_text()
    assert code == 0, text[-2000:]
    assert "Traceback" not in text and "stopping" in text, text[-2000:]


@pytest.mark.parametrize("state, told, sig", [
    ("connecting", "hang", signal.SIGTERM),
    ("retrying", "unreachable", signal.SIGTERM),
    ("retrying", "unreachable", signal.SIGINT),
])
async def test_a_stop_signal_ends_each_state_within_ten_seconds(tmp_path: Path, state: str, told: str,
                                                                 sig: signal.Signals) -> None:
    marker = tmp_path / "attempts"
    proc, log = await start(tmp_path, sys.executable, str(HERE / "fake_platform.py"), "run",
                            FAKE_PLATFORM=told, FAKE_MARKER=str(marker))
    if state == "retrying":
        await until(lambda: "retrying in 1 s" in log.read_text(), "retrying", proc, log)
    else:
        await until(marker.exists, "connecting", proc, log)
    await stopped(proc, sig, log)


async def test_a_stop_while_discord_connects_ends_within_ten_seconds(tmp_path: Path) -> None:
    """discord.py has logged in (REST) and waits for a gateway that accepted the connection but never answers."""
    silent = asyncio.Event()

    async def accept(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        silent.set()
        await reader.read()  # say nothing until the client goes
        writer.close()

    gateway = await asyncio.start_server(accept, "127.0.0.1", 0)
    port = gateway.sockets[0].getsockname()[1]
    async with DiscordStandIn() as discord, gateway:
        proc, log = await start(tmp_path, sys.executable, "-m", "adapters.cli", "run", DISCORD_TOKEN=discord.token,
                                DISCORD_API_URL=discord.api_base, DISCORD_GATEWAY_URL=f"ws://127.0.0.1:{port}/")
        await until(silent.is_set, "the gateway", proc, log)
        await stopped(proc, signal.SIGTERM, log)
    assert "discord connected" not in log.read_text()


async def test_a_rejected_token_exits_2_with_one_line(tmp_path: Path) -> None:
    proc, log = await start(tmp_path, sys.executable, str(HERE / "fake_platform.py"), "run", FAKE_PLATFORM="reject")
    assert await asyncio.wait_for(proc.wait(), 30) == 2
    assert log.read_text().splitlines() == [f"studybot: {REJECTED}"]


@pytest.mark.parametrize("argv", [("console",), ("run", "--or-console")])
async def test_sigterm_ends_the_console_like_ctrl_c(tmp_path: Path, argv: tuple[str, ...]) -> None:
    """`studybot console` (and `make run` with no token) stopped by SIGTERM: exit 0, the database
    closed (no -wal or -shm left) and the pid file removed."""
    log = tmp_path / "studybot.log"
    with log.open("ab") as out:
        proc = await asyncio.create_subprocess_exec(sys.executable, "-m", "adapters.cli", *argv, cwd=tmp_path,
                                                    env=environment(tmp_path), stdin=asyncio.subprocess.PIPE,
                                                    stdout=out, stderr=out)
    db = tmp_path / "bot.db"
    await until(lambda: db.with_name("bot.db.pid").exists() and "studybot console" in log.read_text(), "the console",
                proc, log)
    assert proc.stdin is not None
    proc.stdin.write(b"/help\n")
    await proc.stdin.drain()
    await until(lambda: "Commands:" in log.read_text(), "an answer", proc, log)
    proc.send_signal(signal.SIGTERM)
    code = await asyncio.wait_for(proc.wait(), STOPPED_WITHIN)
    text = log.read_text()
    assert code == 0 and "Bye." in text and "Traceback" not in text, text
    assert sorted(p.name for p in tmp_path.glob("bot.db*")) == ["bot.db"]
    assert " INFO " not in text  # `make run` with no token logs like the console: warnings only, not in the chat
