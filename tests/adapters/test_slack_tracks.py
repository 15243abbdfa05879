"""A track step on Slack: real slack-bolt against the stand-in, a real SQLite file. A learner's first
/progress starts their track and names the next step; at its local time the scheduler sends it as a
direct message (conversations.open, then chat.postMessage in the DM), once."""

from __future__ import annotations

from pathlib import Path

from support import CORE_PACK
from test_slack_app import command

from adapters.slack_app import SlackAdapter
from adapters.slack_settings import SlackSettings
from bot.core.clock import FixedClock
from bot.core.config import Settings
from bot.runtime.app import StudyBot
from bot.runtime.scheduler import fire_due
from standins.slack_standin import SlackStandIn

TRACK = [{"day": 0, "time": "10:00", "quiz": "core-basics"}, {"day": 1, "time": "10:00", "teachback": "core-tb1"}]


async def test_a_track_step_reaches_the_learner_by_direct_message_once(
    tmp_path: Path, fake: SlackStandIn, slack: SlackSettings
) -> None:
    settings = Settings(db_path=tmp_path / "bot.db", content_dir=CORE_PACK, results_dir=tmp_path / "results")
    settings = settings.with_config({"cohorts": {"T0001": {"platform": "slack", "timezone": "Europe/Berlin",
                                                           "track": TRACK}}})
    clock = FixedClock("2026-11-30T08:00:00+00:00")  # 09:00 in Berlin
    bot = await StudyBot.start(settings, clock)
    adapter = SlackAdapter(bot, slack)
    await adapter.start()
    try:
        progress = await command(adapter, fake, "/progress")
        assert "Track, next: day 0, Mon 30 Nov, 10:00 CET: the quiz of Core basics (/quiz core-basics)" in progress
        await fire_due(bot, {"slack": adapter})
        assert fake.calls_to("chat.postMessage") == []  # not yet: 10:00 in Berlin
        clock.set("2026-11-30T09:00:00+00:00")
        await fire_due(bot, {"slack": adapter})
        [dm] = fake.calls_to("chat.postMessage")
        assert fake.calls_to("conversations.open")[-1].params["users"] == "U0001"
        assert dm.params["channel"] == "DU0001"
        assert dm.params["text"] == "Your track · day 0: the quiz of Core basics. Type /quiz core-basics to take it."
        await fire_due(bot, {"slack": adapter})
        assert len(fake.calls_to("chat.postMessage")) == 1  # once
        progress = await command(adapter, fake, "/progress")
        assert "Track, next: day 1, Tue 01 Dec, 10:00 CET: a teach-back (core-tb1, /teachback core-tb1)" in progress
        listing = await command(adapter, fake, "/track")
        assert listing.splitlines()[1] == "✓ day 0, sent: the quiz of Core basics (/quiz core-basics)"
    finally:
        await adapter.close()
        await bot.close()
