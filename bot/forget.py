"""/forget me: after a confirmation, delete everything stored about the learner."""

from __future__ import annotations

from typing import TYPE_CHECKING

from bot import results
from bot.errors import StudyError
from bot.messages import Choice, ChoiceMade, Command, Reply
from bot.store import PromptRow

if TYPE_CHECKING:
    from bot.app import StudyBot


async def forget_command(bot: StudyBot, cmd: Command) -> list[Reply]:
    """/forget me: delete your answers, attempts, cards and results files (asks first)."""
    if cmd.args.strip().lower() != "me":
        raise StudyError("Type /forget me to delete everything studybot stores about you.")
    confirm = await bot.store.new_prompt("forget", cmd.place, cmd.actor)
    return [Reply(
        "Delete all your answers, teach-backs, review cards and results files in this cohort? This cannot be undone.",
        choices=(Choice("Yes, delete my data", f"{confirm}.1"), Choice("Cancel", f"{confirm}.0")),
    )]


async def on_confirm(bot: StudyBot, event: ChoiceMade, prompt: PromptRow, suffix: str) -> list[Reply]:
    if suffix != "1":
        return [Reply("Nothing was deleted.")]
    await bot.store.forget(event.actor)
    results.delete_files(bot.settings.results_dir, event.actor)
    return [Reply("Done: everything studybot stored about you in this cohort is deleted.")]
