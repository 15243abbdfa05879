"""Spaced repetition with FSRS: every answer rates the learner's card for that question
(`bot.answering.cards`), and /review serves the due cards first (`queue`: by the cohort's exam, when
the lesson has one), then new ones (the quiz's, then the lesson's practice set; `new_cards`: up to the
cohort's daily limit): the review mode, whose Next asks the next card."""

from __future__ import annotations

import json
from datetime import datetime, time, timedelta

from bot.answering.asking import ask
from bot.content.model import Lesson, Library
from bot.core.config import Settings
from bot.core.errors import StudyError
from bot.core.messages import Actor, Audience, Command, Place, Reply, TimerKey, counted
from bot.features.review.new_cards import AREA as NEW_CARDS
from bot.features.review.queue import Queue
from bot.kit.commands import Option, command
from bot.kit.context import Context, Mode
from bot.kit.feature import Feature, TimerSpec
from bot.kit.streaks import streak_line
from bot.questions.base import Question
from bot.store.model import QUESTION, AnswerMode

REMINDER_HOUR = time(9, 0)  # reminders go out from 09:00 in the learner's time zone (/timezone, else the cohort's)
REMINDER_KEY = "reminders"  # one timer: the hourly check for reminders to send
REMINDER_EVERY = timedelta(hours=1)

REMINDER = "You have review cards due. Type /review to go through them (or /review remind off to stop these)."
DUE_WITHIN = timedelta(minutes=1)  # a card due sooner is said to come back, not "nothing is due"


@command(summary="Review the questions that are due, or turn the daily reminder on or off",
         options=(Option("remind", "turn the daily reminder on or off",
                         choices={"on": "remind on", "off": "remind off"}),
                  Option("lesson", "lesson id")))
async def review(ctx: Context, cmd: Command) -> list[Reply]:
    """/review [lesson]: spaced repetition, the questions due first, then new ones.
    /review remind on|off: a daily direct message when cards are due (off by default)."""
    words = cmd.args.lower().split()
    if words[:1] == ["remind"]:
        if words[1:2] not in (["on"], ["off"]):
            raise StudyError("Use /review remind on or /review remind off.")
        await ctx.store.learners.set_remind(cmd.actor, words[1] == "on")
        await ctx.store.timers.ensure(REMINDER_KEY, ctx.clock.now())
        return [Reply("Daily review reminders are on." if words[1] == "on" else "Daily review reminders are off.")]
    return await next_card(ctx, cmd.actor, cmd.place, ctx.lesson(" ".join(words)))


async def next_card(ctx: Context, actor: Actor, place: Place, lesson: Lesson) -> list[Reply]:
    now, day_ends = ctx.clock.now(), ctx.end_of_local_day(actor.in_cohort)
    queue = await Queue.of(ctx, actor, lesson)
    due = await queue.first_due(now)
    if due is not None:
        question, label = ctx.question(due), "due"
    else:
        seen = {card.question_id for card in await ctx.store.cards.of(actor)}
        fresh = [q for q in lesson.review_questions if q.id not in seen]  # the quiz first, then the practice set
        if not fresh:
            return [Reply(await nothing_due(ctx, actor, lesson, queue))]
        if not await new_card_allowed(ctx, actor, fresh[0].id):
            per_day = ctx.settings.cohort(actor.in_cohort).review.new_cards_per_day
            if not per_day:  # none ever: tomorrow brings none either
                return [Reply(f"Nothing is due in {lesson.title} right now, and /review shows no new cards in this "
                              f"cohort (new_cards_per_day: 0): /quiz {lesson.id} asks the lesson's questions.")]
            return [Reply(f"Nothing is due in {lesson.title} right now, and today's new cards are used up "
                          f"({per_day} a day in this cohort): more tomorrow.")]
        question, label = fresh[0], "new"
    prompt = await ctx.store.prompts.new(QUESTION, place, actor, lesson_id=lesson.id, item_id=question.id,
                                         mode=AnswerMode.REVIEW)
    due_now, later = await queue.counts(now, day_ends)
    where = f"{due_now} due now" if due_now else "none due now"  # a new card only when none is
    where += f" · {later} due later today" if later else ""
    return [ask(ctx, question, prompt, f"Review · {label} card · {where} · {lesson.title}", Audience.PRIVATE)]


async def nothing_due(ctx: Context, actor: Actor, lesson: Lesson, queue: Queue) -> str:
    upcoming = await queue.next_due()
    zone = ctx.zone(actor.in_cohort)
    if upcoming is not None and upcoming - ctx.clock.now() < DUE_WITHIN:  # not "well done": a miss comes back
        return (f"Nothing is due in {lesson.title} right now; the card you just missed comes back "
                "within a minute: /review again then.")
    when = f" The next card is due {upcoming.astimezone(zone):%a %d %b %H:%M} ({zone.key})." if upcoming else ""
    return f"Nothing is due in {lesson.title} right now.{when}"


async def new_card_allowed(ctx: Context, actor: Actor, question_id: str) -> bool:
    """Whether the learner may be shown this new card today: always without a daily limit; with one,
    while fewer new cards than it were shown on the learner's local day (the card is counted then)."""
    per_day = ctx.settings.cohort(actor.in_cohort).review.new_cards_per_day
    if per_day is None:
        return True
    day = ctx.clock.now().astimezone(ctx.zone(actor.in_cohort)).date().isoformat()
    return await ctx.store.area(NEW_CARDS).take(actor, day, question_id, per_day)


async def comes_back(ctx: Context, actor: Actor, question: Question) -> str:
    """When a card made due at once ("I don't know") is asked again: `next_card` asks the cards due
    longest first, so after the others of its lesson due now, and before any new card."""
    lesson = ctx.library.lessons.get(question.lesson_id)
    due_now = 0
    if lesson is not None:
        queue = await Queue.of(ctx, actor, lesson)
        due_now, _ = await queue.counts(ctx.clock.now(), ctx.end_of_local_day(actor.in_cohort))
    others = max(due_now - 1, 0)  # the card itself is one of them
    if not others:
        return "This card is due again now, and no other card is, so /review asks it next."
    return f"This card is due again now: /review asks it after the {counted(others, 'other card')} due now."


async def on_reminders(ctx: Context, key: TimerKey) -> list[Reply]:
    """The hourly check (a repeating timer): each opted-in learner with cards due gets one direct message a day."""
    now = ctx.clock.now()

    def local_day(actor: Actor, chosen: str | None) -> str | None:
        """The learner's local date (in their own time zone, else their cohort's) once it is past the
        reminder hour there, else None."""
        local = now.astimezone(ctx.zone_for(actor, chosen))
        return local.date().isoformat() if local.time() >= REMINDER_HOUR else None

    return [Reply("\n".join(line for line in (REMINDER, await streak_line(ctx, actor)) if line),
                  Audience.DM, to=actor, tag=reminder_tag(actor, day))
            for actor, day in await ctx.store.learners.to_remind(now, local_day)]


def reminder_tag(actor: Actor, day: str) -> str:
    """The tag of one learner's reminder for one local day: reported back once it is delivered."""
    return str(TimerKey.of(REMINDER_KEY, json.dumps([actor.platform, actor.cohort, actor.user_id, day])))


async def on_delivered(ctx: Context, tag: TimerKey) -> None:
    """A reminder reached its learner: that day is done for them (a failed one is tried again)."""
    platform, cohort, user_id, day = json.loads(tag.rest)
    await ctx.store.learners.reminded(Actor(platform, cohort, user_id), day)


def next_check(ctx: Context, key: TimerKey) -> datetime:
    return ctx.clock.now() + REMINDER_EVERY


def unknown_exam_lessons(settings: Settings, library: Library) -> list[tuple[str, str]]:
    """(config key, message) for each exam set for a lesson the packs do not have."""
    return [(f"cohorts.{cohort.id}.review.exam.{lesson_id}", f"there is no lesson {lesson_id!r}; write one of "
             f"{', '.join(sorted(library.lessons))[:200]}")
            for cohort, chosen in settings.cohorts.items()
            for lesson_id in chosen.review.lesson_exams if lesson_id not in library.lessons]


MODE = Mode(AnswerMode.REVIEW, next=next_card, dont_know=comes_back)

FEATURE = Feature(
    "review",
    commands=(review,),
    modes=(MODE,),
    timers=(TimerSpec(REMINDER_KEY, on_reminders, repeat=next_check, on_delivered=on_delivered),),
    storage=(NEW_CARDS,),
    check=unknown_exam_lessons,
)
