"""A Discord click acknowledged with a 2xx callback survives a SIGKILL: `studybot run` (Discord, against the
gateway and REST stand-in in this process) is killed in the middle of a burst of button clicks from distinct
learners, restarted on the same database, and every click whose callback the stand-in accepted is stored
exactly once; every learner can press again after the restart and is told their first answer stands."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import sqlite3
import sys
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from readiness import until

from bot.core.config import Settings
from bot.core.messages import Actor, Command, Place
from bot.runtime.app import StudyBot
from standins.discord_standin import DiscordStandIn

REPO = Path(__file__).resolve().parents[2]

LEARNERS = 60
CONCURRENCY = 8  # clicks in flight at once
KILL_AFTER = 20  # acknowledged clicks before the SIGKILL
CALLBACK = re.compile(r"/interactions/(\d+)/[^/]+/callback")

RELIABILITY = [
    ("`studybot run` on Discord (real discord.py against the gateway/REST stand-in) SIGKILLed mid-burst of button "
     f"clicks from distinct learners ({CONCURRENCY} in flight), then restarted on the same database",
     f"{LEARNERS} learners, kill after {KILL_AFTER} acknowledged clicks",
     "every click whose interaction callback got a 2xx is stored exactly once; no learner has two answers; after "
     "the restart every learner's click is acknowledged and each has exactly one answer"),
]


@pytest.fixture
async def fake() -> AsyncIterator[DiscordStandIn]:
    async with DiscordStandIn() as standin:
        yield standin


async def button_tokens(db: Path, guild: str, channel: str) -> dict[str, str]:
    """Each learner's first /quiz question (its first choice), made through a bot on the same database."""
    bot = await StudyBot.start(Settings(db_path=db, content_dir=REPO / "content"))
    tokens = {}
    try:
        for n in range(LEARNERS):
            user = str(900_000_000_000_000_000 + n)
            [reply] = await bot.handle(Command("quiz", "", Actor("discord", guild, user, f"learner{n}"),
                                               Place("discord", guild, channel)))
            tokens[user] = reply.choices[0].token
    finally:
        await bot.close()
    return tokens


def question_message(fake: DiscordStandIn, token: str) -> dict[str, Any]:
    """A minimal bot message in the stand-in's channel that carries the learner's button."""
    return {
        "id": fake.snowflake(), "channel_id": fake.channel_id, "guild_id": fake.guild_id, "type": 0,
        "content": "question 1", "author": fake.bot_user(), "attachments": [], "embeds": [], "mentions": [],
        "mention_roles": [], "mention_everyone": False, "pinned": False, "tts": False,
        "timestamp": datetime.now(UTC).isoformat(), "edited_timestamp": None, "flags": 64,
        "components": [{"type": 1, "components": [
            {"type": 2, "style": 2, "label": "A.", "custom_id": "sb:" + token},
        ]}],
    }


async def start_bot(fake: DiscordStandIn, env: dict[str, str], log: Path) -> asyncio.subprocess.Process:
    fake.reset_connection_state()
    with log.open("ab") as out:
        proc = await asyncio.create_subprocess_exec(sys.executable, "-m", "adapters.cli", "run", env=env,
                                                    cwd=log.parent,  # not the checkout: no developer's .env
                                                    stdin=asyncio.subprocess.DEVNULL, stdout=out, stderr=out)
    # it logs warnings only: its IDENTIFY to the stand-in says it is up
    await until(fake.identified.is_set, "identify to the Discord stand-in", proc, log)
    return proc


def answers_by_learner(db: Path) -> dict[str, int]:
    with sqlite3.connect(db) as conn:
        return dict(conn.execute(
            "SELECT l.user_id, COUNT(a.id) FROM learners l LEFT JOIN answers a ON a.learner_id = l.id"
            " WHERE l.platform = 'discord' GROUP BY l.user_id"
        ).fetchall())


def acknowledged(fake: DiscordStandIn, clicks: dict[str, str]) -> set[str]:
    """The learners (by interaction id in `clicks`) whose callback the stand-in answered with a 2xx."""
    users = set()
    for call in fake.calls:
        m = CALLBACK.fullmatch(call.path)
        if call.method == "POST" and m and m.group(1) in clicks and call.status and 200 <= call.status < 300:
            users.add(clicks[m.group(1)])
    return users


async def test_acknowledged_discord_clicks_survive_a_sigkill_mid_burst(fake: DiscordStandIn, tmp_path: Path) -> None:
    db = tmp_path / "bot.db"
    tokens = await button_tokens(db, fake.guild_id, fake.channel_id)
    env = {k: v for k, v in os.environ.items()
           if "PROXY" not in k.upper() and not k.startswith(("SLACK_", "DISCORD_", "STUDYBOT_"))}
    env.update(DISCORD_TOKEN=fake.token, DISCORD_API_URL=fake.api_base, DISCORD_GATEWAY_URL=fake.gateway_url,
               STUDYBOT_DB=str(db), STUDYBOT_CONTENT=str(REPO / "content"),
               STUDYBOT_RESULTS_DIR=str(tmp_path / "results"), STUDYBOT_LOG_LEVEL="WARNING")
    log = tmp_path / "studybot.log"

    proc = await start_bot(fake, env, log)
    clicks: dict[str, str] = {}  # interaction id -> learner
    acked: set[str] = set()
    in_flight = asyncio.Semaphore(CONCURRENCY)

    async def click(user: str) -> None:
        async with in_flight:
            if proc.returncode is not None:
                return
            payload = fake.component("sb:" + tokens[user], question_message(fake, tokens[user]), user_id=user)
            clicks[payload["id"]] = user
            try:
                result = await fake.interact(payload, timeout=2)
            except (TimeoutError, RuntimeError, ConnectionError):  # killed: no callback, or no gateway to dispatch on
                return
        if 200 <= result.status < 300:
            acked.add(user)
            if len(acked) == KILL_AFTER:
                proc.send_signal(signal.SIGKILL)

    await asyncio.wait_for(asyncio.gather(*(click(user) for user in tokens)), 10)
    assert await asyncio.wait_for(proc.wait(), 5) == -signal.SIGKILL

    on_the_wire = acknowledged(fake, clicks)
    stored = answers_by_learner(db)
    assert acked <= on_the_wire
    assert KILL_AFTER <= len(on_the_wire) < LEARNERS, (len(on_the_wire), log.read_text()[-2000:])  # mid-burst
    assert all(stored.get(user) == 1 for user in on_the_wire), (on_the_wire, stored)
    assert all(stored.get(user, 0) <= 1 for user in tokens)

    proc = await start_bot(fake, env, log)  # every learner presses again after the restart
    try:
        results = {}
        for user in tokens:
            payload = fake.component("sb:" + tokens[user], question_message(fake, tokens[user]), user_id=user)
            results[user] = await fake.interact(payload, timeout=3)
    finally:
        proc.terminate()
        assert await asyncio.wait_for(proc.wait(), 10) == 0, log.read_text()[-2000:]
    assert all(r.status == 200 and r.data["flags"] == 64 for r in results.values())
    assert answers_by_learner(db) == dict.fromkeys(tokens, 1)
    for user in on_the_wire:
        assert results[user].data["content"].startswith("You already answered this question"), user
