"""Streaks: a learner's days in a row with at least one answer (a review or a teach-back is one), in their
own time zone (`Context.learner_zone`). Always reckoned from the stored answer times, never a counter that can drift;
hidden by the learner (/streak off) or for a whole cohort (`cohorts.<id>.streaks: false`)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, time, timedelta
from zoneinfo import ZoneInfo

from bot.core.messages import Actor, counted
from bot.kit.context import Context


@dataclass(frozen=True)
class Streak:
    days: int  # in a row, up to today (or yesterday while today has no answer yet)
    today: bool  # today already counts


def local_days(now: datetime, zone: ZoneInfo) -> Iterator[tuple[datetime, datetime]]:
    """Each local day from today backwards, as the moments it starts and ends (23 or 25 hours at a
    daylight-saving change)."""
    day = now.astimezone(zone).date()
    while True:
        yield datetime.combine(day, time(0), zone), datetime.combine(day + timedelta(days=1), time(0), zone)
        day -= timedelta(days=1)


async def streak(ctx: Context, actor: Actor) -> Streak | None:
    """The learner's streak; None when hidden (by them, or for their cohort)."""
    if not ctx.settings.cohort(actor.in_cohort).streaks:
        return None
    chosen = await ctx.store.learners.choices(actor)
    if chosen.streak_hidden:
        return None
    zone = ctx.zone_for(actor, chosen.timezone)
    days, today = await ctx.store.answers.streak(actor, local_days(ctx.clock.now(), zone))
    return Streak(days, today)


def streak_text(found: Streak) -> str:
    """One line: the streak, and what keeps it going."""
    if not found.days:
        return "Streak: none yet. Answer or review a question today to start one."
    if found.today:
        return f"Streak: {counted(found.days, 'day')} in a row, today included."
    return f"Streak: {counted(found.days, 'day')} in a row; answer or review a question today to keep it."


async def streak_line(ctx: Context, actor: Actor) -> str | None:
    """The streak's line for /progress and the reminder; None when hidden."""
    found = await streak(ctx, actor)
    return None if found is None else streak_text(found)
