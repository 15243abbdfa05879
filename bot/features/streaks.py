"""/streak: a learner's days in a row of study (`bot.kit.streaks`), and turning it off or on for themselves."""

from __future__ import annotations

from bot.core.errors import StudyError
from bot.core.messages import Command, Reply
from bot.kit.commands import Option, command
from bot.kit.context import Context
from bot.kit.feature import Feature
from bot.kit.streaks import streak, streak_text


@command(summary="Your study streak: days in a row with an answer or review", name="streak",
         options=(Option("show", "show or hide your streak", choices={"on": "on", "off": "off"}),))
async def streak_command(ctx: Context, cmd: Command) -> list[Reply]:
    """/streak: your days in a row with at least one answer or review, in your time zone (/timezone).
    /streak off|on: hide your streak everywhere (/progress, the review reminder), or show it again."""
    words = cmd.args.lower().split()
    if words and words not in (["off"], ["on"]):
        raise StudyError("Use /streak, /streak off or /streak on.")
    if not ctx.settings.cohort(cmd.actor.in_cohort).streaks:
        return [Reply("Streaks are turned off for this cohort.")]
    if words:
        await ctx.store.learners.choose(cmd.actor, "streak_hidden", int(words == ["off"]))
        return [Reply("Your streak is hidden. /streak on shows it again." if words == ["off"]
                      else "Your streak is shown in /progress and in the review reminder.")]
    found = await streak(ctx, cmd.actor)
    if found is None:
        return [Reply("Your streak is hidden. /streak on shows it again.")]
    zone = await ctx.learner_zone(cmd.actor)
    return [Reply(f"{streak_text(found)} (Days run midnight to midnight in {zone.key}; /timezone changes it.)")]


FEATURE = Feature("streaks", commands=(streak_command,))
