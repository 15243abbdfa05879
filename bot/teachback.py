"""Teach-back: explain an idea in your own words; the bot lists the key points covered and missed.

Scoring rule: an attempt earns 1 point the first time it covers at least half of the
prompt's key points; later attempts are stored but score nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from bot.errors import StudyError
from bot.grading import cover
from bot.messages import Command, Form, Reply, TextSubmitted
from bot.store import PromptRow

if TYPE_CHECKING:
    from bot.app import StudyBot


async def teachback_command(bot: StudyBot, cmd: Command) -> list[Reply]:
    """/teachback [lesson]: explain one of the lesson's ideas in your own words."""
    lesson = bot.lesson(cmd.args.strip())
    if not lesson.prompts:
        raise StudyError(f"Lesson {lesson.id} has no teach-back prompts yet.")
    learner = await bot.store.learner_id(cmd.actor)
    attempts = await bot.store.teachback_attempts(learner)
    prompt = min(lesson.prompts, key=lambda p: attempts.get(p.id, 0))  # the least practised, in order
    form_id = await bot.store.new_prompt("teachback", cmd.place, cmd.actor, lesson_id=lesson.id, item_id=prompt.id)
    form = Form(form_id, "Teach-back", prompt.prompt, label="Your explanation")
    return [Reply(f"Teach-back: {prompt.prompt}", form=form)]


async def on_text(bot: StudyBot, event: TextSubmitted, prompt: PromptRow) -> list[Reply]:
    item = bot.library.prompts.get(prompt.item_id or "")
    if item is None:
        raise StudyError("That teach-back prompt is no longer in the lesson. Use /teachback for a fresh one.")
    found = cover(item.key_points, event.text)
    passed = 2 * len(found.matched) >= len(item.key_points)
    points = await bot.store.record_teachback(
        event.actor, lesson_id=item.lesson_id, prompt_id=item.id, explanation=event.text,
        covered=found.matched, missed=found.missed, earns_point=passed, week=bot.week(event.actor.cohort),
    )
    texts = {k.id: k.point for k in item.key_points}
    lines = [f"You covered {len(found.matched)} of {len(texts)} key points."]
    lines += [f"✓ {texts[k]}" for k in found.matched]
    lines += [f"✗ missed: {texts[k]}" for k in found.missed]
    if points:
        lines.append("That earns 1 point. Try /teachback again for another prompt.")
    elif not passed:
        lines.append("Cover at least half of the key points to earn the point; /teachback gives another go.")
    return [Reply("\n".join(lines))]
