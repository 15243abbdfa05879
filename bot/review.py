"""Spaced repetition with FSRS: every answer rates the learner's card for that question,
and /review serves the due cards first, then new ones.

Ratings: wrong is Again; right is Good, or Easy for a multiple-choice answer given within
10 seconds of the question being served (by the store's clock); a self-graded short answer
is Hard or Good as the learner chooses.
"""

from __future__ import annotations

import zlib
from datetime import datetime, time, timedelta
from typing import TYPE_CHECKING

from fsrs import Card, Rating

from bot.asking import ask
from bot.content import Lesson, Question
from bot.errors import StudyError
from bot.messages import Actor, Audience, Command, Place, Reply, TimerFired
from bot.store import CardReview

if TYPE_CHECKING:
    from bot.app import StudyBot

EASY_WITHIN = timedelta(seconds=10)
REMINDER_HOUR = time(9, 0)  # reminders go out from 09:00 in the cohort's time zone
REMINDER_KEY = "reminders"
REMINDER_EVERY = timedelta(hours=1)


def rating_for(correct: bool, kind: str, answered_in: timedelta) -> Rating:
    if not correct:
        return Rating.Again
    return Rating.Easy if kind == "mc" and answered_in <= EASY_WITHIN else Rating.Good


def _card_id(actor: Actor, question_id: str) -> int:
    """An explicit id: fsrs would otherwise derive one from the wall clock (and sleep)."""
    return zlib.crc32(f"{actor.platform}:{actor.cohort}:{actor.user_id}:{question_id}".encode())


def card_review(bot: StudyBot, actor: Actor, question: Question, rating: Rating) -> CardReview:
    """The review of one card, as the store applies it inside its transaction."""
    now = bot.clock.now()

    def review(state: str | None) -> tuple[str, datetime]:
        card = Card.from_json(state) if state else Card(card_id=_card_id(actor, question.id), due=now)
        card, _log = bot.fsrs.review_card(card, rating, review_datetime=now)
        return card.to_json(), card.due

    return review


async def rate(bot: StudyBot, actor: Actor, question: Question, rating: Rating, base: str | None = None) -> None:
    """Review the learner's card again (a self-grade); `base` is the state before the answer ('' if new)."""
    await bot.store.update_card(actor, question.id, question.lesson_id, card_review(bot, actor, question, rating),
                                base)


def recall(bot: StudyBot, states: list[str]) -> float | None:
    """The mean predicted probability of recalling each card now."""
    if not states:
        return None
    now = bot.clock.now()
    return sum(bot.fsrs.get_card_retrievability(Card.from_json(s), now) for s in states) / len(states)


def end_of_local_day(bot: StudyBot, cohort: str) -> datetime:
    zone = bot.settings.cohort(cohort).timezone
    local = bot.clock.now().astimezone(zone)
    return datetime.combine(local.date() + timedelta(days=1), time(0), zone)


async def review_command(bot: StudyBot, cmd: Command) -> list[Reply]:
    """/review [lesson]: spaced repetition, the questions due first, then new ones.
    /review remind on|off: a daily direct message when cards are due (off by default)."""
    words = cmd.args.lower().split()
    if words[:1] == ["remind"]:
        if words[1:] not in (["on"], ["off"]):
            raise StudyError("Use /review remind on or /review remind off.")
        await bot.store.set_remind(cmd.actor, words[1] == "on")
        await bot.store.ensure_timer(REMINDER_KEY, bot.clock.now())
        return [Reply("Daily review reminders are on." if words[1] == "on" else "Daily review reminders are off.")]
    return await next_card(bot, cmd.actor, cmd.place, bot.lesson(" ".join(words)))


async def next_card(bot: StudyBot, actor: Actor, place: Place, lesson: Lesson) -> list[Reply]:
    learner = await bot.store.learner_id(actor)
    due = await bot.store.due_cards(learner, bot.clock.now(), lesson.id)
    if due:
        question, label = bot.library.questions[due[0]], "due"
    else:
        seen = {r["question_id"] for r in await bot.store.cards(learner)}
        fresh = [q for q in lesson.questions if q.id not in seen]
        if not fresh:
            upcoming = await bot.store.next_due(learner, lesson.id)
            zone = bot.settings.cohort(actor.cohort).timezone
            when = f" The next card is due {upcoming.astimezone(zone):%a %d %b %H:%M} ({zone.key})." if upcoming else ""
            return [Reply(f"Nothing is due in {lesson.title}. Well done.{when}")]
        question, label = fresh[0], "new"
    prompt_id = await bot.store.new_prompt("question", place, actor, lesson_id=lesson.id, item_id=question.id,
                                           mode="review")
    return [ask(question, prompt_id, f"Review · {label} card · {lesson.title}", Audience.PRIVATE)]


async def on_reminders(bot: StudyBot, event: TimerFired, key: str) -> list[Reply]:
    """The hourly check (a repeating timer): each opted-in learner with cards due gets one direct message a day."""
    now = bot.clock.now()

    def local_day(cohort: str) -> str | None:
        """The learner's local date once it is past the reminder hour there, else None."""
        local = now.astimezone(bot.settings.cohort(cohort).timezone)
        return local.date().isoformat() if local.time() >= REMINDER_HOUR else None

    ready = await bot.store.claim_reminders(now, local_day)
    return [
        Reply("You have review cards due. Type /review to go through them (or /review remind off to stop these).",
              Audience.DM, to=actor)
        for actor in ready
    ]
