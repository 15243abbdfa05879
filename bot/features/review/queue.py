"""A learner's review cards of a lesson by when they are due, as /review asks them."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from fsrs import Card as FsrsCard

from bot.answering import schedule
from bot.content.model import Lesson
from bot.core.messages import Actor
from bot.kit.context import Context


@dataclass(frozen=True)
class Queue:
    """A learner's cards of a lesson by when they are due: the store's indexed queries, or, when the lesson
    has an exam, the dates it sets (`bot.answering.schedule`), reckoned from each card's FSRS state, so
    that a card reviewed before the exam was set is pulled in too."""

    ctx: Context
    actor: Actor
    lesson: Lesson
    exam_dues: tuple[tuple[datetime, str], ...] | None  # (due, question id), soonest first; None: no exam

    @classmethod
    async def of(cls, ctx: Context, actor: Actor, lesson: Lesson) -> Queue:
        exam = ctx.exam(actor.in_cohort, lesson.id)
        if exam is None:
            return cls(ctx, actor, lesson, None)
        scheduler = ctx.scheduler(actor.in_cohort)
        cards = await ctx.store.cards.of_lesson(actor, lesson.id, lesson.review_question_ids)
        return cls(ctx, actor, lesson, tuple(sorted(
            (schedule.due(scheduler, FsrsCard.from_json(card.state), exam), card.question_id) for card in cards)))

    async def first_due(self, now: datetime) -> str | None:
        """The question id of the card due longest, if any is due by `now`."""
        if self.exam_dues is None:
            due = await self.ctx.store.cards.due(self.actor, now, self.lesson.id, self.lesson.review_question_ids)
            return due[0] if due else None
        return self.exam_dues[0][1] if self.exam_dues and self.exam_dues[0][0] <= now else None

    async def counts(self, now: datetime, day_ends: datetime) -> tuple[int, int]:
        """How many cards are due by `now`, and how many more come due later, before `day_ends`."""
        if self.exam_dues is None:
            return await self.ctx.store.cards.count_due(self.actor, now, day_ends, self.lesson.id,
                                                        self.lesson.review_question_ids)
        return (sum(1 for due, _ in self.exam_dues if due <= now),
                sum(1 for due, _ in self.exam_dues if now < due < day_ends))

    async def next_due(self) -> datetime | None:
        if self.exam_dues is None:
            return await self.ctx.store.cards.next_due(self.actor, self.lesson.id, self.lesson.review_question_ids)
        return self.exam_dues[0][0] if self.exam_dues else None
