"""Signed `/glossary` round trips per second: studybot's SlackAdapter (HTTP mode) against a bare
slack-bolt AsyncApp whose one command acks a fixed text, both in this process, both talking to the
loopback Slack stand-in. The ratio is the price of the core (lookup, logging) and the adapter."""

from __future__ import annotations

import asyncio
import tempfile
import time
from pathlib import Path

import aiohttp
from aiohttp import web
from slack_bolt.async_app import AsyncApp
from slack_sdk.web.async_client import AsyncWebClient

from adapters.slack_app import SlackAdapter
from adapters.slack_settings import SlackSettings
from benchmarks import goal
from bot.core.config import Secret, Settings
from bot.runtime.app import StudyBot
from standins.slack_standin import SlackStandIn, post_signed, slash_command

REPO = Path(__file__).resolve().parents[1]

REQUESTS = 300
WARMUP = 20
GOAL = 0.5


async def rate(url: str, requests: int = REQUESTS) -> float:
    """Sequential signed /glossary posts per second (each body signed in the loop, as Slack does)."""
    async with aiohttp.ClientSession() as session:
        for _ in range(WARMUP):
            await post_signed(session, *slash_command("/glossary", "mfu"), url=url)
        started = time.perf_counter()
        for _ in range(requests):
            status, _ = await post_signed(session, *slash_command("/glossary", "mfu"), url=url)
            assert status == 200, status
        return requests / (time.perf_counter() - started)


async def serve_bare(fake: SlackStandIn) -> tuple[web.AppRunner, str]:
    app = AsyncApp(client=AsyncWebClient(token=fake.bot_token, base_url=fake.api_url),
                   signing_secret=fake.signing_secret, process_before_response=True)

    @app.command("/glossary")
    async def glossary(ack) -> None:
        await ack("MFU: the share of peak throughput spent on the model's own math.")

    runner = web.AppRunner(app.web_app(path="/slack/events"))
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    return runner, f"http://127.0.0.1:{port}/slack/events"


async def main() -> list[str]:
    with tempfile.TemporaryDirectory() as tmp:
        async with SlackStandIn() as fake:
            settings = Settings(db_path=Path(tmp) / "bench.db", content_dir=REPO / "content",
                                results_dir=Path(tmp) / "results")
            bot = await StudyBot.start(settings)
            adapter = SlackAdapter(bot, SlackSettings(bot_token=Secret(fake.bot_token),
                                                      signing_secret=Secret(fake.signing_secret),
                                                      api_url=fake.api_url, http_host="127.0.0.1", http_port=0))
            await adapter.start()
            runner, bare_url = await serve_bare(fake)
            try:
                ours_url = f"http://127.0.0.1:{adapter.port}/slack/events"
                bare = max([await rate(bare_url), await rate(bare_url)])
                ours = max([await rate(ours_url), await rate(ours_url)])
            finally:
                await runner.cleanup()
                await adapter.close()
                await bot.close()
    ratio = ours / bare
    return [
        f"slack /glossary round trips, {REQUESTS} sequential signed requests (best of 2):",
        f"  bare slack-bolt AsyncApp : {bare:8.0f} req/s",
        f"  studybot SlackAdapter    : {ours:8.0f} req/s",
        f"  ratio                    : {ratio:8.2f} {goal(f'>= {GOAL}', ratio >= GOAL)}",
    ]


if __name__ == "__main__":
    print(*asyncio.run(main()), sep="\n")
