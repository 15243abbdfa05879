"""The weekly leaderboard post: once at the configured local time, never twice, and after
downtime only the latest missed week, once."""

from dataclasses import replace
from datetime import time
from zoneinfo import ZoneInfo

import pytest

from bot.core.config import CohortSettings, LeaderboardSchedule
from bot.core.messages import Cohort
from bot.runtime.app import StudyBot
from bot.runtime.scheduler import fire_due

pytestmark = pytest.mark.both_engines


class Outbox:
    def __init__(self) -> None:
        self.sent = []

    async def send(self, reply):
        self.sent.append(reply)

    async def edit(self, ref, reply):
        raise AssertionError


@pytest.fixture
def weekly(settings):
    plan = LeaderboardSchedule(channel="C0001", weekday=0, at=time(9, 0))  # Mondays 09:00 Berlin
    return replace(settings, cohorts={Cohort("slack", "T0001"): CohortSettings(ZoneInfo("Europe/Berlin"), plan)})


async def run_hours(bot, clock, outbox, hours):
    for _ in range(hours):
        clock.advance(3600)
        await fire_due(bot, {"slack": outbox})


async def test_posts_once_at_local_time_and_not_again_after_restart(weekly, clock) -> None:
    clock.set("2026-11-30T06:30:00+00:00")  # Monday 07:30 in Berlin
    bot = await StudyBot.start(weekly, clock)
    outbox = Outbox()
    await run_hours(bot, clock, outbox, 1)  # 08:30 Berlin
    assert outbox.sent == []
    await run_hours(bot, clock, outbox, 1)  # 09:30 Berlin
    [post] = outbox.sent
    assert post.place.channel_id == "C0001" and "week 2026-W48 (Europe/Berlin)" in post.text
    await bot.close()
    bot = await StudyBot.start(weekly, clock)  # a restart in the same week
    await run_hours(bot, clock, outbox, 24 * 6)
    assert len(outbox.sent) == 1
    await run_hours(bot, clock, outbox, 24)  # the next Monday
    assert len(outbox.sent) == 2 and "2026-W49" in outbox.sent[1].text
    await bot.close()


async def test_after_downtime_only_the_latest_missed_week_once(weekly, clock) -> None:
    clock.set("2026-11-30T06:30:00+00:00")
    bot = await StudyBot.start(weekly, clock)
    await bot.close()
    clock.set("2026-12-17T12:00:00+00:00")  # down through two Mondays (Dec 7 and Dec 14)
    bot = await StudyBot.start(weekly, clock)
    outbox = Outbox()
    await fire_due(bot, {"slack": outbox})
    await run_hours(bot, clock, outbox, 24)
    [post] = outbox.sent
    assert "2026-W50" in post.text  # the week before Monday Dec 14
    await bot.close()
