"""The runner against fake adapters registered as platforms: a rejected token stops start-up, an
unreachable platform is retried with a bounded exponential backoff (one log line per attempt),
a stop ends every state (connecting, retrying, serving) with every adapter closed, and a
database file replaced under the bot stops it."""

from __future__ import annotations

import asyncio
import logging
import os
import re
import socket
from dataclasses import replace
from datetime import time, timedelta
from pathlib import Path

import pytest
from fake_platform import REJECTED, FakeAdapter, FakeSettings, platform

from adapters.discord_settings import DISCORD, DiscordSettings
from adapters.runner import Backoff, check_channels, check_ports, run_platforms
from adapters.slack_settings import SLACK, SlackSettings
from bot.core.config import CohortSettings, DailyQuestion, LeaderboardSchedule, Secret, Settings
from bot.core.errors import PlatformRejected, SetupError, StoreUnavailable
from bot.core.messages import Cohort
from bot.runtime.app import StudyBot

QUICK = Backoff(first=0.01, cap=0.02)


async def until(condition, what: str) -> None:
    for _ in range(500):
        if condition():
            return
        await asyncio.sleep(0.01)
    pytest.fail(f"never {what}")


def run(bot, configured, stop: asyncio.Event, backoff: Backoff = QUICK) -> asyncio.Task[None]:
    return asyncio.create_task(run_platforms(bot, configured, stop, backoff=backoff))


def test_the_backoff_doubles_from_one_second_up_to_a_minute() -> None:
    delays = Backoff().delays()
    assert [next(delays) for _ in range(9)] == [1, 2, 4, 8, 16, 32, 60, 60, 60]


async def test_an_unreachable_platform_is_retried_with_one_line_per_attempt(bot, caplog) -> None:
    caplog.set_level(logging.INFO, "studybot.runner")
    fake = FakeSettings(["unreachable", "unreachable", "unreachable", "serve"])
    stop = asyncio.Event()
    task = run(bot, {platform(): fake}, stop)
    await until(lambda: any(a.started for a in fake.made), "connected")
    stop.set()
    await asyncio.wait_for(task, 5)
    retries = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert retries == [
        "fake is unreachable (connection refused by 127.0.0.1:9); attempt 1 failed, retrying in 0.01 s",
        "fake is unreachable (connection refused by 127.0.0.1:9); attempt 2 failed, retrying in 0.02 s",
        "fake is unreachable (connection refused by 127.0.0.1:9); attempt 3 failed, retrying in 0.02 s",
    ]
    assert len(fake.made) == 4 and all(a.closed for a in fake.made)  # a fresh adapter per attempt, each closed
    assert "fake connected" in caplog.messages and "studybot is running on fake" in caplog.messages


@pytest.mark.parametrize("name", ["slack", "discord"])
async def test_each_attempt_to_reach_a_real_platform_logs_one_line(bot, caplog, name: str) -> None:
    """The SDKs' own lines (a connection retry of their own, "logging in") would double every attempt."""
    caplog.set_level(logging.INFO)
    with socket.socket() as refusing:  # bound but not listening: every connection is refused
        refusing.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{refusing.getsockname()[1]}/api"
        configured = ({SLACK: SlackSettings(bot_token=Secret("xoxb-1"), app_token=Secret("xapp-1"), api_url=url)}
                      if name == "slack" else {DISCORD: DiscordSettings(token=Secret("a.b.c"), api_url=url)})
        stop = asyncio.Event()
        task = run(bot, configured, stop)
        await until(lambda: sum("retrying in" in m for m in caplog.messages) >= 3, "retried three times")
        stop.set()
        await asyncio.wait_for(task, 5)
    lines = [f"{r.name}: {r.getMessage()}" for r in caplog.records if r.getMessage() != "stopping"]
    assert all(line.startswith("studybot.runner: ") and "retrying in" in line for line in lines), lines


async def test_each_process_lists_the_platforms_it_serves(bot, caplog) -> None:
    caplog.set_level(logging.INFO, "studybot.runner")
    stop = asyncio.Event()
    task = run(bot, {platform(): FakeSettings(["serve"])}, stop)
    listed: list[str] = []

    async def beaten() -> None:
        while not any(listed):
            listed[:] = [p.platforms for p in await bot.store.processes.listed()]
            await asyncio.sleep(0.01)

    await asyncio.wait_for(beaten(), 5)
    stop.set()
    await asyncio.wait_for(task, 5)
    assert listed == ["fake"]


async def test_a_rejected_token_stops_start_up_and_closes_the_others(bot) -> None:
    waiting, rejecting = FakeSettings(["hang"]), FakeSettings(["unreachable", "reject"])
    with pytest.raises(PlatformRejected, match=re.escape(REJECTED)):
        await asyncio.wait_for(run(bot, {platform("a"): waiting, platform("b"): rejecting}, asyncio.Event()), 5)
    assert [a.closed for a in (*waiting.made, *rejecting.made)] == [True, True, True]


@pytest.mark.parametrize("state, behaviours", [
    ("connecting", ["hang"]),
    ("retrying", ["unreachable"]),
    ("serving", ["serve"]),
])
async def test_a_stop_ends_every_state(bot, caplog, state: str, behaviours: list[str]) -> None:
    caplog.set_level(logging.INFO, "studybot.runner")
    fake = FakeSettings(behaviours)
    stop = asyncio.Event()
    task = run(bot, {platform(): fake}, stop, backoff=Backoff(first=600))  # retrying: a ten-minute wait
    if state == "serving":
        await until(lambda: "studybot is running on fake" in caplog.messages, "serving")
    elif state == "retrying":
        await until(lambda: any("retrying in 600 s" in m for m in caplog.messages), "retrying")
    else:
        await until(lambda: fake.made, "connecting")
    stop.set()
    await asyncio.wait_for(task, 5)
    assert fake.made and all(a.closed for a in fake.made)
    assert ("fake connected" in caplog.messages) is (state == "serving")


async def test_a_database_file_replaced_under_the_bot_stops_it(bot, caplog) -> None:
    caplog.set_level(logging.INFO)
    fake = FakeSettings(["serve"])
    task = run(bot, {platform(): fake}, asyncio.Event())
    await until(lambda: "studybot is running on fake" in caplog.messages, "serving")
    db: Path = bot.settings.db_path
    os.replace(db, db.with_name("moved.db"))
    db.write_bytes(b"")
    with pytest.raises(StoreUnavailable, match=f"the database file {db} was deleted or replaced"):
        await asyncio.wait_for(task, 5)  # the scheduler's next heartbeat is a write: it finds out
    assert fake.made[0].closed


def test_a_port_in_use_or_shared_is_named_before_anything_starts() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        slack = SlackSettings(bot_token=Secret("xoxb-1"), signing_secret=Secret("s"), http_host="127.0.0.1",
                              http_port=port)
        with pytest.raises(SetupError) as caught:
            check_ports({SLACK: slack}, None)
        assert str(caught.value) == (f"STUDYBOT_HTTP_PORT: port {port} on 127.0.0.1 is in use; stop the program that "
                                     "holds it or set STUDYBOT_HTTP_PORT to a free port")
        with pytest.raises(SetupError, match=f"STUDYBOT_METRICS_PORT: {port} is also STUDYBOT_HTTP_PORT"):
            check_ports({SLACK: slack}, port)
        with pytest.raises(SetupError, match=f"STUDYBOT_METRICS_PORT: port {port} on 127.0.0.1 is in use"):
            check_ports({}, port)  # /metrics listens on 127.0.0.1 unless STUDYBOT_METRICS_HOST says otherwise
        with pytest.raises(SetupError, match=f"STUDYBOT_METRICS_PORT: port {port} on 0.0.0.0 is in use"):
            check_ports({}, port, "0.0.0.0")


def test_a_shared_port_may_be_held_by_processes_that_share_it_but_by_no_other_program() -> None:
    with socket.socket() as sharing:  # another studybot with STUDYBOT_REUSE_PORT=1
        sharing.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        sharing.bind(("127.0.0.1", 0))
        sharing.listen()
        port = sharing.getsockname()[1]
        slack = SlackSettings(bot_token=Secret("xoxb-1"), signing_secret=Secret("s"), http_host="127.0.0.1",
                              http_port=port, reuse_port=True)
        check_ports({SLACK: slack}, None)  # no error: the port is shared
        with pytest.raises(SetupError, match=f"port {port} on 127.0.0.1 is in use"):
            check_ports({SLACK: replace(slack, reuse_port=False)}, None)
    with socket.socket() as taken:  # a program that does not share its port
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        slack = replace(slack, http_port=taken.getsockname()[1])
        with pytest.raises(SetupError, match="is in use"):
            check_ports({SLACK: slack}, None)


def test_reuse_port_is_read_as_on_or_off() -> None:
    assert SlackSettings.from_env({"STUDYBOT_REUSE_PORT": "1"}).reuse_port
    assert not SlackSettings.from_env({}).reuse_port
    with pytest.raises(SetupError, match="STUDYBOT_REUSE_PORT: 'maybe' is neither on nor off"):
        SlackSettings.from_env({"STUDYBOT_REUSE_PORT": "maybe"})


async def test_a_configured_channel_studybot_cannot_post_in_is_reported_once_serving(
        settings: Settings, clock, caplog) -> None:
    caplog.set_level(logging.WARNING, "studybot.runner")
    cohorts = {Cohort("fake", "F1"): CohortSettings(leaderboard=LeaderboardSchedule("GONE1", 0, time(9)),
                                                    daily=DailyQuestion("OK1", time(9)))}
    bot = await StudyBot.start(replace(settings, cohorts=cohorts), clock)
    try:
        stop = asyncio.Event()
        task = run(bot, {platform(): FakeSettings(["serve"])}, stop)
        await until(lambda: any("cohorts.F1.leaderboard.channel" in m for m in caplog.messages), "checked")
        stop.set()
        await asyncio.wait_for(task, 5)
        [problem] = await bot.store.timers.given_up(clock.now() - timedelta(hours=1))
        assert problem.timer == "cohorts.F1.leaderboard.channel"
        assert problem.reason == ("studybot cannot post in channel GONE1 (no such channel); invite it there or "
                                  "correct cohorts.F1.leaderboard.channel")
    finally:
        await bot.close()


async def test_health_shows_each_channel_as_the_latest_check_found_it(settings: Settings, clock) -> None:
    """A channel found broken at two start-ups is listed once; once a later start-up finds it fixed
    (the operator invited studybot), it is no longer listed."""
    def cohorts(channel: str) -> dict:
        return {Cohort("fake", "F1"): CohortSettings(daily=DailyQuestion(channel, time(9)))}

    bot = await StudyBot.start(replace(settings, cohorts=cohorts("GONE1")), clock)
    try:
        adapter = FakeAdapter(bot, FakeSettings(["serve"]))
        for _ in range(2):  # two start-ups with the channel broken
            assert await check_channels(bot, [adapter]) == 1
        [problem] = await bot.store.timers.given_up(clock.now() - timedelta(hours=1))
        assert problem.timer == "cohorts.F1.daily.channel"
        bot.ctx.settings = replace(settings, cohorts=cohorts("FIXED1"))  # the next start-up, the config corrected
        assert await check_channels(bot, [adapter]) == 0
        assert await bot.store.timers.given_up(clock.now() - timedelta(hours=1)) == []
    finally:
        await bot.close()
