"""Signed `/glossary` round trips per second over Slack's HTTP mode: studybot's SlackAdapter beside a
fair peer (aiohttp alone doing the same required work: the signature checked, the form parsed, the term
looked up, the reply, a log line, the metrics and the lookup counted; `benchmarks.peers`), the same work
done in a bare slack-bolt AsyncApp (what studybot's own layers cost beyond Bolt's), and a bare AsyncApp
that acks a fixed text. The servers share this process and the loopback Slack stand-in; the load client
runs in a process of its own (`benchmarks.load_client`) and sends the requests one after another. The
servers take turns, in phases, over several rounds (each round in another order), and the figures are
the medians of the rounds; a ratio is the median of each round's ratio."""

from __future__ import annotations

import asyncio
import statistics
import tempfile
from pathlib import Path

from aiohttp import web
from slack_bolt.async_app import AsyncApp
from slack_sdk.web.async_client import AsyncWebClient

from adapters.slack_app import SlackAdapter
from adapters.slack_settings import SlackSettings
from benchmarks import goal, logging_as_a_service, spread
from benchmarks.load_client import LoadClient
from benchmarks.peers import GlossaryWork, serve, slack_peer, slack_reply
from bot.core.config import Secret, Settings
from bot.runtime.app import StudyBot
from standins.slack_standin import SlackStandIn

REPO = Path(__file__).resolve().parents[1]

ROUNDS = 7
REQUESTS = 400  # per server and round
WARMUP = 30
GOAL = 0.95  # of the fair peer


def bare_bolt(fake: SlackStandIn, work: GlossaryWork | None = None) -> web.Application:
    """slack-bolt alone: one `/glossary` that does `work` (as the fair peer does), or acks a fixed text."""
    app = AsyncApp(client=AsyncWebClient(token=fake.bot_token, base_url=fake.api_url),
                   signing_secret=fake.signing_secret, process_before_response=True)

    @app.command("/glossary")
    async def glossary(ack, command) -> None:
        if work is None:
            return await ack("*MFU*: the share of peak throughput spent on the model's own math.")
        await ack(**slack_reply(work.answer(command["team_id"], command["text"])))

    return app.web_app(path="/slack/events")


async def rounds_of(client: LoadClient, urls: dict[str, str], rounds: int, requests: int,
                    warmup: int) -> dict[str, list[float]]:
    """Each server's rate in each round; the servers take turns, the order rotated each round."""
    names = list(urls)
    for name in names:
        await client.ask(url=urls[name], requests=1, warmup=warmup)
    rates: dict[str, list[float]] = {name: [] for name in names}
    for n in range(rounds):
        for name in names[n % len(names):] + names[:n % len(names)]:
            rates[name].append((await client.ask(url=urls[name], requests=requests, warmup=warmup // 3))["rate"])
    return rates


async def main(rounds: int = ROUNDS, requests: int = REQUESTS, warmup: int = WARMUP) -> list[str]:
    with tempfile.TemporaryDirectory() as tmp, logging_as_a_service():
        async with SlackStandIn() as fake:
            settings = Settings(db_path=Path(tmp) / "bench.db", content_dir=REPO / "content",
                                results_dir=Path(tmp) / "results")
            bot = await StudyBot.start(settings)
            adapter = SlackAdapter(bot, SlackSettings(bot_token=Secret(fake.bot_token),
                                                      signing_secret=Secret(fake.signing_secret),
                                                      api_url=fake.api_url, http_host="127.0.0.1", http_port=0))
            await adapter.start()
            work = GlossaryWork(bot.library, "slack")
            peer, peer_port = await serve(slack_peer(work, fake.signing_secret))
            bolt, bolt_port = await serve(bare_bolt(fake))
            bolt_work, bolt_work_port = await serve(bare_bolt(fake, work))
            client = await LoadClient.start("slack")
            try:
                rates = await rounds_of(client, {
                    "studybot": f"http://127.0.0.1:{adapter.port}/slack/events",
                    "peer": f"http://127.0.0.1:{peer_port}/slack/events",
                    "bolt+work": f"http://127.0.0.1:{bolt_work_port}/slack/events",
                    "bolt": f"http://127.0.0.1:{bolt_port}/slack/events"}, rounds, requests, warmup)
            finally:
                await client.close()
                await bolt.cleanup()
                await bolt_work.cleanup()
                await peer.cleanup()
                await adapter.close()
                await bot.close()
    ours, peer_rates, bolt_rates = rates["studybot"], rates["peer"], rates["bolt"]
    to_peer = [o / p for o, p in zip(ours, peer_rates, strict=True)]
    to_bolt = [o / b for o, b in zip(ours, bolt_rates, strict=True)]
    to_bolt_work = [o / b for o, b in zip(ours, rates["bolt+work"], strict=True)]
    met = statistics.median(to_peer) >= GOAL
    return [
        f"slack /glossary round trips: {requests} signed requests in sequence per server and round, {rounds} rounds, "
        "the servers taking turns, the load client in its own process (median, range over the rounds):",
        f"  fair peer (aiohttp, same work)  : {spread(peer_rates, '.0f')} req/s",
        f"  slack-bolt, the same work       : {spread(rates['bolt+work'], '.0f')} req/s",
        f"  bare slack-bolt, a fixed text   : {spread(bolt_rates, '.0f')} req/s",
        f"  studybot SlackAdapter           : {spread(ours, '.0f')} req/s",
        f"  studybot / fair peer            : {spread(to_peer)} {goal(f'>= {GOAL}', met)}",
        f"  studybot / slack-bolt, same work: {spread(to_bolt_work)}",
        f"  studybot / bare slack-bolt      : {spread(to_bolt)}",
    ]


if __name__ == "__main__":
    print(*asyncio.run(main()), sep="\n")
