"""/timezone: a learner's own time zone, where their days begin (streaks, tracks): an IANA name kept per
learner; without one, their cohort's (`Context.learner_zone` is the one lookup every feature uses)."""

from __future__ import annotations

import re
from datetime import datetime
from functools import cache
from zoneinfo import ZoneInfo, available_timezones

from bot.core.errors import StudyError
from bot.core.messages import Command, Reply
from bot.core.suggest import closest
from bot.kit.commands import Option, command
from bot.kit.context import Context
from bot.kit.feature import Feature

OFFSET = re.compile(r"^(utc|gmt)?\s*[+-]\s*\d{1,2}(:?\d{2})?$", re.IGNORECASE)  # UTC+2, GMT-05:00, +02:00
NO_PLACE = frozenset({"localtime", "factory"})  # the server's own zone, whatever it is; a zone with no offset ("-00")
PLACES = "Use a name such as Europe/Berlin or America/New_York, or /timezone off to use your cohort's."


@cache
def _zones() -> dict[str, str]:
    """The known IANA zone names, by their lower-case form (each a place's)."""
    return {name.lower(): name for name in available_timezones() if name.lower() not in NO_PLACE}


def zone_named(text: str) -> str:
    """The IANA zone a learner typed (any case), or StudyError saying what to type."""
    found = _zones().get(text.strip().lower())
    if found is None and OFFSET.match(text.strip()):
        raise StudyError(f"'{text.strip()[:40]}' is an offset, which summer time moves; name your place's time "
                         f"zone instead. {PLACES}")
    if found is None:
        guess = closest(text.strip(), list(_zones().values()))
        hint = f" Did you mean {guess}?" if guess else ""
        raise StudyError(f"'{text.strip()[:40]}' is not a time zone.{hint} {PLACES}")
    return found


def zone_now(zone: ZoneInfo, now: datetime) -> str:
    """The zone's offset and time now, as a check that it is the one meant: "UTC+02:00; it is 11:00 there now"."""
    local = now.astimezone(zone)
    offset = local.strftime("%z") or "+0000"
    return f"UTC{offset[:3]}:{offset[3:5]}; it is {local:%H:%M} there now"


@command(summary="Your time zone, where your study days begin",
         options=(Option("zone", "an IANA name such as Europe/Berlin, or off for the cohort's"),))
async def timezone(ctx: Context, cmd: Command) -> list[Reply]:
    """/timezone: the time zone your study days (streaks) are counted in.
    /timezone Area/City|off: your own time zone, such as Europe/Berlin; off: your cohort's again."""
    cohort_zone = ctx.zone(cmd.actor.in_cohort).key
    text = cmd.args.strip()
    if not text:
        zone = await ctx.learner_zone(cmd.actor)
        own = zone.key != cohort_zone or (await ctx.store.learners.choices(cmd.actor)).timezone is not None
        return [Reply(f"Your time zone: {zone.key} ({zone_now(zone, ctx.clock.now())})"
                      + ("" if own else ", your cohort's")
                      + ". Change it with /timezone Area/City, such as /timezone Europe/Berlin.")]
    if text.lower() in ("off", "cohort"):
        await ctx.store.learners.choose(cmd.actor, "timezone", None)
        return [Reply(f"Your days now follow your cohort's time zone, {cohort_zone}.")]
    zone_name = zone_named(text)
    await ctx.store.learners.choose(cmd.actor, "timezone", zone_name)
    return [Reply(f"Your time zone is now {zone_name} ({zone_now(ZoneInfo(zone_name), ctx.clock.now())}): "
                  "your days begin at midnight there.")]


FEATURE = Feature("timezone", commands=(timezone,))
