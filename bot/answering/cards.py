"""The review card every answer rates (FSRS): how an answer rates it, the card's review as the store
applies it inside the answer's transaction, and the predicted recall of a set of cards.

Ratings: wrong is Again; right is Good, or Easy for a multiple-choice answer given within 10 seconds
of the question being served (by the store's clock); a self-graded short answer is Hard or Good as
the learner chooses. Where the cohort asks "How sure were you?", the answer's rating is then changed
by what the learner says (`rating_with_confidence`): sure and wrong is Again, unsure and right Hard."""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from datetime import datetime, timedelta

from fsrs import Card, Rating

from bot.answering import schedule
from bot.core.messages import Actor
from bot.kit.context import Context
from bot.questions.base import Question
from bot.store.model import CardReview

EASY_WITHIN = timedelta(seconds=10)


def rating_for(correct: bool, quick_is_easy: bool, answered_in: timedelta) -> Rating:
    """Wrong is Again; right is Good, or Easy when the type says so of an answer within 10 s."""
    if not correct:
        return Rating.Again
    return Rating.Easy if quick_is_easy and answered_in <= EASY_WITHIN else Rating.Good


def rating_with_confidence(rating: Rating, correct: bool, sure: bool) -> Rating:
    """An answer's rating once its learner said how sure they were: sure and wrong is Again (a
    misconception, whatever the mode rated); unsure and right at most Hard (a guess is not yet known,
    so the card comes back sooner); otherwise the answer's own rating stands."""
    if sure and not correct:
        return Rating.Again
    if not sure and correct:
        return Rating(min(rating, Rating.Hard))
    return rating


def _card_id(actor: Actor, question_id: str) -> int:
    """An explicit id: fsrs would otherwise derive one from the wall clock (and sleep)."""
    return zlib.crc32(f"{actor.platform}:{actor.cohort}:{actor.user_id}:{question_id}".encode())


def card_review(ctx: Context, actor: Actor, question: Question, rating: Rating,
                due_now: bool = False) -> CardReview:
    """The review of one card, as the store applies it inside its transaction, by the cohort's FSRS and
    the lesson's exam (`bot.answering.schedule`); `due_now` brings the card back at once (after "I don't
    know": sooner than after a wrong answer)."""
    now = ctx.clock.now()
    scheduler, exam = ctx.scheduler(actor.in_cohort), ctx.exam(actor.in_cohort, question.lesson_id)

    def review(state: str | None) -> tuple[str, datetime]:
        card = Card.from_json(state) if state else Card(card_id=_card_id(actor, question.id), due=now)
        card, _log = scheduler.review_card(card, rating, review_datetime=now)
        if due_now:
            card.due = now
        return card.to_json(), schedule.due(scheduler, card, exam)

    return review


def recall(ctx: Context, states: Sequence[str]) -> float | None:
    """The mean predicted probability of recalling each card now."""
    if not states:
        return None
    now = ctx.clock.now()
    return sum(ctx.fsrs.get_card_retrievability(Card.from_json(s), now) for s in states) / len(states)
