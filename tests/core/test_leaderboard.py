"""Leaderboards: competition ranks, weeks in the cohort's time zone, cohorts never mix."""

from dataclasses import replace
from zoneinfo import ZoneInfo

import pytest
from support import channel, learner, record

from bot.core.config import CohortSettings
from bot.core.messages import Audience, ChoiceMade, Cohort, Command, TextSubmitted
from bot.store.model import QUESTION, AnswerMode

pytestmark = pytest.mark.both_engines


async def score(bot, user, points, cohort="T1"):
    who = learner(user, cohort=cohort)
    for n in range(points):
        await record(bot, who, f"q{n}")


async def board(bot, args="", who=None, cohort="T1"):
    return await bot.handle(Command("leaderboard", args, who or learner("U9", cohort=cohort), channel(cohort)))


async def test_standard_competition_ranks(bot) -> None:
    for user, pts in (("A", 5), ("B", 3), ("C", 3), ("D", 1)):
        await score(bot, user, pts)
    [reply] = await board(bot, who=learner("D"))
    lines = reply.text.splitlines()
    assert lines[1:5] == ["1. name-A · 5", "2. name-B · 3", "2. name-C · 3", "4. name-D · 1"]
    assert "You: rank 4 with 1 point." in reply.text  # not "1 points"


async def test_your_line_puts_the_marks_after_the_points(bot) -> None:
    """"You: rank 1 with 2 points (1 self-graded).", not "with 2 (1 self-graded) points"."""
    who = learner("A")
    q = next(q for q in next(iter(bot.library.lessons.values())).questions if q.kind == "short")
    prompt = await bot.store.prompts.new(QUESTION, channel(), who, lesson_id=q.lesson_id, item_id=q.id,
                                         mode=AnswerMode.PRACTICE)
    [feedback] = await bot.handle(TextSubmitted(prompt.id, "It copies everything onto each device so nothing is lost",
                                                who, channel()))
    await bot.handle(ChoiceMade(next(c for c in feedback.choices if c.label == "I got it right").token, who, channel()))
    await record(bot, who, "another")
    [reply] = await board(bot, who=who)
    assert "1. name-A · 2 (1 self-graded)" in reply.text
    assert reply.text.endswith("\nYou: rank 1 with 2 points (1 self-graded).")


async def test_cohorts_never_mix(bot) -> None:
    await score(bot, "A", 2, cohort="T1")
    await score(bot, "Z", 9, cohort="T2")
    [reply] = await board(bot, cohort="T1")
    assert "name-A" in reply.text and "name-Z" not in reply.text


async def test_week_follows_the_cohort_time_zone(bot, clock, settings) -> None:
    clock.set("2026-11-29T23:30:00+00:00")  # Sunday in UTC, already Monday in Berlin
    bot.ctx.settings = replace(settings, cohorts={Cohort("slack", "T1"): CohortSettings(ZoneInfo("Europe/Berlin"))})
    assert bot.ctx.week(Cohort("slack", "T1")) == "2026-W49" and bot.ctx.week(Cohort("slack", "T2")) == "2026-W48"
    await score(bot, "A", 1)
    [this_week] = await board(bot, "week 2026-W49")
    [last_week] = await board(bot, "week 2026-W48")
    [all_time] = await board(bot, "all")
    assert "name-A" in this_week.text and "name-A" not in last_week.text and "name-A" in all_time.text


async def test_post_is_for_instructors(bot) -> None:
    await score(bot, "A", 1)
    [refusal] = await board(bot, "post", who=learner("U1"))
    assert "Only instructors" in refusal.text
    replies = await board(bot, "post", who=learner("U1", teacher=True))
    assert replies[0].audience is Audience.PUBLIC and "name-A" in replies[0].text


async def test_bad_period_says_how(bot) -> None:
    [reply] = await board(bot, "week 2026-W99")
    assert "/leaderboard week 2026-W48" in reply.text
