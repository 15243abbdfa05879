"""A track step on Discord: the real discord.py against the stand-in, a real SQLite file. A learner's
first /progress starts their track; at the step's local time the scheduler sends it as a direct
message (a DM channel opened for the learner, then the message in it), once."""

from __future__ import annotations

from pathlib import Path

from support import CORE_PACK
from test_discord_app import (  # noqa: F401  (the fixtures)
    ALICE,
    discord_only,
    fixed_clock,
    private_reply,
    start,
    stop,
)

from adapters.discord_settings import DiscordSettings
from bot.core.clock import FixedClock
from bot.core.config import Settings
from bot.runtime.scheduler import fire_due
from standins.discord_standin import DiscordStandIn

TRACK = [{"day": 0, "time": "10:00", "message": "Welcome! Lesson one starts today."},
         {"day": 1, "time": "10:00", "review": "core-basics"}]


async def test_a_track_step_reaches_the_learner_by_direct_message_once(
    tmp_path: Path, fixed_clock: FixedClock, discord_fake: DiscordStandIn,  # noqa: F811
    discord_only: DiscordSettings,  # noqa: F811
) -> None:
    fake = discord_fake
    settings = Settings(db_path=tmp_path / "bot.db", content_dir=CORE_PACK, results_dir=tmp_path / "results")
    settings = settings.with_config({"cohorts": {fake.guild_id: {"platform": "discord", "timezone": "UTC",
                                                                 "track": TRACK}}})
    fixed_clock.set("2026-11-30T08:00:00+00:00")
    studybot, adapter = await start(settings, fixed_clock, discord_only)
    try:
        progress = await private_reply(fake, await fake.interact(fake.slash("progress")))
        assert "Track, next: day 0, Mon 30 Nov, 10:00 UTC: a message (/track)" in progress["content"]
        await fire_due(studybot, {"discord": adapter})
        assert fake.calls_matching("POST", r"/users/@me/channels") == []  # not yet
        fixed_clock.set("2026-11-30T10:00:00+00:00")
        await fire_due(studybot, {"discord": adapter})
        opened = await fake.wait_for_call("POST", r"/users/@me/channels")
        assert opened.json == {"recipient_id": int(ALICE)}
        in_dm = rf"/channels/{opened.response['id']}/messages"
        sent = await fake.wait_for_call("POST", in_dm)
        assert sent.json["content"] == "Your track · day 0: Welcome! Lesson one starts today."
        await fire_due(studybot, {"discord": adapter})
        assert len(fake.calls_matching("POST", in_dm)) == 1  # once
        progress = await private_reply(fake, await fake.interact(fake.slash("progress")))
        assert "Track, next: day 1, Tue 01 Dec, 10:00 UTC: a review of Core basics (/review core-basics)" in (
            progress["content"])
    finally:
        await stop(studybot, adapter)
