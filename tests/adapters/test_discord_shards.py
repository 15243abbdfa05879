"""Discord across processes: two processes, each running one shard of two on discord.py's
AutoShardedBot against the stand-in, on one PostgreSQL database."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from pg import PgServer
from support import CORE_PACK

from adapters.discord_app import DiscordAdapter
from adapters.discord_settings import DiscordSettings, shards
from bot.core.clock import FixedClock
from bot.core.config import Secret, Settings
from bot.core.errors import ConfigError
from bot.runtime.app import StudyBot
from standins.discord_standin import DiscordStandIn

WINDOW = 0.3  # the IDENTIFY window, shortened from Discord's 5 seconds


@pytest.fixture
async def processes(discord_fake: DiscordStandIn, pg_server: PgServer, tmp_path: Path,
                    clock: FixedClock) -> AsyncIterator[list[DiscordAdapter]]:
    """Two processes (each its own bot, database connection and gateway connections): shard 0 and shard 1 of 2."""
    url = pg_server.new_database()
    bots = [await StudyBot.start(Settings(db_path=tmp_path / "unused.db", database_url=url, content_dir=CORE_PACK,
                                          results_dir=tmp_path / f"results{n}"), clock) for n in range(2)]
    adapters = [DiscordAdapter(bot, DiscordSettings(token=Secret(discord_fake.token), api_url=discord_fake.api_base,
                                                    gateway_url=discord_fake.gateway_url, shard_ids=(n,),
                                                    shard_count=2),
                               guild_ready_timeout=0.05, identify_window=WINDOW) for n, bot in enumerate(bots)]
    try:
        yield adapters
    finally:
        for adapter in adapters:
            await adapter.close()
        for bot in bots:
            await bot.close()
        pg_server.drop(url)


def record_commands(adapters: list[DiscordAdapter]) -> list[tuple[int, str | None]]:
    """(process, server id or None for a DM) of every command a process handled."""
    seen: list[tuple[int, str | None]] = []
    for n, adapter in enumerate(adapters):
        def handled(interaction: Any, name: str, args: str, n: int = n, real: Any = adapter.on_command) -> Any:
            seen.append((n, str(interaction.guild_id) if interaction.guild_id else None))
            return real(interaction, name, args)

        adapter.on_command = handled  # type: ignore[method-assign]
    return seen


async def test_each_server_is_served_by_one_process_and_commands_are_synced_once(
        discord_fake: DiscordStandIn, processes: list[DiscordAdapter]) -> None:
    fake = discord_fake
    second = fake.add_guild(str((7 << 22) | 1))  # (id >> 22) % 2 == 1: shard 1's
    assert (fake.shard_of(fake.guild_id, 2), fake.shard_of(second, 2)) == (0, 1)

    await asyncio.gather(*(adapter.start() for adapter in processes))

    assert [[str(g.id) for g in p.client.guilds] for p in processes] == [[fake.guild_id], [second]]
    assert len(fake.calls_matching("PUT", r"/applications/\d+/commands")) == 1  # by the process with shard 0
    assert sorted((shard, count) for shard, count, _ in fake.identifies) == [(0, 2), (1, 2)]
    first, then = sorted(at for _, _, at in fake.identifies)
    assert then - first >= WINDOW * 0.9  # paced across the processes by the database's lock

    seen = record_commands(processes)
    for payload in (fake.slash("progress"), fake.slash("progress", guild_id=second),
                    fake.slash("progress", guild=False)):
        answered = await fake.interact(payload)
        assert answered.type == 4
    assert seen == [(0, fake.guild_id), (1, second), (0, None)]  # a DM goes to shard 0's process


async def test_without_the_lock_both_processes_would_identify_at_once(
        discord_fake: DiscordStandIn, processes: list[DiscordAdapter]) -> None:
    """The other side of the pacing: a process holding the lock makes the other wait its window."""
    engine = processes[1].bot.store.engine
    async with engine.exclusive("discord-identify"):
        starting = asyncio.create_task(processes[0].start())
        await asyncio.sleep(WINDOW)
        assert discord_fake.identifies == []  # waiting for the lock, not identifying
    await starting
    assert [shard for shard, _, _ in discord_fake.identifies] == [0]


@pytest.mark.parametrize(("value", "expected"),
                         [("0,1/4", ((0, 1), 4)), ("3/4", ((3,), 4)), (" 1, 0 / 2", ((0, 1), 2))])
def test_the_shards_setting_reads_ids_and_total(value: str, expected: tuple[tuple[int, ...], int]) -> None:
    assert shards(value) == expected


@pytest.mark.parametrize("value", ["0,1", "4/4", "0,0/2", "a/2", "0/0", "/2"])
def test_a_wrong_shards_setting_says_how_to_write_it(value: str) -> None:
    with pytest.raises(ConfigError, match="STUDYBOT_DISCORD_SHARDS: .* like 0,1/4"):
        shards(value)
