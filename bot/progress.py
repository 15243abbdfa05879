"""/progress: a learner's own picture, per lesson."""

from __future__ import annotations

from bot import review
from bot.commands import command
from bot.context import Context
from bot.messages import Command, Reply
from bot.store.model import TeachbackCount


@command(summary="Your progress per lesson, privately")
async def progress(ctx: Context, cmd: Command) -> list[Reply]:
    """/progress: per lesson, what you answered, got right and scored; cards due; this week's rank."""
    await ctx.store.learners.touch(cmd.actor)
    answers = await ctx.store.answers.scored(cmd.actor)
    teachbacks = await ctx.store.teachbacks.counts(cmd.actor)
    lines = ["Your progress"]
    for lesson in ctx.library.lessons.values():
        ids = {q.id for q in lesson.questions}
        mine = [a for a in answers if a.question_id in ids]
        right = sum(a.correct for a in mine)
        self_graded = sum(a.self_graded for a in mine)
        tb = teachbacks.get(lesson.id, TeachbackCount())
        lines.append(
            f"• {lesson.title}: answered {len(mine)}/{len(ids)}, correct {right}, points {right + tb.points}"
            f" ({self_graded} self-graded); teach-backs {tb.attempts} ({tb.points} points)"
        )
    cards = await ctx.store.cards.of(cmd.actor)
    day_ends = ctx.end_of_local_day(cmd.actor.in_cohort)
    due_today = [c for c in cards if c.due < day_ends]  # the cards are loaded anyway
    chance = review.recall(ctx, [c.state for c in cards])
    lines.append(f"Review: {len(due_today)} of {len(cards)} cards due today"
                 + (f"; predicted recall now {chance:.0%}" if chance is not None else "") + " (/review)")
    week = ctx.week(cmd.actor.in_cohort)
    mine_now = await ctx.store.boards.standing(cmd.actor, week, ctx.settings.self_graded)
    lines.append(f"This week ({week}): " + (f"rank {mine_now.rank}, {mine_now.points} points" if mine_now
                                             else "no points yet"))
    return [Reply("\n".join(lines))]
