"""Confidence, through the core on both engines: in a cohort that asks it (`cohorts.<id>.confidence: true`),
"How sure were you?" follows each answer as one tap (Sure / Unsure), kept with the answer once; a sure
wrong answer rates the card Again and is listed in /insights as confidently missed; an unsure right one
rates it Hard; points never change. A cohort that does not ask shows no such buttons."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

import pytest
from fsrs import Card, Rating
from support import channel, choice_for, learner, with_cohort

from bot.answering.cards import rating_with_confidence
from bot.core.clock import FixedClock
from bot.core.config import Settings
from bot.core.errors import ConfigError
from bot.core.messages import ChoiceMade, Command, Reply
from bot.runtime.app import StudyBot

pytestmark = pytest.mark.both_engines

TEACHER = learner("UT", teacher=True)
MC = "core-q1"  # its right choice is pack index 1


@pytest.fixture
async def asking(settings: Settings, clock: FixedClock):
    studybot = await StudyBot.start(with_cohort(settings, confidence=True), clock)
    yield studybot
    await studybot.close()


def button(reply: Reply, label: str) -> str:
    [token] = [c.token for c in reply.choices if c.label == label]
    return token


async def answered(bot: StudyBot, who, right: bool) -> Reply:
    [asked] = await bot.handle(Command("quiz", "", who, channel()))
    [feedback] = await bot.handle(ChoiceMade(choice_for(asked, 1 if right else 0).token, who, channel()))
    return feedback


async def card(bot: StudyBot, who) -> Card:
    [row] = await bot.store.engine.read("SELECT c.state FROM cards c JOIN learners l ON l.id = c.learner_id"
                                        " WHERE l.user_id = ? AND c.question_id = ?", (who.user_id, MC))
    return Card.from_json(row["state"])


async def points(bot: StudyBot, who) -> int:
    standing = await bot.store.boards.standing(who, None)
    return standing.points if standing else 0


def test_sure_and_wrong_is_again_unsure_and_right_at_most_hard() -> None:
    assert rating_with_confidence(Rating.Good, correct=False, sure=True) is Rating.Again
    assert rating_with_confidence(Rating.Hard, correct=False, sure=True) is Rating.Again  # whatever the mode rated
    assert rating_with_confidence(Rating.Easy, correct=True, sure=False) is Rating.Hard
    assert rating_with_confidence(Rating.Good, correct=True, sure=True) is Rating.Good
    assert rating_with_confidence(Rating.Again, correct=False, sure=False) is Rating.Again


async def test_a_sure_wrong_answer_is_kept_once_and_listed_as_confidently_missed(asking: StudyBot,
                                                                                 clock: FixedClock) -> None:
    who = learner()
    feedback = await answered(asking, who, right=False)
    assert "How sure were you?" in feedback.text
    assert [c.label for c in feedback.choices] == ["Sure", "Unsure", "Next question"]
    [noted] = await asking.handle(ChoiceMade(button(feedback, "Sure"), who, channel()))
    assert noted.text.startswith("Noted: sure.")
    assert (await card(asking, who)).due - clock.now() <= timedelta(minutes=10)  # Again: back within minutes
    assert await points(asking, who) == 0
    [again] = await asking.handle(ChoiceMade(button(feedback, "Unsure"), who, channel()))
    assert again.text == "You already said how sure you were of this answer."
    rows = await asking.store.engine.read("SELECT sure FROM confidence")
    assert [r["sure"] for r in rows] == [1]

    other = learner("U2")
    unsure = await answered(asking, other, right=False)
    await asking.handle(ChoiceMade(button(unsure, "Unsure"), other, channel()))
    [reply] = await asking.handle(Command("insights", "", TEACHER, channel()))
    lines = reply.text.splitlines()
    at = lines.index("Confidently missed (sure, and wrong: the misconception to address first):")
    assert lines[at + 1] == f"• {MC} · What does tensor parallelism split?: 1 of 1 sure answers wrong"
    assert at > next(i for i, line in enumerate(lines) if line.startswith(f"• {MC} ·"))  # after the questions


async def test_an_unsure_right_answer_rates_the_card_hard_and_keeps_its_point(asking: StudyBot) -> None:
    sure, unsure = learner("U1"), learner("U2")
    for who, label in ((sure, "Sure"), (unsure, "Unsure")):
        feedback = await answered(asking, who, right=True)
        await asking.handle(ChoiceMade(button(feedback, label), who, channel()))
    assert await points(asking, sure) == await points(asking, unsure) == 1
    assert (await card(asking, unsure)).due < (await card(asking, sure)).due  # Hard comes back sooner than Good
    [reply] = await asking.handle(Command("insights", "", TEACHER, channel()))
    assert "Confidently missed" not in reply.text  # nobody was sure and wrong


async def test_a_cohort_that_does_not_ask_shows_no_confidence_buttons(bot: StudyBot) -> None:
    feedback = await answered(bot, learner(), right=False)
    assert "How sure were you?" not in feedback.text and [c.label for c in feedback.choices] == ["Next question"]


def test_the_setting_is_checked(settings: Settings) -> None:
    assert with_cohort(settings, confidence=True).cohort(learner().in_cohort).confidence
    with pytest.raises(ConfigError) as refused:
        with_cohort(settings, confidence="yes")
    assert "cohorts.T1.confidence" in str(refused.value) and "must be true" in str(refused.value)
    assert "\n" not in str(refused.value)
    assert replace(settings).cohort(learner().in_cohort).confidence is False
