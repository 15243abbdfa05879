"""A `studybot run` session in Slack HTTP mode (real slack-bolt, the Slack stand-in) with JSON logs
and a metrics port: /metrics on the Slack port and on STUDYBOT_METRICS_PORT, parsed with
prometheus-client's own parser, counts what happened and holds no user id or typed text in any
label; every line the process logged is one JSON object; SIGTERM while serving ends it with 0."""

from __future__ import annotations

import asyncio
import io
import json
import logging
import os
import signal
import socket
import sys
from pathlib import Path

import aiohttp
from prometheus_client.parser import text_string_to_metric_families
from readiness import listening
from support import CORE_PACK

from bot.core.config import Settings
from bot.core.logs import configure
from bot.core.messages import Actor, Command, Place, TimerFired, TimerKey
from bot.runtime.app import StudyBot
from standins.slack_standin import SlackStandIn, block_actions, post_signed, slash_command

USERS = ("U0001", "U0002", "U0003")
TYPED = "zebrafish"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def a_question_for(db: Path, user: str) -> str:
    """The token of a right answer to `user`'s first /quiz question, made on the bot's database."""
    bot = await StudyBot.start(Settings(db_path=db, content_dir=CORE_PACK))
    try:
        who, where = Actor("slack", "T0001", user, user), Place("slack", "T0001", "C1")
        [reply] = await bot.handle(Command("quiz", "", who, where))
    finally:
        await bot.close()
    return reply.choices[0].token


def families(text: str) -> dict[str, list[tuple[dict[str, str], float]]]:
    return {f.name: [(s.labels, s.value) for s in f.samples] for f in text_string_to_metric_families(text)}


async def test_metrics_and_json_logs_of_a_session(tmp_path: Path) -> None:
    db = tmp_path / "bot.db"
    token = await a_question_for(db, "U0002")
    port, metrics_port = free_port(), free_port()
    async with SlackStandIn() as slack:
        env = {k: v for k, v in os.environ.items()
               if "PROXY" not in k.upper() and not k.startswith(("SLACK_", "DISCORD_", "STUDYBOT_"))}
        env.update(SLACK_BOT_TOKEN=slack.bot_token, SLACK_SIGNING_SECRET=slack.signing_secret,
                   SLACK_API_URL=slack.api_url, STUDYBOT_HTTP_HOST="127.0.0.1", STUDYBOT_HTTP_PORT=str(port),
                   STUDYBOT_METRICS_PORT=str(metrics_port), STUDYBOT_LOG_FORMAT="json", STUDYBOT_DB=str(db),
                   STUDYBOT_CONTENT=str(CORE_PACK), STUDYBOT_RESULTS_DIR=str(tmp_path / "results"))
        log = tmp_path / "studybot.log"
        with log.open("wb") as out:
            proc = await asyncio.create_subprocess_exec(sys.executable, "-m", "adapters.cli", "run", env=env,
                                                        cwd=tmp_path, stdin=asyncio.subprocess.DEVNULL, stdout=out,
                                                        stderr=out)
        try:
            await listening(port, proc, log)
            url = f"http://127.0.0.1:{port}/slack/events"
            assert (await post_signed(url, *slash_command("/glossary", "mfu", user_id=USERS[0])))[0] == 200
            assert (await post_signed(url, *slash_command("/glossary", TYPED, user_id=USERS[1])))[0] == 200
            assert (await post_signed(url, *slash_command(f"/{TYPED}", "", user_id=USERS[2])))[0] == 200
            status, _ = await post_signed(url, *block_actions("studybot:answer", token, user_id="U0002"))
            assert status == 200
            await listening(metrics_port, proc, log)
            async with aiohttp.ClientSession() as http:
                scraped = []
                for where in (f"http://127.0.0.1:{port}/metrics", f"http://127.0.0.1:{metrics_port}/metrics"):
                    async with http.get(where) as response:
                        assert response.status == 200 and response.content_type == "text/plain"
                        scraped.append(await response.text())
        finally:
            proc.send_signal(signal.SIGTERM)
            code = await asyncio.wait_for(proc.wait(), 10)
    lines = log.read_text().splitlines()
    assert code == 0, lines[-20:]

    slack_port, own_port = (families(text) for text in scraped)
    assert slack_port.keys() == own_port.keys()
    events = {(labels["platform"], labels["command"], labels["outcome"]): value
              for labels, value in own_port["studybot_events"] if "platform" in labels}
    assert events[("slack", "glossary", "ok")] == 2  # a term, and a typo answered with suggestions
    assert events[("slack", "other", "refused")] == 1  # an unknown command, not named
    assert events[("slack", "button", "ok")] == 1
    latency = dict((s_labels.get("le"), value) for s_labels, value in own_port["studybot_handling_seconds"]
                   if s_labels.get("platform") == "slack")
    assert latency["+Inf"] == 4
    assert own_port["studybot_answers_recorded"] == [({}, 1.0)]
    assert own_port["studybot_database_bytes"][0][1] > 0
    assert {"studybot_timers_due", "studybot_timers_overdue", "studybot_delivery_failures"} <= own_port.keys()
    labels = {value for samples in own_port.values() for named, _ in samples for value in named.values()}
    for private in (*USERS, "T0001", "C0001", TYPED, "mfu"):
        assert not any(private in value for value in labels), private

    records = [json.loads(line) for line in lines]  # every line is one JSON object
    assert all({"time", "level", "logger", "event"} <= r.keys() for r in records)
    handled = [r for r in records if r["event"].startswith("handled ")]
    assert len(handled) == 4
    assert all(r["platform"] == "slack" and r["cohort"] == "T0001" and r["outcome"] in ("ok", "refused")
               and isinstance(r["latency_ms"], float) for r in handled)
    assert any(r["event"] == "studybot is running on slack" for r in records)
    assert TYPED not in log.read_text().replace(f"/{TYPED[:20]}", "")  # only the command name it was sent as


def test_a_json_log_line_holds_a_traceback_as_one_field() -> None:
    out = io.StringIO()
    configure("INFO", out, fmt="json")
    try:
        log = logging.getLogger("studybot.test")
        try:
            raise ValueError("line one\nline two")
        except ValueError:
            log.exception("bug ref=%s while handling %s", "abcd1234", "a timer")
        log.info("handled %s", "x", extra={"platform": "console", "cohort": "local", "outcome": "ok",
                                          "latency_ms": 1.5})
        logging.getLogger("py.warnings").warning("a warning\nover two lines")
    finally:
        configure("WARNING")
    first, second, third = (json.loads(line) for line in out.getvalue().splitlines())
    assert first["event"] == "bug ref=abcd1234 while handling a timer" and "line two" in first["error"]
    assert (second["platform"], second["cohort"], second["outcome"], second["latency_ms"]) == ("console", "local",
                                                                                               "ok", 1.5)
    assert third["level"] == "WARNING"


async def test_a_timer_counts_under_the_scheduler_not_a_learner(bot) -> None:
    from bot.runtime import metrics

    before = metrics.EVENTS.labels("scheduler", "timer", "ok")._value.get()
    await bot.handle(TimerFired(TimerKey.parse("unknown:thing"), bot.ctx.clock.now()))
    assert metrics.EVENTS.labels("scheduler", "timer", "ok")._value.get() == before + 1
