"""A click acknowledged with HTTP 200 survives a SIGKILL or a SIGTERM: `studybot run` (Slack HTTP
mode) is stopped in the middle of a burst of clicks, restarted on the same database, and every click
that got a 200 is stored exactly once; a click that never got its 200 can be sent again."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import sqlite3
import sys
from pathlib import Path

import aiohttp
import pytest
from readiness import listening

from bot.core.config import Settings
from bot.core.messages import Actor, Command, Place
from bot.runtime.app import StudyBot
from standins.slack_standin import SlackStandIn, block_actions, post_signed

REPO = Path(__file__).resolve().parents[2]
LEARNERS = 120
RELIABILITY = [
    ("`studybot run` in Slack HTTP mode (real slack-bolt) stopped with SIGKILL, and with SIGTERM, in the middle of a "
     "burst of signed button clicks from distinct learners (8 in flight), then restarted on the same database",
     "2 stops × 120 learners, stop after 30 acknowledged clicks",
     "every click that got HTTP 200 is stored exactly once; SIGTERM exits 0; after the restart every learner's click "
     "gets 200 and each has exactly one answer ('you already answered' for the repeats)"),
]
CONCURRENCY = 8  # clicks in flight at once
KILL_AFTER = 30  # acknowledged clicks before the SIGKILL


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def button_tokens(db: Path) -> dict[str, str]:
    """Each learner's first /quiz question, made through a bot on the same database."""
    bot = await StudyBot.start(Settings(db_path=db, content_dir=REPO / "content"))
    tokens = {}
    try:
        for n in range(LEARNERS):
            user = f"U{n:04d}"
            [reply] = await bot.handle(Command("quiz", "", Actor("slack", "T0001", user, user.lower()),
                                               Place("slack", "T0001", "C0001")))
            tokens[user] = reply.choices[0].token
    finally:
        await bot.close()
    return tokens


async def start_bot(env: dict[str, str], port: int, log: Path) -> asyncio.subprocess.Process:
    with log.open("ab") as out:
        proc = await asyncio.create_subprocess_exec(sys.executable, "-m", "adapters.cli", "run", env=env,
                                                    cwd=log.parent,  # not the checkout: no developer's .env
                                                    stdin=asyncio.subprocess.DEVNULL, stdout=out, stderr=out)
    await listening(port, proc, log)  # it logs warnings only: the port it serves on says it is up
    return proc


def rows_by_learner(db: Path) -> dict[str, int]:
    with sqlite3.connect(db) as conn:
        return dict(conn.execute(
            "SELECT l.user_id, COUNT(a.id) FROM learners l LEFT JOIN answers a ON a.learner_id = l.id"
            " GROUP BY l.user_id"
        ).fetchall())


@pytest.mark.parametrize("signal_name", ["SIGKILL", "SIGTERM"])
async def test_acknowledged_clicks_survive_a_stop_mid_burst(fake: SlackStandIn, tmp_path: Path,
                                                             signal_name: str) -> None:
    db = tmp_path / "bot.db"
    tokens = await button_tokens(db)
    port = free_port()
    url = f"http://127.0.0.1:{port}/slack/events"
    env = {k: v for k, v in os.environ.items()
           if "PROXY" not in k.upper() and not k.startswith(("SLACK_", "STUDYBOT_"))}
    env.pop("DISCORD_TOKEN", None)
    env.update(SLACK_BOT_TOKEN=fake.bot_token, SLACK_SIGNING_SECRET=fake.signing_secret, SLACK_API_URL=fake.api_url,
               STUDYBOT_HTTP_HOST="127.0.0.1", STUDYBOT_HTTP_PORT=str(port), STUDYBOT_DB=str(db),
               STUDYBOT_CONTENT=str(REPO / "content"), STUDYBOT_RESULTS_DIR=str(tmp_path / "results"),
               STUDYBOT_LOG_LEVEL="WARNING")
    log = tmp_path / "studybot.log"

    def signed_click(user: str) -> tuple[str, dict[str, str]]:
        return block_actions("studybot:0", tokens[user], user_id=user, user_name=user.lower(),
                             response_url=fake.response_url(user))

    proc = await start_bot(env, port, log)
    acknowledged: set[str] = set()
    in_flight = asyncio.Semaphore(CONCURRENCY)
    async with aiohttp.ClientSession() as session:

        async def send(user: str) -> None:
            try:
                async with in_flight:
                    status, _ = await post_signed(session, *signed_click(user), url=url)
            except (TimeoutError, aiohttp.ClientError):
                return
            if status == 200:
                acknowledged.add(user)
                if len(acknowledged) == KILL_AFTER:
                    proc.send_signal(getattr(signal, signal_name))

        await asyncio.wait_for(asyncio.gather(*(send(user) for user in tokens)), 8)
    exit_code = await asyncio.wait_for(proc.wait(), 10)
    if signal_name == "SIGTERM":
        assert exit_code == 0, log.read_text()[-2000:]  # a clean stop

    stored = rows_by_learner(db)
    assert KILL_AFTER <= len(acknowledged) < LEARNERS  # killed mid-burst
    assert all(stored.get(user) == 1 for user in acknowledged), (acknowledged, stored)
    assert all(stored.get(user, 0) <= 1 for user in tokens)

    proc = await start_bot(env, port, log)  # every learner presses again after the restart
    try:
        results = [await post_signed(url, *signed_click(user)) for user in tokens]
    finally:
        proc.terminate()
        assert await asyncio.wait_for(proc.wait(), 5) == 0
    assert all(status == 200 for status, _ in results)
    assert rows_by_learner(db) == {user: 1 for user in tokens}
    again = [body for user, body in fake.responses if user in acknowledged][-1]
    assert again["text"].startswith("You already answered this question")
