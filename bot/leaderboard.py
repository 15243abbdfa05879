"""Leaderboards per cohort: this week (in the cohort's time zone), a past week, or all time."""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from bot.clock import iso_week
from bot.config import Settings
from bot.errors import StudyError
from bot.messages import Audience, Command, Place, Reply, TimerFired

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
    text += f"\nYou: rank {mine.rank} with {mine.points} points." if mine else "\nNo points for you in this period yet."
    return [Reply(text)]


# ---------------------------------------------------------------- the weekly post

SCHEDULE = "leaderboard"


def schedule_keys(settings: Settings) -> list[str]:
    return [f"{SCHEDULE}:{cohort}" for cohort, c in settings.cohorts.items() if c.leaderboard]


def platform_of(cohort: str) -> str:
    """Discord guild ids are numeric snowflakes; Slack team ids start with a letter."""
    return "discord" if cohort.isdigit() else "slack"


def last_post(bot: StudyBot, cohort: str, before: datetime) -> datetime:
    """The latest scheduled moment at or before `before`, in the cohort's time zone."""
    settings = bot.settings.cohort(cohort)
    plan, zone = settings.leaderboard, settings.timezone
    local = before.astimezone(zone)
    day = local.date() - timedelta(days=(local.weekday() - plan.weekday) % 7)
    moment = datetime.combine(day, plan.at, zone)
    return moment if moment <= local else moment - timedelta(weeks=1)


def next_post(bot: StudyBot, key: str) -> datetime:
    cohort = key.split(":", 1)[1]
    return last_post(bot, cohort, bot.clock.now()) + timedelta(weeks=1)


async def on_schedule(bot: StudyBot, event: TimerFired, key: str) -> list[Reply]:
    """Post the board of the week up to the day before the post (a Monday post shows the week
    just ended). After downtime only the latest missed post goes out."""
    cohort = key.split(":", 1)[1]
    plan = bot.settings.cohort(cohort).leaderboard
    if plan is None:
        return []
    moment = last_post(bot, cohort, bot.clock.now())
    week = iso_week(moment - timedelta(days=1), bot.settings.cohort(cohort).timezone)
    platform = platform_of(cohort)
    text = await board_text(bot, platform, cohort, week)
    return [Reply(text, Audience.PUBLIC, place=Place(platform, cohort, plan.channel))]
