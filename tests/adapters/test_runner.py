"""`studybot run` with both tokens set: Slack and Discord in one process on one database, and a
clean stop on SIGTERM."""

from __future__ import annotations

import asyncio
import os
import signal
import sqlite3
from pathlib import Path

from readiness import running
from test_slack_crash import free_port, start_bot

from standins.discord_standin import DiscordStandIn
from standins.slack_standin import SlackStandIn, post_signed, slash_command

REPO = Path(__file__).resolve().parents[2]


async def test_one_process_serves_both_platforms_and_stops_cleanly(tmp_path: Path) -> None:
    async with SlackStandIn() as slack, DiscordStandIn() as discord:
        port = free_port()
        db = tmp_path / "bot.db"
        env = {k: v for k, v in os.environ.items()
               if "PROXY" not in k.upper() and not k.startswith(("SLACK_", "DISCORD_", "STUDYBOT_"))}
        env.update(SLACK_BOT_TOKEN=slack.bot_token, SLACK_SIGNING_SECRET=slack.signing_secret,
                   SLACK_API_URL=slack.api_url, STUDYBOT_HTTP_HOST="127.0.0.1", STUDYBOT_HTTP_PORT=str(port),
                   DISCORD_TOKEN=discord.token, DISCORD_API_URL=discord.api_base,
                   DISCORD_GATEWAY_URL=discord.gateway_url, STUDYBOT_DB=str(db),
                   STUDYBOT_CONTENT=str(REPO / "content"), STUDYBOT_RESULTS_DIR=str(tmp_path / "results"))
        log = tmp_path / "studybot.log"
        proc = await start_bot(env, port, log)  # returns once Slack HTTP mode listens
        try:
            await running(log, proc)  # both platforms connected
            status, text = await post_signed(f"http://127.0.0.1:{port}/slack/events",
                                             *slash_command("/glossary", "mfu"))
            assert status == 200 and "MFU" in text
            answer = await discord.interact(discord.slash("glossary", {"term": "FSDP"}), timeout=5)
            assert "FSDP" in answer.data["content"]
        finally:
            proc.send_signal(signal.SIGTERM)
            code = await asyncio.wait_for(proc.wait(), 15)
        assert code == 0, log.read_text()[-2000:]
    text = log.read_text()
    assert "slack connected" in text and "discord connected" in text and "stopping" in text
    assert "handled platform=slack" in text and "handled platform=discord" in text  # one log, one process
    with sqlite3.connect(db) as conn:  # the store was closed cleanly: nothing left in the WAL to replay
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert not Path(str(db) + "-wal").exists() or Path(str(db) + "-wal").stat().st_size == 0
