"""`/glossary` interactions per second, from the gateway dispatch to the interaction callback: studybot's
DiscordAdapter beside a fair peer (discord.py alone doing the same required work: the term looked up, the
reply, a log line, the metrics and the lookup counted; `benchmarks.peers.GlossaryWork`) and a bare
discord.py bot that answers a fixed text. The Discord stand-in and the load it sends run in a process of
their own (`benchmarks.load_client`); the bots run here, one connected at a time. They take turns, in
phases, over several rounds (each round in another order), and the figures are the medians of the rounds;
the ratio is the median of each round's ratio."""

from __future__ import annotations

import asyncio
import statistics
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path

import discord
from discord.ext import commands

from adapters.discord_app import DiscordAdapter, apply_urls
from adapters.discord_settings import DiscordSettings
from benchmarks import goal, logging_as_a_service, spread
from benchmarks.load_client import LoadClient
from benchmarks.peers import GlossaryWork
from bot.core.config import Secret, Settings
from bot.runtime.app import StudyBot

REPO = Path(__file__).resolve().parents[1]

ROUNDS = 7
INTERACTIONS = 300  # per bot and round
WARMUP = 10
GOAL = 0.95  # of the fair peer


class PeerBot(commands.Bot):
    """discord.py alone with one `/glossary`: the same work as studybot's (`work`), or a fixed text."""

    def __init__(self, work: GlossaryWork | None) -> None:
        super().__init__(command_prefix=commands.when_mentioned, help_command=None, intents=discord.Intents.default(),
                         guild_ready_timeout=0.05, chunk_guilds_at_startup=False)

        @self.tree.command(description="A glossary term's definition")
        async def glossary(interaction: discord.Interaction, term: str | None = None) -> None:
            text = work.answer(str(interaction.guild_id), term or "") if work else \
                "**FSDP**: shards the training state across GPUs."
            await interaction.response.send_message(text, ephemeral=True)

    async def setup_hook(self) -> None:
        await self.tree.sync()


async def connected(client: LoadClient, start: Callable[[], Awaitable[Callable[[], Awaitable[None]]]],
                    interactions: int, warmup: int) -> float:
    """Connect a bot (`start` returns its close), send it the interactions, close it."""
    close = await start()
    try:
        return float((await client.ask(op="rate", requests=interactions, warmup=warmup))["rate"])
    finally:
        await close()
        await client.ask(op="reset")


async def main(rounds: int = ROUNDS, interactions: int = INTERACTIONS, warmup: int = WARMUP) -> list[str]:
    saved = discord.http.Route.BASE, discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY
    client = await LoadClient.start("discord")
    try:
        with tempfile.TemporaryDirectory() as tmp, logging_as_a_service():
            where = await client.read()
            apply_urls(where["api"], where["gateway"])
            folder = Path(tmp)
            settings = Settings(db_path=folder / "bench.db", content_dir=REPO / "content",
                                results_dir=folder / "results")
            studybot = await StudyBot.start(settings)
            work = GlossaryWork(studybot.library, "discord")
            platform = DiscordSettings(token=Secret(where["token"]), api_url=where["api"],
                                       gateway_url=where["gateway"])

            async def ours() -> Callable[[], Awaitable[None]]:
                adapter = DiscordAdapter(studybot, platform, guild_ready_timeout=0.05, ready_timeout=10)
                await adapter.start()
                return adapter.close

            def peer(with_work: GlossaryWork | None) -> Callable[[], Awaitable[Callable[[], Awaitable[None]]]]:
                async def start() -> Callable[[], Awaitable[None]]:
                    bot = PeerBot(with_work)
                    await bot.login(where["token"])
                    connection = asyncio.create_task(bot.connect(reconnect=False))
                    await asyncio.wait_for(bot.wait_until_ready(), 10)

                    async def close() -> None:
                        await bot.close()
                        await asyncio.wait_for(connection, 10)
                    return close
                return start

            bots = {"studybot": ours, "peer": peer(work), "bare": peer(None)}
            rates: dict[str, list[float]] = {name: [] for name in bots}
            try:
                names = list(bots)
                for n in range(rounds):
                    for name in names[n % len(names):] + names[:n % len(names)]:
                        rates[name].append(await connected(client, bots[name], interactions, warmup))
            finally:
                await studybot.close()
    finally:
        discord.http.Route.BASE, discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY = saved
        await client.close()
    to_peer = [o / p for o, p in zip(rates["studybot"], rates["peer"], strict=True)]
    to_bare = [o / b for o, b in zip(rates["studybot"], rates["bare"], strict=True)]
    met = statistics.median(to_peer) >= GOAL
    return [
        f"discord /glossary, dispatch to callback: {interactions} interactions in sequence per bot and round, "
        f"{rounds} rounds, the bots taking turns, the stand-in and its load in their own process "
        "(median, range over the rounds):",
        f"  fair peer (discord.py, same work) : {spread(rates['peer'], '.0f')} interactions/s",
        f"  bare discord.py, a fixed text     : {spread(rates['bare'], '.0f')} interactions/s",
        f"  studybot DiscordAdapter           : {spread(rates['studybot'], '.0f')} interactions/s",
        f"  studybot / fair peer              : {spread(to_peer)} {goal(f'>= {GOAL}', met)}",
        f"  studybot / bare discord.py        : {spread(to_bare)}",
    ]


if __name__ == "__main__":
    print(*asyncio.run(main()), sep="\n")
