"""Waiting for a process under test to be ready: until it says so, never for a fixed time.

A process says it is ready (`studybot run` logs `studybot is running on …` once every platform is
connected and its scheduler runs; the console prints its banner; a worker prints READY), and a test
waits for that. The bound, READY_WITHIN, is one only a hung process reaches: a working one is ready
in a second or two, and in well under a minute on a machine busy with other work. A process that
ends instead fails the wait at once, with its log.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import NoReturn

import pytest

READY_WITHIN = 120.0  # seconds
RUNNING = "studybot is running on"  # what `studybot run` logs once it serves (at INFO, the default level)
POLL = 0.05  # seconds between looks at a log file


async def until(condition: Callable[[], bool | Awaitable[bool]], what: str,
                proc: asyncio.subprocess.Process | None = None, log: Path | None = None,
                within: float = READY_WITHIN) -> None:
    """Return once `condition()` holds (awaited, if it is a coroutine); fail when `proc` ends first, or (a hung
    process) after `within` s."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + within
    while not await _holds(condition()):
        if (proc is not None and proc.returncode is not None) or loop.time() > deadline:
            await _never(what, proc, log, within)
        await asyncio.sleep(POLL)


async def _holds(outcome: bool | Awaitable[bool]) -> bool:
    return await outcome if isinstance(outcome, Awaitable) else outcome


async def _never(what: str, proc: asyncio.subprocess.Process | None, log: Path | None, within: float) -> NoReturn:
    how = f"in {within:g} s"
    if proc is not None:
        if proc.returncode is None:  # hung: it goes, so the test leaves nothing running
            proc.kill()
        else:
            how = f"before it ended with status {proc.returncode}"
        await proc.wait()
    tail = f":\n{log.read_text(errors='replace')[-2000:]}" if log is not None and log.exists() else ""
    pytest.fail(f"the process under test never got to {what} {how}{tail}")


async def logged(log: Path, text: str, proc: asyncio.subprocess.Process | None = None, since: int = 0,
                 within: float = READY_WITHIN) -> str:
    """The log (from byte `since` on: a restarted process appends to it) once it holds `text`."""

    def shown() -> bool:
        return text in _read(log, since)

    await until(shown, f"log {text!r}", proc, log, within)
    return _read(log, since)


async def running(log: Path, proc: asyncio.subprocess.Process, since: int = 0) -> str:
    """The log once `studybot run` says it serves every configured platform."""
    return await logged(log, RUNNING, proc, since)


async def listening(port: int, proc: asyncio.subprocess.Process, log: Path | None = None) -> None:
    """Return once `proc` takes connections on 127.0.0.1:`port` (for a process that logs warnings only)."""

    async def takes() -> bool:
        try:
            _, writer = await asyncio.open_connection("127.0.0.1", port)
        except OSError:
            return False
        writer.close()
        return True

    await until(takes, f"listening on port {port}", proc, log)


def _read(log: Path, since: int) -> str:
    try:
        with log.open("rb") as file:
            file.seek(since)
            return file.read().decode(errors="replace")
    except FileNotFoundError:
        return ""
