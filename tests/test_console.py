"""The console chat as a user meets it: `studybot console` in a subprocess, typed lines in."""

import asyncio
import contextlib
import io
import os
import subprocess
import sys
from collections.abc import AsyncIterator
from datetime import time
from pathlib import Path

import pytest
from readiness import READY_WITHIN
from support import CONTENT, CORE_PACK, REPO, order_numbers

from adapters.console import ConsoleChat, _stop_own_round
from bot.content.loader import load_library
from bot.core.clock import FixedClock
from bot.core.config import CohortSettings, LeaderboardSchedule, Settings
from bot.core.messages import Cohort
from bot.runtime.app import StudyBot
from bot.runtime.scheduler import fire_due


def run_console(tmp_path: Path, lines: list[str]) -> str:
    env = {**os.environ, "STUDYBOT_DB": str(tmp_path / "db" / "studybot.db"),
           "STUDYBOT_RESULTS_DIR": str(tmp_path / "results"), "STUDYBOT_CONTENT": str(CONTENT)}
    done = subprocess.run([sys.executable, "-m", "adapters.cli", "console"], input="\n".join(lines) + "\n",
                          capture_output=True, text=True, cwd=REPO, env=env, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout


async def test_a_digit_that_is_not_a_number_is_refused_and_the_chat_goes_on(tmp_path: Path) -> None:
    """² and ① count as digits to Python's isdigit() but int() cannot read them: the chat says what
    to type instead of ending."""
    settings = Settings(db_path=tmp_path / "bot.db", content_dir=CORE_PACK, results_dir=tmp_path / "results")
    bot = await StudyBot.start(settings, FixedClock("2026-11-30T08:00:00+00:00"))
    out = io.StringIO()
    chat = ConsoleChat(bot, out)
    try:
        await chat.line("/quiz")
        await chat.line("²")
        assert out.getvalue().endswith("Type a command such as /quiz or /help, or A, B, C or 1.\n")
        await chat.line("/help")
        assert out.getvalue().rstrip().splitlines()[-1].startswith("• ")
    finally:
        await bot.close()


def test_glossary_lookups(tmp_path: Path) -> None:
    out = run_console(tmp_path, ["/glossary fsdp", "/glossary FDSP", "/glossary", "/quit"])
    assert "FSDP (Fully Sharded Data Parallel" in out and "this is FSDP, the closest term" in out
    assert "Glossary terms (" in out


class Console:
    """`studybot console` in a subprocess, driven line by line as a person would."""

    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc
        self.seen = ""  # everything printed so far
        self.read_up_to = 0  # how much of it the test has looked at

    @classmethod
    async def start(cls, tmp_path: Path, content: Path, config: Path | None = None) -> "Console":
        env = {**os.environ, "STUDYBOT_DB": str(tmp_path / "db" / "studybot.db"),
               "STUDYBOT_RESULTS_DIR": str(tmp_path / "results"), "STUDYBOT_CONTENT": str(content),
               "STUDYBOT_CONFIG": str(config) if config else ""}
        proc = await asyncio.create_subprocess_exec(sys.executable, "-m", "adapters.cli", "console", cwd=REPO, env=env,
                                                    stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE)
        return cls(proc)

    async def expect(self, text: str, timeout: float = 10) -> str:
        """Read until `text` appears; return what was printed from the end of the last match to this one."""
        assert self.proc.stdout is not None
        start = self.read_up_to
        while (found := self.seen.find(text, start)) < 0:
            chunk = await asyncio.wait_for(self.proc.stdout.read(4096), timeout)
            assert chunk, f"the console ended before printing {text!r}:\n{self.seen[start:]}"
            self.seen += chunk.decode()
        self.read_up_to = found + len(text)
        return self.seen[start:self.read_up_to]

    async def ready(self) -> None:
        """Wait for the banner: the console says it reads lines (a busy machine starts it slowly)."""
        await self.expect("Type /help", timeout=READY_WITHIN)

    async def reply(self, quiet: float = 0.3) -> str:
        """Everything printed until the console has been quiet for `quiet` seconds."""
        assert self.proc.stdout is not None
        while True:
            try:
                chunk = await asyncio.wait_for(self.proc.stdout.read(4096), quiet)
            except TimeoutError:
                break
            assert chunk, "the console ended"
            self.seen += chunk.decode()
        text, self.read_up_to = self.seen[self.read_up_to:], len(self.seen)
        return text

    @classmethod
    @contextlib.asynccontextmanager
    async def running(cls, tmp_path: Path, content: Path, config: Path | None = None) -> AsyncIterator["Console"]:
        """A console that has printed its banner; killed at the end if the test left it running."""
        console = await cls.start(tmp_path, content, config)
        try:
            await console.ready()
            yield console
        finally:
            if console.proc.returncode is None:
                console.proc.kill()

    async def type(self, line: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write((line + "\n").encode())
        await self.proc.stdin.drain()

    async def quit(self) -> int:
        await self.type("/quit")
        return await asyncio.wait_for(self.proc.wait(), 10)


def numbered(text: str, label: str) -> str:
    """The number the console shows before a choice label."""
    return next(line.split(".", 1)[0] for line in text.splitlines() if line.split(". ", 1)[-1].startswith(label))


async def test_an_order_question_on_the_console(tmp_path: Path) -> None:
    """The put-in-order question lists its steps shuffled; the next line typed, the shown numbers in
    the right order, is graded right; a number that is not a step is refused and nothing is recorded."""
    lesson = next(iter(load_library(CORE_PACK).lessons.values()))
    order = next(q for q in lesson.questions if q.kind == "order")
    async with Console.running(tmp_path, CORE_PACK) as console:
        await console.type("/quiz")
        for _ in range(len(lesson.questions)):
            asked = await console.reply()
            if order.prompt in asked:
                break
            await console.type("I think it depends on the team" if "type it on the next line" in asked else "1")
            await console.type(numbered(await console.reply(), "Next question"))
        assert "type it on the next line" in asked
        numbers = order_numbers(order, asked)
        await console.type("9 9 9 9")
        assert "Give each number from 1 to 4 once" in await console.expect("Nothing was recorded.")
        await console.type(numbers)
        assert "✅ Right order." in await console.expect("Next question")
        assert await console.quit() == 0


async def test_a_console_cohort_gets_its_weekly_post(tmp_path: Path) -> None:
    """The console is the cohort `local` on the platform `console`; a weekly post configured for it is
    delivered to the console chat (no platform is guessed from the shape of the cohort's id)."""
    clock = FixedClock("2026-11-30T08:00:00+00:00")  # a Monday
    plan = LeaderboardSchedule(channel="console", weekday=0, at=time(9, 0))
    settings = Settings(db_path=tmp_path / "bot.db", content_dir=CORE_PACK, results_dir=tmp_path / "results",
                        cohorts={Cohort("console", "local"): CohortSettings(leaderboard=plan)})
    bot = await StudyBot.start(settings, clock)
    out = io.StringIO()
    chat = ConsoleChat(bot, out)
    try:
        await chat.line("/quiz")
        await chat.line(next(label for label, token in chat.choices.items() if token.endswith(".1")))
        assert await fire_due(bot, {"console": chat}) == 0
        clock.set("2026-11-30T09:00:00+00:00")
        assert await fire_due(bot, {"console": chat}) == 1
    finally:
        await bot.close()
    post = out.getvalue().split("Leaderboard · week 2026-W48", 1)
    assert len(post) == 2 and "No points yet" in post[1]  # the week before the post had no answers


async def test_a_whole_quiz_then_teachback_then_results(tmp_path: Path) -> None:
    """The bundled lesson answered right, question by question, as a person reads and types; then a
    teach-back, then the results file, whose path the console prints."""
    lesson = next(iter(load_library(CONTENT).lessons.values()))
    async with Console.running(tmp_path, CONTENT) as console:
        await console.type("/quiz")
        for q in lesson.questions:
            asked = await console.reply()
            assert q.prompt in asked
            if q.kind == "mc":
                right = q.choices[q.correct_index].text
                await console.type(next(line.split(".", 1)[0] for line in asked.splitlines() if line.endswith(right)))
            elif q.kind == "order":
                await console.type(order_numbers(q, asked))
            else:
                await console.type(q.model_answer)
            feedback = await console.reply()
            assert "I got it right" not in feedback and "Model answer" not in feedback  # graded right: no self-grade
            await console.type(numbered(feedback, "Next question"))
        total = len(lesson.questions)
        assert f"Score: {total}/{total}" in await console.reply()
        prompt = lesson.prompts[0]
        await console.type("/teachback")
        await console.reply()
        await console.type(". ".join(k.accept[0] for k in prompt.key_points))
        assert f"You covered {len(prompt.key_points)} of {len(prompt.key_points)} key points" in await console.reply()
        await console.type("/results")
        results = await console.reply()
        assert f"score: {total}/{total} (100%)" in results
        written = tmp_path / "results" / "local" / "console-learner" / "quiz_results.txt"
        assert f"quiz_results.txt was written to {written}" in results  # the console has no DMs to point to
        assert "direct messages" not in results
        assert await console.quit() == 0
    written = tmp_path / "results" / "local" / "console-learner" / "quiz_results.txt"
    assert f"score: {total}/{total} (100%)" in written.read_text()


async def answer_until_short(console: Console, lesson) -> tuple[str, object]:
    """Answer (anything) and move on until the console asks a short-answer question; its text and question."""
    for _ in range(len(lesson.questions)):
        asked = await console.reply()
        question = next(q for q in lesson.questions if q.prompt in asked)
        if question.kind == "short":
            return asked, question
        await console.type(order_numbers(question, asked) if question.kind == "order" else "1")
        await console.type(numbered(await console.reply(), "Next question"))
    raise AssertionError("no short-answer question came up")


async def test_self_grading_needs_a_real_attempt_and_instructors_can_audit_it(tmp_path: Path) -> None:
    """`x` is too short to grade; the question echoed is not offered "I got it right"; a real attempt is; the
    leaderboard marks the self-graded point;
    /audit lists it with the answer's text for an instructor, and refuses a learner."""
    lesson = next(iter(load_library(CONTENT).lessons.values()))
    learner_only = tmp_path / "learner.yaml"
    learner_only.write_text("instructors: {console: false}\n")
    attempt = "I think it mostly comes down to the hardware budget and how big the team is"
    async with Console.running(tmp_path, CONTENT, config=learner_only) as console:
        await console.type("/quiz")
        _, first = await answer_until_short(console, lesson)
        await console.type("x")  # too short to grade: not recorded, and the same question is still open (issue 26)
        assert "too short to grade" in await console.reply()
        await console.type(first.prompt)  # the question's own words: recorded, but no real attempt
        feedback = await console.reply()
        assert "I got it right" not in feedback and "Write your answer in a sentence or two" in feedback
        await console.type(numbered(feedback, "Next question"))
        _, second = await answer_until_short(console, lesson)
        await console.type(attempt)
        feedback = await console.reply()
        assert "I got it right" in feedback and "Graded correct" not in feedback
        await console.type(numbered(feedback, "I got it right"))
        assert "Recorded: self-graded correct" in await console.reply()
        await console.type("/leaderboard")
        board = await console.reply()
        assert "1 self-graded)" in board.split("\n", 2)[1]  # the learner's line marks the self-graded point
        await console.type("/audit")
        assert "Only instructors can audit" in await console.reply()
        assert await console.quit() == 0

    async with Console.running(tmp_path, CONTENT) as console:  # the console user is an instructor by default
        await console.type("/audit")
        audit = await console.reply()
        assert "Self-graded answers this week" in audit and ": 1, 1 graded right against the rubric" in audit
        assert f"{second.id} · self-graded right · rubric: wrong" in audit and attempt in audit
        assert first.id not in audit  # the `x` was never self-graded
        assert await console.quit() == 0


async def test_insights_export_writes_both_files_and_prints_their_paths(tmp_path: Path) -> None:
    """A terminal is no place for 500 lines of HTML: the CSV and the report are written under the
    results folder, beside the cohort's results file, and the console names where."""
    settings = Settings(db_path=tmp_path / "bot.db", content_dir=CORE_PACK, results_dir=tmp_path / "results")
    bot = await StudyBot.start(settings, FixedClock("2026-11-30T08:00:00+00:00"))
    out = io.StringIO()
    chat = ConsoleChat(bot, out)
    try:
        await chat.line("/insights export")
    finally:
        await bot.close()
    shown = out.getvalue()
    folder = tmp_path / "results" / "local" / "console@cohort"
    for name in ("cohort_answers.csv", "cohort_report.html"):
        assert f"{name} was written to {folder / name}" in shown
        assert (folder / name).stat().st_size > 0
    assert "<html" not in shown.lower() and "first_answer_correct" not in shown
    assert len(shown.splitlines()) < 10


async def start_chat(tmp_path: Path, clock: FixedClock) -> tuple[StudyBot, ConsoleChat, io.StringIO]:
    settings = Settings(db_path=tmp_path / "bot.db", content_dir=CORE_PACK, results_dir=tmp_path / "results")
    bot = await StudyBot.start(settings, clock)
    out = io.StringIO()
    return bot, ConsoleChat(bot, out), out


async def test_each_choice_has_one_label_and_the_label_shown_is_accepted(tmp_path: Path) -> None:
    bot, chat, out = await start_chat(tmp_path, FixedClock("2026-11-30T08:00:00+00:00"))
    try:
        await chat.line("/quiz")
        asked = out.getvalue()
        assert "1. A." not in asked and "\nA. " in asked and "\n1. I don't know" in asked
        right = next(line[0] for line in asked.splitlines() if line.endswith("The math inside each layer"))
        await chat.line(right.lower() + ".")  # as typed: "c." answers C
        assert "✅" in out.getvalue().split(asked, 1)[1]
    finally:
        await bot.close()


async def test_a_scored_teachback_ends_the_answer_prompt(tmp_path: Path) -> None:
    """Once a teach-back is scored, the next line is a command again, not a second attempt."""
    lesson = next(iter(load_library(CORE_PACK).lessons.values()))
    prompt = lesson.prompts[0]
    bot, chat, out = await start_chat(tmp_path, FixedClock("2026-11-30T08:00:00+00:00"))
    try:
        await chat.line(f"/teachback {prompt.id}")
        assert chat.prompt == "answer> "
        await chat.line(". ".join(k.accept[0] for k in prompt.key_points))
        assert f"You covered {len(prompt.key_points)} of {len(prompt.key_points)}" in out.getvalue()
        assert chat.prompt == "> "
        await chat.line("oops, a stray line")
        assert out.getvalue().endswith("Type a command such as /quiz or /help.\n")
        rows = await bot.store.engine.read("SELECT COUNT(*) AS n FROM teachbacks")
        assert rows[0]["n"] == 1
    finally:
        await bot.close()


async def test_a_round_question_arriving_never_retargets_a_pending_choice(tmp_path: Path) -> None:
    """A practice question waits for its answer when the round's next question is posted: the
    numbers already shown keep their meaning, the new question's choices get new ones; and a round
    question's answer form closes when the question is revealed."""
    clock = FixedClock("2026-11-30T08:00:00+00:00")
    bot, chat, out = await start_chat(tmp_path, clock)
    try:
        await chat.line("/quiz round")
        await chat.line("/quiz")  # the practice question: A, B, C and "1. I don't know"
        practice = chat.choices["1"]
        clock.set("2026-11-30T08:05:00+00:00")
        await fire_due(bot, {"console": chat})  # reveals round question 1, posts question 2
        posted = out.getvalue().rsplit("Round · question 2", 1)[1]
        assert "\n1. " not in posted and "\n2. Answer" in posted
        assert chat.choices["1"] == practice  # "1" still answers the practice question
        await chat.line("2")  # Answer, on round question 2
        assert chat.prompt == "answer> "
        clock.set("2026-11-30T08:10:00+00:00")
        await fire_due(bot, {"console": chat})  # question 2 revealed: its form is closed
        assert chat.form is None and chat.prompt == "> "
    finally:
        await bot.close()


async def test_one_question_rounds_and_one_teachback_attempt_are_counted_in_the_singular(tmp_path: Path) -> None:
    lesson = next(iter(load_library(CORE_PACK).lessons.values()))
    clock = FixedClock("2026-11-30T08:00:00+00:00")
    bot, chat, out = await start_chat(tmp_path, clock)
    try:
        await chat.line("/quiz round 1 seconds:10")
        assert "Round started: 1 question, 10 s each." in out.getvalue()
        prompt = lesson.prompts[0]
        await chat.line(f"/teachback {prompt.id}")
        await chat.line(". ".join(k.accept[0] for k in prompt.key_points))
        await chat.line("/insights")
        assert f"{prompt.id}" in out.getvalue() and ": 1 attempt, 0 partly right\n" in out.getvalue()
    finally:
        await bot.close()


def right_label(question, asked: str) -> str:
    """The label shown before a multiple-choice question's right option."""
    right = question.choices[question.correct_index].text
    return next(line.split(".", 1)[0] for line in asked.splitlines() if line.endswith(right))


async def test_a_round_question_above_round_started_is_answered(tmp_path: Path) -> None:
    """The round's question is printed, then "Round started" under it: the question's choices still
    answer the next line (a reply without choices to the same line keeps them), and the next line
    typed takes them away again (a label answers only what answered the last line)."""
    question = next(iter(load_library(CORE_PACK).lessons.values())).questions[0]
    clock = FixedClock("2026-11-30T08:00:00+00:00")
    bot, chat, out = await start_chat(tmp_path, clock)
    try:
        await chat.line("/quiz round 2 seconds:10")
        asked = out.getvalue()
        assert asked.index("Round · question 1 of 2") < asked.index("Round started: 2 questions, 10 s each.")
        label = right_label(question, asked)
        await chat.line(label.lower())
        assert "✅" in out.getvalue()[len(asked):]
        clock.set("2026-11-30T08:00:10+00:00")
        await fire_due(bot, {"console": chat})  # question 1 revealed, question 2 posted on its own
        assert "1 answered, 1 correct" in out.getvalue()
        await chat.line("/glossary fsdp")
        await chat.line("1")  # question 2's Answer, but a line was typed since it was shown
        assert "1 is not a choice here" in out.getvalue().rsplit("Fully Sharded Data Parallel", 1)[1]
        await chat.line("/quiz round stop")
        clock.set("2026-11-30T08:00:11+00:00")
        await fire_due(bot, {"console": chat})
        assert "Round over after 2 of 2 questions" not in out.getvalue() and "\nlearner: 1/2\n" in out.getvalue()
    finally:
        await bot.close()


async def test_a_later_chat_sees_the_running_rounds_question_and_answers_it(tmp_path: Path) -> None:
    """A round left running when a console chat was killed (a chat that ends stops its round): in the next
    one, /quiz round shows its question again to answer, and says how to stop it; stopped there, its summary
    follows while the console waits."""
    question = next(iter(load_library(CORE_PACK).lessons.values())).questions[0]
    async with Console.running(tmp_path, CORE_PACK) as console:
        await console.type("/quiz round")
        await console.expect("Round started")
        console.proc.kill()
        await console.proc.wait()

    async with Console.running(tmp_path, CORE_PACK) as console:
        await console.type("/quiz round")
        again = await console.reply()
        assert "A round is already running" in again and "/quiz round stop" in again and question.prompt in again
        await console.type(right_label(question, again))
        assert "✅" in await console.reply()
        await console.type("/quiz round stop")
        await console.expect("Round stopped")
        summary = await console.expect("Practise privately", timeout=5)  # the scheduler runs while it waits
        assert "Round over after 1 of 4 questions." in summary and "\nlearner: 1/1\n" in summary
        assert await console.quit() == 0


def test_a_round_stopped_just_before_the_input_ends_still_shows_its_summary(tmp_path: Path) -> None:
    """Piped lines end at once: what came due meanwhile (the stopped round's summary) is shown before Bye."""
    total = len(next(iter(load_library(CONTENT).lessons.values())).questions)
    out = run_console(tmp_path, ["/quiz round", "/quiz round stop"])
    assert "Round stopped" in out
    assert out.index(f"Round over after 1 of {total} questions.") < out.index("Bye.")


async def test_a_reveal_of_an_earlier_chats_post_leaves_this_chats_choices(tmp_path: Path) -> None:
    """Each console chat counts its messages from 1: the reveal of a round question posted in an
    earlier chat must not close the choices of this chat's message with the same number."""
    question = next(iter(load_library(CORE_PACK).lessons.values())).questions[0]
    clock = FixedClock("2026-11-30T08:00:00+00:00")
    bot, first, _ = await start_chat(tmp_path, clock)
    out = io.StringIO()
    later = ConsoleChat(bot, out)
    try:
        await first.line("/quiz round 1 seconds:10")
        await later.line("/quiz")  # the practice question: this chat's first message
        asked = out.getvalue()
        clock.set("2026-11-30T08:00:10+00:00")
        await fire_due(bot, {"console": later})  # the round's question revealed, and its summary
        assert "Round over." in out.getvalue() and "[a message of an earlier chat updated]" in out.getvalue()
        await later.line(right_label(question, asked))
        assert "✅" in out.getvalue().rsplit("Round over.", 1)[1]
    finally:
        await bot.close()


async def test_a_review_on_the_console_answers_by_what_it_shows(tmp_path: Path) -> None:
    """/quiz shows a question in the learner's order and /review in one of its own: the letter typed
    answers the review card just above, in the feedback and the stored answer. "I don't know" says
    the card comes next, and the header counts the cards due now apart from those due later today."""
    lesson = next(iter(load_library(CORE_PACK).lessons.values()))
    mc, short, order = lesson.questions[:3]
    right = mc.choices[mc.correct_index].text
    bot, chat, out = await start_chat(tmp_path, FixedClock("2026-11-30T08:00:00+00:00"))
    seen = 0

    async def typed(line: str) -> str:
        """What the console printed after a line typed."""
        nonlocal seen
        await chat.line(line)
        printed, seen = out.getvalue()[seen:], len(out.getvalue())
        return printed

    def letters(printed: str) -> dict[str, str]:
        return dict(line.split(". ", 1) for line in printed.splitlines() if line[:1].isupper() and line[1:3] == ". ")

    try:
        quiz_letter = next(k for k, text in letters(await typed("/quiz")).items() if text == right)
        for _ in range(40):  # until the review shows a wrong choice where the quiz showed the right one
            card = letters(await typed("/review"))
            if card[quiz_letter] != right:
                break
        assert card[quiz_letter] != right
        index = next(i for i, o in enumerate(mc.choices) if o.text == card[quiz_letter])
        feedback = await typed(quiz_letter.lower())  # as the newcomer typed it
        review_letter = next(k for k, text in card.items() if text == right)
        assert f"❌ Not quite. You chose {quiz_letter}: {mc.choices[index].why_wrong}" in feedback
        assert f"The answer is {review_letter}. {right}" in feedback
        rows = await bot.store.engine.read("SELECT choice FROM answers WHERE mode = 'review'")
        assert [r["choice"] for r in rows] == [index]
        asked = await typed(numbered(feedback, "Next question"))
        assert asked.startswith("Review · new card · none due now · 1 due later today · Core basics\n")
        assert short.prompt in asked
        unsure = await typed("idk")
        assert "This card is due again now, and no other card is, so /review asks it next." in unsure
        again = await typed(numbered(unsure, "Next question"))
        assert again.startswith("Review · due card · 1 due now · 1 due later today · Core basics\n")
        assert short.prompt in again
        done = await typed(short.model_answer)
        assert done.startswith("✅")
        steps = await typed(numbered(done, "Next question"))
        assert order.prompt in steps
        numbers = order_numbers(order, steps)
        graded = await typed(numbers)
        assert "✅ Right order." in graded and f"The right order: {numbers}" in graded
    finally:
        await bot.close()


class ClosedLater(io.StringIO):
    """A console output whose reader goes away (`studybot console | head`) when told."""

    gone = False

    def write(self, text: str) -> int:
        if self.gone:
            raise BrokenPipeError(32, "Broken pipe")
        return super().write(text)


async def test_a_timers_message_nobody_could_read_stays_due_for_the_next_chat(tmp_path: Path) -> None:
    clock = FixedClock("2026-11-30T08:00:00+00:00")
    bot, _, _ = await start_chat(tmp_path, clock)
    out = ClosedLater()
    chat = ConsoleChat(bot, out)
    try:
        await chat.line("/quiz round 1 seconds:10")
        await chat.line("/quiz round stop")
        out.gone = True
        clock.advance(11)
        await fire_due(bot, {"console": chat})  # the summary's timer, with the output closed
        assert chat.unread
        clock.advance(11)  # past the retry the failed delivery asked for
        later = io.StringIO()
        await fire_due(bot, {"console": ConsoleChat(bot, later)})
        assert "Round over" in later.getvalue()
    finally:
        await bot.close()


async def test_a_revealed_round_question_shown_again_takes_no_more_answers(tmp_path: Path) -> None:
    """`/quiz round` while one runs shows its question again; the reveal closes that copy's choices too, so
    the next question's choices are numbered from 1 and a stray `1` answers nothing that has ended."""
    clock = FixedClock("2026-11-30T08:00:00+00:00")
    bot, chat, out = await start_chat(tmp_path, clock)
    try:
        await chat.line("/quiz round 2 seconds:10")
        await chat.line("/quiz round")  # the running round's question, shown again
        assert chat.choices
        clock.advance(10)
        await fire_due(bot, {"console": chat})  # revealed, and the second question posted
        shown = out.getvalue()
        second = shown[shown.rindex("question 2 of 2"):]
        assert "\n1. Answer\n2. I don't know" in second  # numbered from 1: nothing of the first is pending
        assert all(token.partition(".")[0] == chat.choices["1"].partition(".")[0] for token in chat.choices.values())
    finally:
        await bot.close()


async def test_an_update_names_the_message_it_updates_by_its_first_line(tmp_path: Path) -> None:
    """A round question revealed in this chat is printed again under the first line the learner read
    it by, not an internal message number."""
    clock = FixedClock("2026-11-30T08:00:00+00:00")
    bot, chat, out = await start_chat(tmp_path, clock)
    try:
        await chat.line("/quiz round 1 seconds:10")
        heading = out.getvalue().splitlines()[0]
        clock.set("2026-11-30T08:00:10+00:00")
        await fire_due(bot, {"console": chat})
        revealed = out.getvalue().split(f"[update to the message above: {heading}]\n", 1)
        assert len(revealed) == 2 and revealed[1].startswith(heading), out.getvalue()
        assert "[message " not in out.getvalue()
    finally:
        await bot.close()


@pytest.mark.parametrize("ending", [["/quit"], []], ids=["/quit", "end of input"])
def test_a_round_started_in_the_chat_stops_when_the_chat_ends(tmp_path: Path, ending: list[str]) -> None:
    """Nobody else can answer a console round once its chat ends: it stops as /quiz round stop would,
    its summary shown before Bye., and the next chat starts with no round of the last one."""
    out = run_console(tmp_path, ["/quiz round 3 seconds:20", *ending])
    assert out.index("Round stopped") < out.index("Round over after 1 of 3 questions.") < out.index("Bye.")
    later = run_console(tmp_path, ["/quiz round stop"])
    assert "No round is running in this channel." in later and "earlier chat" not in later


def test_a_chat_without_a_round_ends_as_before(tmp_path: Path) -> None:
    out = run_console(tmp_path, ["/quiz", "/quit"])
    assert "Round" not in out and out.rstrip().endswith("Bye.")


async def test_a_choice_answered_closes_its_prompts_other_choices(tmp_path: Path) -> None:
    """Cancel on /forget me answers that prompt: a stray `1` afterwards is no "Yes, delete my data"; and a
    round question answered takes no second answer by another letter."""
    clock = FixedClock("2026-11-30T08:00:00+00:00")
    bot, chat, out = await start_chat(tmp_path, clock)
    try:
        await chat.line("/quiz")
        await chat.line("A")  # one answer stored, to be kept
        await chat.line("/forget me")
        asked = out.getvalue()
        cancel = next(line.split(".")[0] for line in asked.splitlines()[::-1] if "Cancel" in line)
        await chat.line(cancel)
        assert "Nothing was deleted" in out.getvalue()
        await chat.line("1")
        assert "Done:" not in out.getvalue() and "is not a choice here" in out.getvalue()
        await chat.line("/progress")
        assert "quiz answered 1/" in out.getvalue().rsplit("Nothing was deleted", 1)[-1]
    finally:
        await bot.close()


async def test_a_chat_ends_only_the_round_it_started(tmp_path: Path) -> None:
    """Two chats on one database (two processes on PostgreSQL): the one that did not start the round leaves
    it running when it ends; the one that started it stops it."""
    clock = FixedClock("2026-11-30T08:00:00+00:00")
    bot, starter, _ = await start_chat(tmp_path, clock)
    other = ConsoleChat(bot, io.StringIO())
    try:
        await starter.line("/quiz round 2 seconds:60")
        await _stop_own_round(bot, other)
        assert await bot.store.rounds.in_channel(starter.place) is not None
        await _stop_own_round(bot, starter)
        assert await bot.store.rounds.in_channel(starter.place) is None
    finally:
        await bot.close()


async def test_a_round_question_posted_while_self_grading_is_answered_by_its_number(tmp_path: Path) -> None:
    """The next round question is posted while the learner still has the last one's self-grade buttons: grading
    yourself answers those, and the new question's numbers still answer it (they once gave `Choose 4.`, the
    question lost)."""
    lesson = next(iter(load_library(CORE_PACK).lessons.values()))
    mc, short, order = lesson.questions[:3]
    clock = FixedClock("2026-11-30T08:00:00+00:00")
    bot, chat, out = await start_chat(tmp_path, clock)
    seen = 0

    async def typed(line: str) -> str:
        nonlocal seen
        await chat.line(line)
        printed, seen = out.getvalue()[seen:], len(out.getvalue())
        return printed

    async def posted(at: str) -> str:
        nonlocal seen
        clock.set(at)
        await fire_due(bot, {"console": chat})
        printed, seen = out.getvalue()[seen:], len(out.getvalue())
        return printed

    try:
        assert "✅" in await typed(right_label(mc, await typed("/quiz round 3 seconds:30")))
        second = await posted("2026-11-30T08:00:30+00:00")
        assert short.prompt in second
        await typed(numbered(second, "Answer"))
        feedback = await typed("I think it mostly comes down to the hardware budget and the team")
        assert "I got it right" in feedback
        third = await posted("2026-11-30T08:01:00+00:00")  # the second revealed, the third posted
        assert order.prompt in third
        assert "Recorded: self-graded correct" in await typed(numbered(feedback, "I got it right"))
        asked = await typed(numbered(third, "Answer"))
        assert "Choose" not in asked and chat.prompt == "answer> "
        assert "✅ Right order." in await typed(order_numbers(order, third))
    finally:
        await bot.close()



async def test_a_mistyped_command_is_told_the_closest_one(tmp_path: Path) -> None:
    async with Console.running(tmp_path, CORE_PACK) as console:
        await console.type("/quizz")
        assert "There is no command /quizz (did you mean /quiz?). Type /help to see the commands." in \
            await console.reply()
        await console.type("/xyzzy")  # nothing close: no guess
        assert "There is no command /xyzzy. Type /help to see the commands." in await console.reply()
        assert await console.quit() == 0


def test_streaks_time_zones_and_teams_at_the_console(tmp_path: Path) -> None:
    """The console learner sets a time zone, answers, sees a streak, joins a team and sees the team board."""
    config = tmp_path / "studybot.yaml"
    config.write_text("cohorts:\n  local: {platform: console, teams: {red: [someone]}, team_join: true}\n")
    env = {**os.environ, "STUDYBOT_DB": str(tmp_path / "db" / "studybot.db"),
           "STUDYBOT_RESULTS_DIR": str(tmp_path / "results"), "STUDYBOT_CONTENT": str(CORE_PACK),
           "STUDYBOT_CONFIG": str(config)}
    lines = ["/timezone America/New_York", "/streak", "/quiz", "A", "/streak", "/team join blue",
             "/leaderboard teams all", "/streak off", "/progress", "/quit"]
    done = subprocess.run([sys.executable, "-m", "adapters.cli", "console"], input="\n".join(lines) + "\n",
                          capture_output=True, text=True, cwd=REPO, env=env, timeout=60)
    out = done.stdout
    assert done.returncode == 0, done.stderr
    assert "Your time zone is now America/New_York" in out
    assert "Streak: none yet." in out and "Streak: 1 day in a row, today included." in out
    assert "in America/New_York" in out
    assert "You joined team blue" in out and "Team board · all time" in out and "Your team: blue." in out
    assert "Your streak is hidden." in out and out.count("Streak: 1 day") == 1  # not in /progress after off
