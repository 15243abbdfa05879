"""Teams on Discord: the real discord.py against the stand-in, a real SQLite file. /team join as a typed
option, a round whose summary in the channel tallies by team, /leaderboard board:teams privately and an
instructor's post of the team board in the channel."""

from __future__ import annotations

from pathlib import Path

from support import CORE_PACK
from test_discord_app import (  # noqa: F401  (the fixtures)
    ALICE,
    BOB,
    CAROL,
    discord_only,
    fixed_clock,
    private_reply,
    public_posts,
    right,
    said,
    start,
    stop,
)

from adapters.discord_settings import DiscordSettings
from bot.core.clock import FixedClock
from bot.core.config import Settings
from bot.runtime.scheduler import fire_due
from standins.discord_standin import DiscordStandIn


async def test_teams_join_tally_a_round_and_get_their_board(
    tmp_path: Path, fixed_clock: FixedClock, discord_fake: DiscordStandIn,  # noqa: F811
    discord_only: DiscordSettings,  # noqa: F811
) -> None:
    fake = discord_fake
    settings = Settings(db_path=tmp_path / "bot.db", content_dir=CORE_PACK, results_dir=tmp_path / "results",
                        round_seconds=60).with_config(
        {"cohorts": {fake.guild_id: {"platform": "discord", "teams": {"red": [ALICE]}, "team_join": True}}})
    studybot, adapter = await start(settings, fixed_clock, discord_only)
    try:
        joined = await said(fake, fake.slash("team", {"action": "join", "name": "blue"}, user_id=BOB))
        assert joined.startswith("You joined team blue")
        started = await fake.interact(fake.slash("quiz", {"mode": "round", "lesson": "core-basics", "questions": 1}))
        assert "Round started" in (await private_reply(fake, started))["content"]
        [question] = await public_posts(fake, 1)
        for user, is_right in ((ALICE, True), (BOB, False), (CAROL, True)):  # Carol is in no team
            await fake.interact(fake.component(right(studybot, question, is_right), question, user_id=user))
        fixed_clock.advance(61)
        await fire_due(studybot, {"discord": adapter})
        summary = (await public_posts(fake, 2))[-1]["content"]
        assert summary.startswith("Round over.") and "By team: red 1 · blue 0" in summary

        board = await said(fake, fake.slash("leaderboard", {"board": "teams"}, user_id=BOB))
        assert "1. red · 1" in board and "2. blue · 0" in board and board.endswith("Your team: blue.")
        posted = fake.slash("leaderboard", {"action": "post", "board": "teams"}, user_id=CAROL)
        assert await said(fake, posted) == "Posted."
        team_board = (await public_posts(fake, 3))[-1]["content"]
        assert team_board.startswith("Team board · week 2026-W49") and "1. red · 1" in team_board
    finally:
        await stop(studybot, adapter)
