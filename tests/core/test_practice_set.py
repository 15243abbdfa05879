"""A pack's practice set (practice.yaml): questions outside the quiz that /review and practice rounds
draw on, while /quiz, /results and quiz.md keep to the quiz."""

import shutil
from pathlib import Path

import pytest
from fsrs import Scheduler
from support import CORE_PACK, answer, channel, learner

from bot.content.loader import check_library, load_library
from bot.content.render import render_quiz
from bot.core.config import Settings
from bot.core.messages import Audience, ChoiceMade, Command, MessageRef, TextSubmitted
from bot.runtime.app import StudyBot

PRACTICE = """\
questions:
  - id: core-p1
    type: mc
    goal: measuring
    prompt: "What does a training checkpoint hold?"
    choices:
      - text: "The state a job restarts from"
        correct: true
      - text: "Activations kept for the backward pass"
        why_wrong: "That is activation checkpointing, a different idea."
    explanation: "A checkpoint is the saved training state."
    sources: [S2]
"""


@pytest.fixture
def content(tmp_path: Path) -> Path:
    root = tmp_path / "content"
    shutil.copytree(CORE_PACK, root)
    (root / "basics" / "practice.yaml").write_text(PRACTICE)
    return root


@pytest.fixture
async def practising(content: Path, tmp_path: Path, clock):
    settings = Settings(db_path=tmp_path / "studybot.db", content_dir=content, results_dir=tmp_path / "results",
                        round_seconds=60)
    studybot = await StudyBot.start(settings, clock)
    studybot.ctx.fsrs = Scheduler(enable_fuzzing=False)
    yield studybot
    await studybot.close()


def test_the_practice_set_loads_beside_the_quiz_and_stays_out_of_it(content: Path) -> None:
    library = load_library(content)
    lesson = library.lessons["core-basics"]
    assert [q.id for q in lesson.practice] == ["core-p1"]
    assert "core-p1" not in lesson.question_ids and "core-p1" in lesson.review_question_ids
    assert "core-p1" in library.questions  # answerable by id, like every question
    assert "core-p1" not in render_quiz(lesson) and "What does a training checkpoint hold?" not in render_quiz(lesson)


def test_a_practice_question_is_checked_like_a_quiz_question(content: Path) -> None:
    (content / "basics" / "practice.yaml").write_text(PRACTICE.replace("goal: measuring", "goal: nothing")
                                                      .replace("id: core-p1", "id: core-q1"))
    problems = [str(p) for p in check_library(content).problems]
    assert any("practice.yaml" in p and "duplicate question 'core-q1'" in p for p in problems), problems
    assert any("practice.yaml" in p and "'nothing' is not a goal id" in p for p in problems), problems


async def test_review_serves_the_practice_set_after_the_quiz(practising) -> None:
    who = learner()
    lesson = practising.library.lessons["core-basics"]
    served = []
    for _ in range(len(lesson.review_questions)):
        [reply] = await practising.handle(Command("review", "", who, channel()))
        question = next(q for q in lesson.review_questions if q.prompt in reply.text)
        served.append(question.id)
        await practising.handle(answer(question, reply, who, channel()))
    assert served == list(lesson.question_ids) + ["core-p1"]
    [done] = await practising.handle(Command("review", "", who, channel()))
    assert done.text.startswith("Nothing is due in Core basics right now.")


async def test_quiz_keeps_to_the_quiz(practising) -> None:
    who = learner()
    [first] = await practising.handle(Command("quiz", "", who, channel()))
    assert f"question 1 of {len(practising.library.lessons['core-basics'].questions)}" in first.text


async def test_a_practice_round_asks_the_practice_set(practising) -> None:
    replies = await practising.handle(Command("quiz", "round core-basics practice", learner("U0"), channel()))
    [question] = [r for r in replies if r.audience is Audience.PUBLIC]
    await practising.message_posted(question.tag, MessageRef("slack", "C1", "q1-message"))
    assert replies[0].text.startswith("Round started: 1 question,")
    assert "What does a training checkpoint hold?" in question.text
    [refusal] = await practising.handle(Command("quiz", "round core-basics practice 2", learner("U0"),
                                                channel("T1", "C2")))
    assert refusal.text == "Lesson core-basics has 1 practice question; leave the number out, or give 1."


async def test_a_practice_round_of_a_lesson_without_a_practice_set_is_refused(bot) -> None:
    [refusal] = await bot.handle(Command("quiz", "round core-basics practice", learner("U0"), channel()))
    assert refusal.text == "Lesson core-basics has no practice questions yet."


SELF_GRADED_PRACTICE = PRACTICE + """
  - id: core-p2
    type: short
    goal: splitting
    prompt: "What does sharding the optimizer state save, and what does it cost?"
    model_answer: "It shards the parameters across GPUs and pays with extra communication."
    rubric:
      needed: 2
      points:
        - id: shards
          point: "It shards the model state across GPUs"
          accept: ["shards the parameters", "splits the model"]
        - id: communication
          point: "It pays with extra communication"
          accept: ["extra communication", "more communication"]
    explanation: "Each GPU holds a shard and gathers the rest when it is needed."
    sources: [S1]
"""


@pytest.fixture
async def practised(content: Path, tmp_path: Path, clock):
    """A learner who answered the whole quiz right, passed a teach-back, and in /review answered the
    practice set: the mc right, the short one missed and then self-graded right."""
    (content / "basics" / "practice.yaml").write_text(SELF_GRADED_PRACTICE)
    settings = Settings(db_path=tmp_path / "studybot.db", content_dir=content, results_dir=tmp_path / "results")
    bot = await StudyBot.start(settings, clock)
    who = learner()
    lesson = bot.library.lessons["core-basics"]
    [reply] = await bot.handle(Command("quiz", "", who, channel()))
    for q in lesson.questions:
        [feedback] = await bot.handle(answer(q, reply, who, channel()))
        [reply] = await bot.handle(ChoiceMade(feedback.choices[-1].token, who, channel()))
    [form] = await bot.handle(Command("teachback", "core-tb2", who, channel()))
    good = ". ".join(k.accept[0] for k in bot.library.prompts["core-tb2"].key_points)
    await bot.handle(TextSubmitted(form.form.token, good, who, channel()))
    for _ in lesson.practice:
        [card] = await bot.handle(Command("review", "", who, channel()))
        q = next(q for q in lesson.practice if q.prompt in card.text)
        attempt = "It copies everything onto each device so nothing is lost"
        event = answer(q, card, who, channel()) if q.kind == "mc" else TextSubmitted(card.form.token, attempt,
                                                                                     who, channel())
        [feedback] = await bot.handle(event)
        if q.kind == "short":
            got_it = next(c for c in feedback.choices if c.label == "I got it right")
            await bot.handle(ChoiceMade(got_it.token, who, channel()))
    yield bot, who, lesson
    await bot.close()


async def test_progress_and_the_leaderboard_count_the_same_points(practised) -> None:
    """A lesson's points in /progress are all its points (quiz, practice set, teach-backs), as the week's
    points and the leaderboard count them, and marked alike."""
    bot, who, lesson = practised
    points = len(lesson.questions) + 1 + len(lesson.practice)
    [progress] = await bot.handle(Command("progress", "", who, channel()))
    assert (f"quiz answered {len(lesson.questions)}/{len(lesson.questions)}, correct {len(lesson.questions)}; "
            f"practice set answered 2/2, correct 2; teach-backs 1 (1 point); points {points} (1 self-graded)"
            ) in progress.text
    assert f"This week ({bot.ctx.week(who.in_cohort)}, all lessons): rank 1, {points} points (1 self-graded)" \
        in progress.text
    [board] = await bot.handle(Command("leaderboard", "", who, channel()))
    assert f"1. name-U1 · {points} (1 self-graded)" in board.text


async def test_the_results_files_self_graded_count_is_over_the_lines_it_lists(practised, tmp_path: Path) -> None:
    """quiz_results.txt lists the quiz (not the practice set), and its header counts only what it lists."""
    bot, who, lesson = practised
    await bot.handle(Command("results", "", who, channel()))
    lines = (tmp_path / "results" / "T1" / "slack-U1" / "quiz_results.txt").read_text().splitlines()
    listed = [line for line in lines if "\t" in line]
    assert [line.split("\t")[0] for line in listed] == list(lesson.question_ids)
    assert f"self-graded: {sum(line.endswith('self-graded') for line in listed)}" in lines



async def test_the_quiz_summary_counts_self_graded_answers_as_the_results_file_does(practised) -> None:
    """The practice answer its learner graded is no quiz line: the summary's count is the results file's."""
    bot, who, lesson = practised
    [summary] = await bot.handle(Command("quiz", "", who, channel()))
    assert "Self-graded answers: 0." in summary.text
    [sent] = [r for r in await bot.handle(Command("results", "", who, channel())) if r.file]
    assert "self-graded: 0" in sent.file.content.decode().splitlines()
