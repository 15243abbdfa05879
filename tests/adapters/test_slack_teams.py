"""Teams on Slack: real slack-bolt against the stand-in, a real SQLite file. A configured team and one a
learner joins with /team join; a one-question round whose summary, posted in the channel, tallies by team;
/leaderboard teams privately, and an instructor's /leaderboard post teams in the channel."""

from __future__ import annotations

from pathlib import Path

from support import CORE_PACK
from test_slack_app import buttons, click, command, correct_button, first_question

from adapters.slack_app import SlackAdapter
from adapters.slack_settings import SlackSettings
from bot.core.clock import FixedClock
from bot.core.config import Settings
from bot.runtime.app import StudyBot
from bot.runtime.scheduler import fire_due
from standins.slack_standin import SlackStandIn

TEACHER = "U0TEACH"


async def test_teams_join_tally_a_round_and_get_their_board(tmp_path: Path, fake: SlackStandIn,
                                                            slack: SlackSettings) -> None:
    plain = Settings(db_path=tmp_path / "bot.db", content_dir=CORE_PACK, results_dir=tmp_path / "results")
    settings = plain.with_config(
        {"cohorts": {"T0001": {"platform": "slack", "instructors": [TEACHER], "teams": {"red": ["U0002"]},
                               "team_join": True}}})
    clock = FixedClock()
    bot = await StudyBot.start(settings, clock)
    adapter = SlackAdapter(bot, slack)
    await adapter.start()
    try:
        assert (await command(adapter, fake, "/team", "join blue", user_id="U0003")).startswith("You joined team blue")
        assert "put you in your team" in await command(adapter, fake, "/team", "join blue", user_id="U0002")
        assert (await command(adapter, fake, "/quiz", "round core-basics 1")).startswith("Round started")
        [(channel, ts)] = list(fake.messages)
        blocks = fake.messages[(channel, ts)]["blocks"]
        right = correct_button(bot, blocks)
        wrong = next(b for b in buttons(blocks)[: len(first_question(bot).choices)] if b is not right)
        for user, button in (("U0002", right), ("U0003", wrong), ("U0004", right)):  # U0004: no team
            assert await click(adapter, fake, button, user, message_ts=ts) == 200
        clock.advance(settings.round_seconds + 1)
        await fire_due(bot, {"slack": adapter})
        summary = fake.calls_to("chat.postMessage")[-1].params
        assert summary["channel"] == "C0001" and summary["text"].startswith("Round over.")
        assert "By team: red 1 · blue 0" in summary["text"]

        board = await command(adapter, fake, "/leaderboard", "teams", user_id="U0003")
        assert "1. red · 1 (u0002 1)" in board and "2. blue · 0" in board and board.endswith("Your team: blue.")
        assert (await command(adapter, fake, "/leaderboard", "post teams", user_id=TEACHER)) == "Posted."
        posted = fake.calls_to("chat.postMessage")[-1].params
        assert posted["channel"] == "C0001" and "Team board · week" in posted["text"]
        assert "1. red · 1" in posted["text"]
    finally:
        await adapter.close()
        await bot.close()
