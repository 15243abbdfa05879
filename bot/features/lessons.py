"""/lessons: every lesson, with the learner's own progress in each."""

from __future__ import annotations

from bot.core.messages import Command, Reply
from bot.runtime.commands import command
from bot.runtime.context import Context
from bot.runtime.feature import Feature


@command(summary="The lessons, with your progress in each")
async def lessons(ctx: Context, cmd: Command) -> list[Reply]:
    """/lessons: every lesson, and how far you are in each (use its id after /quiz, /review or /teachback)."""
    if not ctx.library.lessons:
        return [Reply("There are no lessons yet.")]
    answered = {a.question_id: a.correct for a in await ctx.store.answers.scored(cmd.actor)}
    tried = await ctx.store.teachbacks.attempts(cmd.actor)
    lines = ["Lessons"]
    for lesson in ctx.library.lessons.values():
        done = [q for q in lesson.questions if q.id in answered]
        right = sum(answered[q.id] for q in done)
        explained = sum(1 for p in lesson.prompts if p.id in tried)
        state = (f"{len(done)}/{len(lesson.questions)} answered, {right} right" if done or explained
                 else "not started")
        lines.append(f"• {lesson.id}: {lesson.title} · {state}; teach-backs {explained}/{len(lesson.prompts)}")
    return [Reply("\n".join(lines))]


FEATURE = Feature("lessons", commands=(lessons,))
