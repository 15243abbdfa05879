"""One process of a fleet on one PostgreSQL database, for test_fleet.py.

    python fleet_worker.py run      # `studybot run` as it is (settings from the environment)
    python fleet_worker.py answer   # the core alone: lines `<n> <user> <token>` on stdin are button
                                    # clicks; each reply's first line comes back as `<n> <line>`

In `run`, three things a test needs from outside: the process counts the timer deliveries it made and
prints `DELIVERED <n>` when it stops; while the file FLEET_STALL names exists, a timer delivery
waits (its claim held, nothing posted) after printing `STALLED <pid> <tag>`, and `QUIET` once no
delivery begun before is still under way, so that the test can SIGKILL the process at the point where
it owns timers and has told nobody; and with FLEET_CLOCK, the process's clock reads the time that file
holds (ISO 8601), which the test moves forward: many processes share one clock that jumps.
"""

from __future__ import annotations

import asyncio
import os
import sys
from datetime import datetime
from pathlib import Path
from typing import Any

import bot.runtime.scheduler as scheduler
from adapters import cli
from adapters.platforms import settings_from_env
from bot.core.clock import SystemClock
from bot.core.messages import Actor, ChoiceMade, Place, Reply
from bot.runtime.app import StudyBot

PLACE = Place("slack", "T0001", "C0001")


def counting_deliveries() -> list[int]:
    """Wrap the scheduler's delivery: count it, and hold it while the stall file exists."""
    delivered, under_way, stalled = [0], [0], [False]
    real = scheduler.deliver
    stall = os.environ.get("FLEET_STALL")

    def quiet() -> None:
        if stalled[0] and not under_way[0]:
            print("QUIET", flush=True)

    async def deliver(bot: StudyBot, outbox: Any, reply: Reply) -> Any:
        if stall and Path(stall).exists():
            print("STALLED", os.getpid(), reply.tag or reply.text.split("\n", 1)[0], flush=True)
            stalled[0] = True
            quiet()
            await asyncio.Event().wait()  # until SIGKILL
        under_way[0] += 1
        try:
            result = await real(bot, outbox, reply)
        finally:
            under_way[0] -= 1
            quiet()
        delivered[0] += 1
        return result

    scheduler.deliver = deliver  # type: ignore[assignment]
    return delivered


def shared_clock(path: str) -> None:
    """Every clock of this process reads the time the file at `path` holds (re-read when it changes)."""
    seen: list[Any] = [None, None]

    def now(self: SystemClock) -> datetime:
        stamp = os.stat(path).st_mtime_ns
        if stamp != seen[0]:
            seen[:] = [stamp, datetime.fromisoformat(Path(path).read_text())]
        return seen[1]

    SystemClock.now = now  # type: ignore[method-assign]


def run() -> None:
    if clock := os.environ.get("FLEET_CLOCK"):
        shared_clock(clock)
    delivered = counting_deliveries()
    try:
        cli.main(["run"])
    finally:
        print("DELIVERED", delivered[0], flush=True)


async def answer() -> None:
    bot = await StudyBot.start(settings_from_env(os.environ))
    reader = asyncio.StreamReader()
    loop = asyncio.get_running_loop()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    tasks: set[asyncio.Task[None]] = set()

    async def click(n: str, user: str, token: str) -> None:
        [reply] = await bot.handle(ChoiceMade(token, Actor("slack", "T0001", user, user.lower()), PLACE))
        sys.stdout.write(f"{n} {reply.text.splitlines()[0]}\n")
        sys.stdout.flush()

    print("READY", flush=True)
    try:
        while line := await reader.readline():
            task = asyncio.create_task(click(*line.decode().split()))
            tasks.add(task)
            task.add_done_callback(tasks.discard)
        await asyncio.gather(*tasks)
    finally:
        await bot.close()


if __name__ == "__main__":
    if sys.argv[1] == "run":
        run()
    else:
        asyncio.run(answer())
