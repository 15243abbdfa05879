"""`/glossary` interactions per second, from the gateway dispatch to the interaction callback:
studybot's DiscordAdapter against a bare discord.py `commands.Bot` whose `/glossary` answers a
fixed text, both in this process, one after the other, against the same loopback Discord
stand-in. The ratio is the price of the core (lookup, logging) and the adapter."""

from __future__ import annotations

import asyncio
import tempfile
import time
from pathlib import Path

import discord
from discord.ext import commands

from adapters.discord_app import DiscordAdapter, apply_urls
from adapters.discord_settings import DiscordSettings
from benchmarks import goal
from bot.core.config import Secret, Settings
from bot.runtime.app import StudyBot
from standins.discord_standin import DiscordStandIn

REPO = Path(__file__).resolve().parents[1]

INTERACTIONS = 200
WARMUP = 20
GOAL = 0.5


async def rate(fake: DiscordStandIn, interactions: int = INTERACTIONS) -> float:
    """Sequential `/glossary term:FSDP` interactions per second, each awaited to its callback."""
    for _ in range(WARMUP):
        await fake.interact(fake.slash("glossary", {"term": "FSDP"}))
    started = time.perf_counter()
    for _ in range(interactions):
        result = await fake.interact(fake.slash("glossary", {"term": "FSDP"}))
        assert result.status == 200, result.response
    return interactions / (time.perf_counter() - started)


class BareBot(commands.Bot):
    """discord.py alone: one `/glossary` command that answers a fixed text."""

    def __init__(self) -> None:
        super().__init__(command_prefix=commands.when_mentioned, help_command=None, intents=discord.Intents.default(),
                         guild_ready_timeout=0.05, chunk_guilds_at_startup=False)

        @self.tree.command(description="A glossary term's definition")
        async def glossary(interaction: discord.Interaction, term: str | None = None) -> None:
            await interaction.response.send_message("FSDP: shards the training state across GPUs.", ephemeral=True)

    async def setup_hook(self) -> None:
        await self.tree.sync()


async def adapter_rate(fake: DiscordStandIn, folder: Path) -> float:
    settings = Settings(db_path=folder / "bench.db", content_dir=REPO / "content", results_dir=folder / "results")
    studybot = await StudyBot.start(settings)
    platform = DiscordSettings(token=Secret(fake.token), api_url=fake.api_base, gateway_url=fake.gateway_url)
    adapter = DiscordAdapter(studybot, platform, guild_ready_timeout=0.05, ready_timeout=10)
    await adapter.start()
    try:
        return await rate(fake)
    finally:
        await adapter.close()
        await studybot.close()


async def bare_rate(fake: DiscordStandIn) -> float:
    bot = BareBot()
    await bot.login(fake.token)
    connection = asyncio.create_task(bot.connect(reconnect=False))
    try:
        await asyncio.wait_for(bot.wait_until_ready(), 10)
        return await rate(fake)
    finally:
        await bot.close()
        await asyncio.wait_for(connection, 10)


async def main() -> list[str]:
    saved = discord.http.Route.BASE, discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY
    try:
        async with DiscordStandIn() as fake:
            with tempfile.TemporaryDirectory() as tmp:
                ours = await adapter_rate(fake, Path(tmp))
            fake.reset_connection_state()
            apply_urls(fake.api_base, fake.gateway_url)  # the bare bot goes through the same stand-in
            bare = await bare_rate(fake)
    finally:
        discord.http.Route.BASE, discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY = saved
    ratio = ours / bare
    return [
        f"discord /glossary via DiscordAdapter: {ours:,.0f} interactions/s (n={INTERACTIONS}, sequential)",
        f"discord /glossary via bare commands.Bot: {bare:,.0f} interactions/s",
        f"discord ratio adapter/bare: {ratio:.2f} {goal(f'>= {GOAL}', ratio >= GOAL)}",
    ]


if __name__ == "__main__":
    for line in asyncio.run(main()):
        print(line)
