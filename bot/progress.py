"""/progress: a learner's own picture, per lesson."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from bot import review
from bot.messages import Command, Reply

if TYPE_CHECKING:
    from bot.app import StudyBot


async def progress_command(bot: StudyBot, cmd: Command) -> list[Reply]:
    """/progress: per lesson, what you answered, got right and scored; cards due; this week's rank."""
    learner = await bot.store.learner_id(cmd.actor)
    answers = await bot.store.scored_answers(learner)
    teachbacks = await bot.store.teachback_counts(learner)
    lines = ["Your progress"]
    for lesson in bot.library.lessons.values():
        ids = {q.id for q in lesson.questions}
        mine = [a for a in answers if a.question_id in ids]
        right = sum(a.correct for a in mine)
        self_graded = sum(a.self_graded for a in mine)
        attempts, tb_points = teachbacks.get(lesson.id, (0, 0))
        lines.append(
            f"• {lesson.title}: answered {len(mine)}/{len(ids)}, correct {right}, points {right + tb_points}"
            f" ({self_graded} self-graded); teach-backs {attempts} ({tb_points} points)"
        )
    cards = await bot.store.cards(learner)
    day_ends = review.end_of_local_day(bot, cmd.actor.cohort)
    due_today = [c for c in cards if datetime.fromisoformat(c["due"]) < day_ends]  # the cards are loaded anyway
    chance = review.recall(bot, [c["state"] for c in cards])
    lines.append(f"Review: {len(due_today)} of {len(cards)} cards due today"
                 + (f"; predicted recall now {chance:.0%}" if chance is not None else "") + " (/review)")
    week = bot.week(cmd.actor.cohort)
    mine_now = await bot.store.standing(cmd.actor, week)
    lines.append(f"This week ({week}): " + (f"rank {mine_now.rank}, {mine_now.points} points" if mine_now
                                             else "no points yet"))
    return [Reply("\n".join(lines))]
