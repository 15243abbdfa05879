"""Disputes on the console, as a user meets them: `studybot console` in a subprocess. The learner sends
a short answer's verdict to the instructor and is refused `/audit disputes`; the console restarts with
the dispute open (the same person, now an instructor), lists it, settles it with one number, and the
direct message and the leaderboard's mark follow."""

import contextlib
from collections.abc import AsyncIterator
from pathlib import Path

from support import CONTENT
from test_console import Console, answer_until_short, numbered

from bot.content.loader import load_library
from bot.content.model import Lesson
from bot.questions.base import Question

ATTEMPT = "I think it mostly comes down to the hardware budget and how big the team is"


@contextlib.asynccontextmanager
async def learner_at_a_wrong_short_answer(tmp_path: Path) -> AsyncIterator[tuple[Console, Lesson, Question, str]]:
    """A learner's console (not an instructor) whose short answer was just graded wrong, and its feedback."""
    lesson = next(iter(load_library(CONTENT).lessons.values()))
    learner_only = tmp_path / "learner.yaml"
    learner_only.write_text("instructors: {console: false}\n")
    async with Console.running(tmp_path, CONTENT, config=learner_only) as console:
        await console.type("/quiz")
        _, question = await answer_until_short(console, lesson)
        await console.type(ATTEMPT)
        yield console, lesson, question, await console.reply()


async def test_a_dispute_sent_refused_to_a_learner_then_settled_after_a_restart(tmp_path: Path) -> None:
    async with learner_at_a_wrong_short_answer(tmp_path) as (console, lesson, question, feedback):
        assert "Graded correct" not in feedback and "Ask my instructor" in feedback
        await console.type(numbered(feedback, "Ask my instructor"))
        assert "Sent to your instructor" in await console.reply()
        await console.type("/audit disputes")
        assert "Only instructors can settle disputes" in await console.reply()
        assert await console.quit() == 0

    async with Console.running(tmp_path, CONTENT) as console:  # the console user is an instructor by default
        await console.type("/audit disputes")
        listing = await console.reply()
        assert "Open disputes: 1." in listing and f"{question.id} (short answer) · rubric: wrong" in listing
        assert ATTEMPT in listing
        await console.type(numbered(listing, "Accept #1"))
        settled = await console.expect("by direct message.")
        assert "Accepted dispute #1: learner gets 1 point, instructor-graded" in settled
        await console.expect("Your instructor accepted your short answer")  # the scheduler's direct message
        await console.type("/leaderboard")
        board = await console.expect("instructor-graded).")
        assert "1. learner · " in board and " (1 instructor-graded)\nYou: rank 1 with " in board
        assert board.rstrip().endswith(" (1 instructor-graded).")  # the marks after "points"
        assert await console.quit() == 0


async def test_after_asking_the_instructor_the_verdicts_next_question_still_answers(tmp_path: Path) -> None:
    """"Sent to your instructor" offers nothing of its own: the verdict's other choices stay open (its
    buttons stay on Slack and Discord too), so its Next question, typed by its number, moves on."""
    async with learner_at_a_wrong_short_answer(tmp_path) as (console, lesson, question, feedback):
        await console.type(numbered(feedback, "Ask my instructor"))
        assert "Sent to your instructor" in await console.reply()
        await console.type(numbered(feedback, "Next question"))
        following = await console.reply()
        assert "is not a choice here" not in following and question.prompt not in following
        assert any(q.prompt in following for q in lesson.questions), following
        assert await console.quit() == 0
