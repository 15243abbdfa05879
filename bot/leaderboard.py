"""Leaderboards per cohort: this week (in the cohort's time zone), a past week, or all time."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from bot.errors import StudyError
from bot.messages import Audience, Command, Reply

if TYPE_CHECKING:
    from bot.app import StudyBot

WEEK = re.compile(r"^\d{4}-W(0[1-9]|[1-4]\d|5[0-3])$")
USAGE = "Use /leaderboard, /leaderboard all or /leaderboard week 2026-W48."


def parse_period(bot: StudyBot, cohort: str, words: list[str]) -> str | None:
    """The week a leaderboard covers (None: all time)."""
    if not words or words == ["week"]:
        return bot.week(cohort)
    if words == ["all"]:
        return None
    if len(words) == 2 and words[0] == "week" and WEEK.match(words[1].upper()):
        return words[1].upper()
    if len(words) == 1 and WEEK.match(words[0].upper()):
        return words[0].upper()
    raise StudyError(USAGE)


async def board_text(bot: StudyBot, platform: str, cohort: str, week: str | None) -> str:
    standings = await bot.store.leaderboard(platform, cohort, week)
    zone = bot.settings.cohort(cohort).timezone
    title = f"Leaderboard · week {week} ({zone.key})" if week else "Leaderboard · all time"
    if not standings:
        return f"{title}\nNo points yet. Answer with /quiz to get on the board."
    rows = [f"{s.rank}. {s.display_name or s.user_id} · {s.points}" for s in standings]
    return "\n".join([title, *rows])


async def leaderboard_command(bot: StudyBot, cmd: Command) -> list[Reply]:
    """/leaderboard [week|all|week 2026-W48]: the cohort's leaderboard, privately.
    /leaderboard post [week|all]: post it in the channel (instructors)."""
    words = cmd.args.lower().split()
    post = bool(words) and words[0] == "post"
    if post:
        bot.require_instructor(cmd, "post the leaderboard")
        if not cmd.place.channel_id:
            raise StudyError("Post the leaderboard from a channel.")
        words = words[1:]
    week = parse_period(bot, cmd.actor.cohort, words)
    text = await board_text(bot, cmd.actor.platform, cmd.actor.cohort, week)
    if post:
        return [Reply(text, Audience.PUBLIC), Reply("Posted.")]
    mine = await bot.store.standing(cmd.actor, week)
    text += f"\nYou: rank {mine.rank} with {mine.points} points." if mine else "\nYou have no points in this period yet."
    return [Reply(text)]
