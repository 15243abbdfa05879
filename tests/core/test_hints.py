"""Hints, through the core on both engines: a question whose pack gives `hints:` shows a Hint button while
it is open; each press shows the next hint privately, in order, with another Hint button until the last;
each hint taken costs what the scoring rules say (HINT_COST of the point, never below zero), kept with the
answer so that a self-grade earns what a hinted answer earns; /insights and its CSV count the hints."""

from __future__ import annotations

import csv
import io
import re
from dataclasses import replace
from pathlib import Path

import pytest
from support import HINTED, HINTS, RecordingOutbox, channel, choice_for, hinted_pack, learner

from bot.answering.asking import ask
from bot.content.loader import check_library
from bot.content.render import render_quiz
from bot.core.clock import FixedClock
from bot.core.config import Settings
from bot.core.messages import Audience, ChoiceMade, Command, MessageRef, Reply, TextSubmitted
from bot.features import hints
from bot.grading.scoring import HINT_COST, POINT, answer_points
from bot.kit.feature import Feature
from bot.runtime.app import FEATURES, StudyBot
from bot.runtime.scheduler import fire_due
from bot.store.model import QUESTION, AnswerMode

pytestmark = pytest.mark.both_engines

TEACHER = learner("UT", teacher=True)
MC, SHORT = "core-q1", "core-q2"


@pytest.fixture
async def hinted(settings: Settings, clock: FixedClock, tmp_path: Path):
    studybot = await StudyBot.start(replace(settings, content_dir=hinted_pack(tmp_path)), clock)
    yield studybot
    await studybot.close()


def button(reply: Reply, label: str) -> str:
    [token] = [c.token for c in reply.choices if c.label == label]
    return token


def labels(reply: Reply) -> list[str]:
    return [c.label for c in reply.choices]


async def points(bot: StudyBot, who) -> int:
    standing = await bot.store.boards.standing(who, None)
    return standing.points if standing else 0


async def hint(bot: StudyBot, token: str, who) -> Reply:
    [reply] = await bot.handle(ChoiceMade(token, who, channel()))
    return reply


def test_each_hint_taken_costs_its_share_of_the_point_never_below_zero() -> None:
    assert answer_points(True, True, 0) == POINT
    assert answer_points(True, True, 1) == max(POINT - HINT_COST, 0)
    assert answer_points(True, True, 5) == 0
    assert answer_points(False, True, 0) == 0 and answer_points(True, False, 0) == 0


async def test_hints_one_at_a_time_in_order_then_the_button_goes(hinted: StudyBot) -> None:
    who = learner()
    [asked] = await hinted.handle(Command("quiz", "", who, channel()))
    assert "💡 Hint" in labels(asked) and MC.endswith("q1")
    first = await hint(hinted, button(asked, "💡 Hint"), who)
    assert first.text.startswith(f"💡 Hint 1 of 2: {HINTS[MC][0]}")
    assert "a right answer now earns 0 points" in first.text
    assert labels(first)[-2:] == ["I don't know", "💡 Another hint"]  # the question again, with its buttons
    assert hinted.library.questions[MC].prompt in first.text
    second = await hint(hinted, button(first, "💡 Another hint"), who)
    assert second.text.startswith(f"💡 Hint 2 of 2: {HINTS[MC][1]}") and labels(second)[-1] == "I don't know"
    again = await hint(hinted, button(asked, "💡 Hint"), who)  # the question's own button, pressed once more
    assert again.text.startswith(f"💡 Hint 2 of 2: {HINTS[MC][1]}") and "That was the last hint." in again.text

    [feedback] = await hinted.handle(ChoiceMade(choice_for(second, 1).token, who, channel()))  # from the hint
    assert feedback.text.startswith("✅") and await points(hinted, who) == 0  # right, but hinted: no point
    rows = await hinted.store.engine.read(HINTED + " WHERE a.question_id = ?", (MC,))
    assert [(r["correct"], r["points"], r["hints"]) for r in rows] == [(1, 0, 2)]
    [refused] = await hinted.handle(ChoiceMade(button(asked, "💡 Hint"), who, channel()))
    assert refused.text.startswith("You answered this question already")


async def test_progress_counts_a_hinted_right_answer_as_right_with_the_points_it_earned(hinted: StudyBot) -> None:
    who = learner()
    [asked] = await hinted.handle(Command("quiz", "", who, channel()))
    [shown] = await hinted.handle(ChoiceMade(button(asked, "💡 Hint"), who, channel()))
    await hinted.handle(ChoiceMade(choice_for(shown, 1).token, who, channel()))
    [progress] = await hinted.handle(Command("progress", "", who, channel()))
    [line] = [x for x in progress.text.splitlines() if x.startswith("• ")]
    assert "correct 1" in line and line.endswith("points 0")  # as the leaderboards count it
    assert await points(hinted, who) == 0


async def test_a_right_answer_without_hints_earns_the_point_and_questions_without_hints_have_no_button(
        hinted: StudyBot) -> None:
    who = learner()
    [asked] = await hinted.handle(Command("quiz", "", who, channel()))
    [feedback] = await hinted.handle(ChoiceMade(choice_for(asked, 1).token, who, channel()))
    assert await points(hinted, who) == 1
    assert "💡 Hint" not in labels(feedback)
    q4 = hinted.library.questions["core-q4"]
    prompt = await hinted.store.prompts.new(QUESTION, channel(), who, lesson_id=q4.lesson_id, item_id=q4.id,
                                            mode=AnswerMode.PRACTICE)
    assert labels(ask(hinted.ctx, q4, prompt, "", Audience.PRIVATE))[2:] == ["I don't know"]  # two choices, no hint


async def test_a_typed_question_with_hints_is_asked_with_buttons_and_its_hint_opens_the_form(hinted: StudyBot) -> None:
    who = learner()
    [asked] = await hinted.handle(Command("quiz", "", who, channel()))
    [feedback] = await hinted.handle(ChoiceMade(choice_for(asked, 0).token, who, channel()))
    [short] = await hinted.handle(ChoiceMade(button(feedback, "Next question"), who, channel()))
    assert short.form is None and labels(short) == ["Answer", "I don't know", "💡 Hint"]
    shown = await hint(hinted, button(short, "💡 Hint"), who)
    assert shown.text.startswith(f"💡 Hint 1 of 2: {HINTS[SHORT][0]}")
    assert labels(shown) == ["Answer", "I don't know", "💡 Another hint"]
    [form] = await hinted.handle(ChoiceMade(button(shown, "Answer"), who, channel()))
    assert form.form is not None
    [graded] = await hinted.handle(TextSubmitted(form.form.token, "It copies the whole model everywhere.", who,
                                                 channel()))
    [self_graded] = await hinted.handle(ChoiceMade(button(graded, "I got it right"), who, channel()))
    assert self_graded.text.startswith("Recorded: self-graded correct")
    assert await points(hinted, who) == 0  # the hint still costs the point a self-grade would give


async def test_insights_and_its_csv_count_the_hints_per_question(hinted: StudyBot) -> None:
    for user, taken in (("U1", 2), ("U2", 1), ("U3", 0)):
        who = learner(user)
        [asked] = await hinted.handle(Command("quiz", "", who, channel()))
        for _ in range(taken):
            await hint(hinted, button(asked, "💡 Hint"), who)
        await hinted.handle(ChoiceMade(choice_for(asked, 1).token, who, channel()))
    [reply] = await hinted.handle(Command("insights", "", TEACHER, channel()))
    [line] = [x for x in reply.text.splitlines() if x.startswith(f"• {MC}")]
    assert "3 answered, 100% correct" in line and line.endswith("; 2 took hints (3 hints)")
    files = {r.file.filename: r.file.content for r in await hinted.handle(Command("insights", "export", TEACHER,
                                                                                  channel())) if r.file}
    rows = list(csv.DictReader(io.StringIO(files["cohort_answers.csv"].decode("utf-8-sig"), newline="")))
    assert {r["learner"]: r["hints"] for r in rows if r["question"] == MC} == {
        "slack:U1": "2", "slack:U2": "1", "slack:U3": "0"}
    assert {r["learner"]: r["points"] for r in rows if r["question"] == MC}["slack:U3"] == "1"


def test_hints_in_the_pack_are_checked_and_written_in_the_answer_key(tmp_path: Path) -> None:
    content = hinted_pack(tmp_path)
    lesson = next(iter(check_library(content).library.lessons.values()))
    key = render_quiz(lesson).split("## Answer key", 1)[1]
    assert f"Hints, in order: (1) {HINTS[MC][0]} · (2) {HINTS[MC][1]}" in key
    quiz = content / "basics" / "quiz.yaml"
    good = quiz.read_text()
    for bad, message in (('hints: ["a", "b", "c", "d"]', "hints: at most 3 hints per question, not 4"),
                         ("hints: []", "hints: is an empty list; give one or more hints, or leave the key out"),
                         ('hints: "just one"', "hints: expected a list of text"),
                         ("hints: [3]", "hints[0]: expected text")):
        quiz.write_text(re.sub(r"^    hints: .*$", f"    {bad}", good, count=1, flags=re.MULTILINE))
        problems = [str(p) for p in check_library(content).problems]
        assert len(problems) == 1 and message in problems[0] and "\n" not in problems[0], (bad, problems)


async def test_two_features_declaring_one_aid_are_refused(hinted: StudyBot) -> None:
    twin = Feature("twin", aids=(hints.AID,))
    with pytest.raises(ValueError, match="two features declare the aid hint"):
        StudyBot(hinted.ctx, (*FEATURES, twin))


async def test_a_hint_in_a_public_round_is_private_and_closes_with_the_question(hinted: StudyBot,
                                                                                clock: FixedClock) -> None:
    """A round's question is answered from the hint's private copy; once its time is up, Hint says so."""
    replies = await hinted.handle(Command("quiz", "round", learner("U0"), channel()))
    [public] = [r for r in replies if r.audience is Audience.PUBLIC]
    assert labels(public)[-2:] == ["Next ▶", "💡 Hint"]
    shown = await hint(hinted, button(public, "💡 Hint"), learner("U1"))
    assert shown.audience is Audience.PRIVATE and shown.text.startswith(f"💡 Hint 1 of 2: {HINTS[MC][0]}")
    [graded] = await hinted.handle(ChoiceMade(choice_for(shown, 1).token, learner("U1"), channel()))
    assert graded.text.startswith("✅ Correct.")  # answered from the private copy of the round's question
    assert await points(hinted, learner("U1")) == 0  # a hinted right answer in a round earns nothing either
    await hinted.message_posted(public.tag, MessageRef("slack", "C1", "q1-message"))
    clock.advance(61)
    await fire_due(hinted, {"slack": RecordingOutbox()})  # the reveal closes the question
    [closed] = await hinted.handle(ChoiceMade(button(public, "💡 Hint"), learner("U2"), channel()))
    assert closed.text.startswith("That question has ended, and its hints with it.")
