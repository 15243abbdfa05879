"""Discord across processes (STUDYBOT_DISCORD_SHARDS): which shards this process runs, and IDENTIFYs
paced across every process on the database.

Each process runs its shards on discord.py's AutoShardedBot; Discord sends each server's events to
its shard, `(guild_id >> 22) % shard_count`, and direct messages to shard 0. Only the process with
shard 0 syncs the command tree (`DiscordSettings.syncs_commands`), and each process holds a lock of
the database from its IDENTIFY until Discord's 5-second window has passed.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from discord.ext import commands

from adapters.discord_settings import DiscordSettings
from bot.store.engine import Engine

IDENTIFY_WINDOW = 5.0  # seconds between IDENTIFYs of one bot (Discord's limit with max_concurrency 1)
IDENTIFY_LOCK = "discord-identify"


class IdentifyPacer:
    """One IDENTIFY at a time across processes, `window` seconds apart."""

    def __init__(self, engine: Engine, window: float = IDENTIFY_WINDOW) -> None:
        self.engine = engine
        self.window = window
        self._windows: set[asyncio.Task[None]] = set()

    async def pace(self) -> None:
        """Take the IDENTIFY lock and hold it until `window` after this IDENTIFY (released by a
        task, so the IDENTIFY goes now)."""
        held = contextlib.AsyncExitStack()
        await held.enter_async_context(self.engine.exclusive(IDENTIFY_LOCK))

        async def release() -> None:
            try:
                await asyncio.sleep(self.window)
            finally:
                await held.aclose()

        task = asyncio.create_task(release(), name="discord-identify-window")
        self._windows.add(task)
        task.add_done_callback(self._windows.discard)

    async def close(self) -> None:
        """Release every lock still held."""
        for task in list(self._windows):
            task.cancel()
        await asyncio.gather(*self._windows, return_exceptions=True)


class PacedShards(commands.AutoShardedBot):
    """discord.py's AutoShardedBot whose IDENTIFYs wait for `pacer`."""

    pacer: IdentifyPacer

    async def before_identify_hook(self, shard_id: int | None, *, initial: bool = False) -> None:
        await self.pacer.pace()


def shard_options(settings: DiscordSettings) -> dict[str, Any]:
    """AutoShardedBot's arguments for this process's shards."""
    return {"shard_ids": list(settings.shard_ids), "shard_count": settings.shard_count}


def shards_said(settings: DiscordSettings) -> str:
    """This process's shards for the connected log line ("" when not sharded)."""
    if not settings.sharded:
        return ""
    return f" (shards {','.join(map(str, settings.shard_ids))} of {settings.shard_count})"
