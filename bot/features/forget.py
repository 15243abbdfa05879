"""/forget me: after a confirmation, delete everything stored about the learner."""

from __future__ import annotations

from bot.core.errors import StudyError
from bot.core.messages import Choice, ChoiceMade, Command, Reply
from bot.kit.commands import Option, command
from bot.kit.context import Context
from bot.kit.feature import Feature
from bot.reports import files
from bot.store.model import Prompt

FORGET = "forget"  # the prompt kind of the confirmation buttons


@command(summary="Delete everything studybot stores about you (asks first)",
         options=(Option("confirm", "me", choices={"me": "me"}),))
async def forget(ctx: Context, cmd: Command) -> list[Reply]:
    """/forget me: delete your answers, attempts, cards and results files (asks first)."""
    if cmd.args.strip().lower() != "me":
        raise StudyError("Type /forget me to delete everything studybot stores about you.")
    confirm = await ctx.store.prompts.new(FORGET, cmd.place, cmd.actor)
    return [Reply(
        "Delete all your answers, teach-backs, review cards and results files in this cohort? This cannot be undone.",
        choices=(Choice("Yes, delete my data", f"{confirm.id}.1"), Choice("Cancel", f"{confirm.id}.0")),
    )]


async def on_confirm(ctx: Context, event: ChoiceMade, prompt: Prompt, suffix: str) -> list[Reply]:
    if suffix != "1":
        return [Reply("Nothing was deleted.")]
    async with ctx.files_lock(event.actor.in_cohort):  # a /results in flight finishes first, or starts after
        await ctx.store.forget(event.actor)
        files.delete_files(ctx.settings.results_dir, event.actor)
    return [Reply("Done: everything studybot stored about you in this cohort is deleted, and so is the cohort's "
                  "results export that listed you (your instructor can export it again).")]


FEATURE = Feature("forget", commands=(forget,), choices={FORGET: on_confirm})
