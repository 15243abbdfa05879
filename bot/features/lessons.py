"""/lessons: every lesson, with the learner's own progress in each."""

from __future__ import annotations

from collections.abc import Mapping

from bot.core.messages import Command, Reply
from bot.kit.commands import command
from bot.kit.context import Context
from bot.kit.feature import Feature


def teachback_line(prompt_ids: list[str], tried: Mapping[str, int], passed: set[str]) -> str:
    """A lesson's teach-back prompts by id, each passed one marked ✓ and each one tried but not passed
    marked so: the count is of prompts passed, not attempts."""
    marked = [f"{p} ✓" if p in passed else f"{p} (tried)" if p in tried else p for p in prompt_ids]
    done = sum(p in passed for p in prompt_ids)
    return f"  teach-backs passed {done} of {len(prompt_ids)}: {', '.join(marked)}"


@command(summary="The lessons, with your progress in each")
async def lessons(ctx: Context, cmd: Command) -> list[Reply]:
    """/lessons: every lesson's id, how far you are in it, and its teach-back prompts by id (✓ passed)."""
    if not ctx.library.lessons:
        return [Reply("There are no lessons yet.")]
    answered = {a.question_id: a.correct for a in await ctx.store.answers.scored(cmd.actor)}
    tried = await ctx.store.teachbacks.attempts(cmd.actor)
    passed = await ctx.store.teachbacks.passed(cmd.actor)
    lines = ["Lessons"]
    for lesson in ctx.library.lessons.values():
        done = [q for q in lesson.questions if q.id in answered]
        right = sum(answered[q.id] for q in done)
        prompt_ids = [p.id for p in lesson.prompts]
        state = (f"{len(done)}/{len(lesson.questions)} answered, {right} right"
                 if done or any(p in tried for p in prompt_ids) else "not started")
        lines.append(f"• {lesson.id}: {lesson.title} · {state}")
        if prompt_ids:
            lines.append(teachback_line(prompt_ids, tried, passed))
    return [Reply("\n".join(lines))]


FEATURE = Feature("lessons", commands=(lessons,))
