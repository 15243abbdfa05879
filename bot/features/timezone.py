"""/timezone: a learner's own time zone, where their days begin (streaks, tracks): an IANA name kept per
learner; without one, their cohort's (`Context.learner_zone` is the one lookup every feature uses)."""

from __future__ import annotations

from functools import cache
from zoneinfo import available_timezones

from bot.core.errors import StudyError
from bot.core.messages import Command, Reply
from bot.core.suggest import closest
from bot.kit.commands import Option, command
from bot.kit.context import Context
from bot.kit.feature import Feature


@cache
def _zones() -> dict[str, str]:
    """The known IANA zone names, by their lower-case form."""
    return {name.lower(): name for name in available_timezones()}


def zone_named(text: str) -> str:
    """The IANA zone a learner typed (any case), or StudyError saying what to type."""
    found = _zones().get(text.strip().lower())
    if found is None:
        guess = closest(text.strip(), list(_zones().values()))
        hint = f" Did you mean {guess}?" if guess else ""
        raise StudyError(f"'{text.strip()[:40]}' is not a time zone.{hint} Use a name such as Europe/Berlin or "
                         "America/New_York, or /timezone off to use your cohort's.")
    return found


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
        return [Reply(f"Your time zone: {zone.key}" + ("" if own else " (your cohort's)")
                      + ". Change it with /timezone Area/City, such as /timezone Europe/Berlin.")]
    if text.lower() in ("off", "cohort"):
        await ctx.store.learners.choose(cmd.actor, "timezone", None)
        return [Reply(f"Your days now follow your cohort's time zone, {cohort_zone}.")]
    zone_name = zone_named(text)
    await ctx.store.learners.choose(cmd.actor, "timezone", zone_name)
    return [Reply(f"Your time zone is now {zone_name}: your days begin at midnight there.")]


FEATURE = Feature("timezone", commands=(timezone,))
