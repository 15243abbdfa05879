"""The question of the day: one public question a day at a cohort's local time, answered like a
round's (once per learner, private feedback, scored once) and revealed with its tally at the next
day's post, or at the configured reveal time.

Both are repeating timers re-armed only after delivery, so a post is never dropped (a crash between
sending and recording may repeat it once). The day's question is found again by its day, so a
repeated firing posts the same question, and questions come round again only once every question of
the lesson has been asked.
"""

from __future__ import annotations

from collections import Counter
from datetime import date, datetime, time, timedelta
from zoneinfo import ZoneInfo

from bot.answering.asking import ask, revealed
from bot.content.model import Library
from bot.core.config import DailyQuestion, Settings
from bot.core.messages import Audience, Cohort, Place, Reply, TimerKey
from bot.kit.context import Context, Mode
from bot.kit.feature import Feature, Scheduled, TimerSpec
from bot.questions.base import Tally
from bot.store.model import QUESTION, AnswerMode, Prompt

POST = "daily"  # the daily post's timer, one per cohort
REVEAL = "dailyreveal"  # the reveal's timer, for a cohort that reveals at a time of its own


def posts(settings: Settings) -> list[Scheduled]:
    """The daily post of each cohort that configures a question of the day."""
    return [Scheduled(TimerKey.for_cohort(POST, cohort), f"cohorts.{cohort.id}.daily.channel",
                      Place(cohort.platform, cohort.id, chosen.daily.channel))
            for cohort, chosen in settings.cohorts.items() if chosen.daily is not None]


def reveals(settings: Settings) -> list[Scheduled]:
    """The reveal of each cohort whose question of the day is revealed at a time of its own."""
    return [Scheduled(TimerKey.for_cohort(REVEAL, cohort), f"cohorts.{cohort.id}.daily.channel",
                      Place(cohort.platform, cohort.id, chosen.daily.channel))
            for cohort, chosen in settings.cohorts.items()
            if chosen.daily is not None and chosen.daily.reveal is not None]


def unknown_lessons(settings: Settings, library: Library) -> list[tuple[str, str]]:
    """(config key, message) for each question of the day that names a lesson the packs do not have."""
    return [(f"cohorts.{cohort.id}.daily.lesson", f"there is no lesson {chosen.daily.lesson!r}; write one of "
             f"{', '.join(sorted(library.lessons))[:200]}")
            for cohort, chosen in settings.cohorts.items()
            if chosen.daily is not None and chosen.daily.lesson and library.lesson(chosen.daily.lesson) is None]


def latest(at: time, zone: ZoneInfo, now: datetime) -> datetime:
    """The latest moment at or before `now` when the local clock read `at` (daylight saving included)."""
    local = now.astimezone(zone)
    moment = datetime.combine(local.date(), at, zone)
    return moment if moment <= now else datetime.combine(local.date() - timedelta(days=1), at, zone)


def next_time(ctx: Context, key: TimerKey) -> datetime:
    """When a daily timer fires next: the next day's local time (a repeating timer's re-arm)."""
    cohort = key.cohort
    plan = ctx.settings.cohort(cohort).daily
    if plan is None:
        return ctx.clock.now() + timedelta(days=1)
    at = plan.reveal if key.kind == REVEAL and plan.reveal else plan.at
    last = latest(at, ctx.zone(cohort), ctx.clock.now())
    return datetime.combine(last.astimezone(ctx.zone(cohort)).date() + timedelta(days=1), at, ctx.zone(cohort))


def _tag(cohort: Cohort, day: str) -> str:
    return str(TimerKey.for_cohort(POST, cohort, day))


def _header(day: date) -> str:
    return f"Question of the day · {day:%a %d %b}"


async def on_post(ctx: Context, key: TimerKey) -> list[Reply]:
    """Reveal the days before, then post today's question (the same one again if a crash lost its post)."""
    cohort = key.cohort
    plan = ctx.settings.cohort(cohort).daily
    if plan is None:
        return []
    today = latest(plan.at, ctx.zone(cohort), ctx.clock.now()).astimezone(ctx.zone(cohort)).date()
    asked = await ctx.store.prompts.daily(cohort)
    replies = await _reveal(ctx, cohort, plan, [p for p in asked if p.data.get("day", "") < today.isoformat()])
    prompt = next((p for p in asked if p.data.get("day") == today.isoformat()), None)
    if prompt is None:
        prompt = await _new(ctx, cohort, plan, today, asked)
    if prompt is not None and await ctx.store.messages.get(_tag(cohort, today.isoformat())) is None:
        question = ctx.question(prompt.item_id)
        replies.append(ask(ctx, question, prompt, _header(today), Audience.PUBLIC, tag=_tag(cohort, today.isoformat()),
                           place=Place(cohort.platform, cohort.id, plan.channel)))
    return replies


async def on_reveal(ctx: Context, key: TimerKey) -> list[Reply]:
    """At the configured reveal time: today's question, with its tally."""
    cohort = key.cohort
    plan = ctx.settings.cohort(cohort).daily
    if plan is None or plan.reveal is None:
        return []
    today = latest(plan.reveal, ctx.zone(cohort), ctx.clock.now()).astimezone(ctx.zone(cohort)).date().isoformat()
    asked = await ctx.store.prompts.daily(cohort)
    return await _reveal(ctx, cohort, plan, [p for p in asked if p.data.get("day") == today])


async def _new(ctx: Context, cohort: Cohort, plan: DailyQuestion, day: date, asked: list[Prompt]) -> Prompt | None:
    """Today's prompt: the lesson's least asked question, in the lesson's order."""
    lesson = ctx.library.lesson(plan.lesson)
    if lesson is None or not lesson.questions:
        return None
    times = Counter(p.item_id for p in asked)
    question = min(lesson.questions, key=lambda q: times[q.id])
    return await ctx.store.prompts.new(QUESTION, Place(cohort.platform, cohort.id, plan.channel), None,
                                       lesson_id=lesson.id, item_id=question.id, mode=AnswerMode.DAILY,
                                       data={"day": day.isoformat()})


async def _reveal(ctx: Context, cohort: Cohort, plan: DailyQuestion, prompts: list[Prompt]) -> list[Reply]:
    """Edit each question's post into its reveal, closing it to answers: the open ones, and the latest
    one again (an edit repeated after a crash is harmless)."""
    chosen = [p for p in prompts if not p.closed] or prompts[-1:]
    replies = []
    for prompt in chosen:
        question = ctx.library.questions.get(prompt.item_id or "")
        ref = await ctx.store.messages.get(_tag(cohort, prompt.data.get("day", "")))
        await ctx.store.prompts.close(prompt.id)
        if question is None or ref is None:
            continue  # removed from the lesson, or never posted: nothing to reveal
        tally = Tally.of(await ctx.store.answers.counts(prompt.id))
        header = _header(date.fromisoformat(prompt.data["day"]))
        replies.append(Reply(revealed(question, prompt, tally, header), Audience.PUBLIC, edit=ref,
                             place=Place(cohort.platform, cohort.id, plan.channel)))
    return replies


MODE = Mode(AnswerMode.DAILY)  # answered privately, revealed in the channel at its time

FEATURE = Feature(
    "daily",
    modes=(MODE,),
    timers=(TimerSpec(POST, on_post, repeat=next_time, schedule=posts),
            TimerSpec(REVEAL, on_reveal, repeat=next_time, schedule=reveals)),
    check=unknown_lessons,
)
