"""Teach-back: explain an idea in your own words; the bot lists the key points covered and
missed. An attempt earns a point the first time it covers enough of them (`bot.scoring`)."""

from __future__ import annotations

from bot.commands import Option, command
from bot.context import Context
from bot.errors import StudyError
from bot.grading import cover
from bot.messages import Command, Form, Reply, TextSubmitted
from bot.store.model import Prompt, PromptKind


@command(summary="Explain an idea in your own words and see which key points you covered", hint="[lesson]",
         options=(Option("lesson", "lesson id"),))
async def teachback(ctx: Context, cmd: Command) -> list[Reply]:
    """/teachback [lesson]: explain one of the lesson's ideas in your own words."""
    lesson = ctx.lesson(cmd.args.strip())
    if not lesson.prompts:
        raise StudyError(f"Lesson {lesson.id} has no teach-back prompts yet.")
    attempts = await ctx.store.teachbacks.attempts(cmd.actor)
    item = min(lesson.prompts, key=lambda p: attempts.get(p.id, 0))  # the least practised, in order
    prompt = await ctx.store.prompts.new(PromptKind.TEACHBACK, cmd.place, cmd.actor, lesson_id=lesson.id,
                                         item_id=item.id)
    form = Form(prompt.id, "Teach-back", item.prompt, label="Your explanation")
    return [Reply(f"Teach-back: {item.prompt}", form=form)]


async def on_text(ctx: Context, event: TextSubmitted, prompt: Prompt) -> list[Reply]:
    item = ctx.library.prompts.get(prompt.item_id or "")
    if item is None:
        raise StudyError("That teach-back prompt is no longer in the lesson. Use /teachback for a fresh one.")
    found = cover(item.key_points, event.text, synonyms=ctx.synonyms(item.lesson_id))
    passes = len(found.matched) >= item.rubric.needed
    points = await ctx.store.teachbacks.record(
        event.actor, form=prompt.id, lesson_id=item.lesson_id, prompt_id=item.id, explanation=event.text,
        covered=found.matched, missed=found.missed, passes=passes, week=ctx.week(event.actor.in_cohort),
    )
    if points is None:
        return [Reply("You already sent this explanation; it is stored. Use /teachback for another go.")]
    texts = {k.id: k.point for k in item.key_points}
    lines = [f"You covered {len(found.matched)} of {len(texts)} key points."]
    lines += [f"✓ {texts[k]}" for k in found.matched]
    lines += [f"✗ missed: {texts[k]}" for k in found.missed]
    if points:
        lines.append("That earns 1 point. Try /teachback again for another prompt.")
    elif not passes:
        lines.append(f"Cover at least {item.rubric.needed} of the key points to earn the point; "
                     "/teachback gives another go.")
    return [Reply("\n".join(lines))]
