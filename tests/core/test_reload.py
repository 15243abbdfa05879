"""Reloading the lesson packs while the bot runs (StudyBot.reload): a broken pack keeps the old
library serving and reports every problem; a fixed one serves from the next event; a question
removed by a reload answers its old buttons and forms plainly, and nothing recorded is lost,
also for answers that arrive in a burst around the reload."""

from __future__ import annotations

import asyncio
import logging
import re
import shutil
import threading
import time
from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path

import pytest
from fsrs import Scheduler
from support import CORE_PACK, RecordingOutbox, answer, channel, learner

from bot.core.clock import FixedClock
from bot.core.config import Settings
from bot.core.messages import Audience, ChoiceMade, Command, MessageRef, TextSubmitted
from bot.runtime import app
from bot.runtime.app import StudyBot
from bot.runtime.scheduler import fire_due
from bot.store.model import RoundState

PROBLEM = re.compile(r"^\S+:\d+: \S+: .+$")  # file:line: field: message
REMOVED = "That question was removed from the lesson."
Q1_PROMPT = "What does tensor parallelism split?"
Q1_REWORDED = "Which part of the work does tensor parallelism split?"


@pytest.fixture
def content(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the core pack the test may edit, run from the folder above it (problems name content/…)."""
    folder = tmp_path / "content"
    shutil.copytree(CORE_PACK, folder)
    monkeypatch.chdir(tmp_path)
    return folder


@pytest.fixture
async def bot(settings: Settings, clock: FixedClock, content: Path) -> AsyncIterator[StudyBot]:
    studybot = await StudyBot.start(replace(settings, content_dir=content), clock)
    studybot.ctx.fsrs = Scheduler(enable_fuzzing=False)
    yield studybot
    await studybot.close()


def edit(file: Path, old: str, new: str) -> None:
    text = file.read_text()
    assert old in text, f"{old!r} is not in {file}"
    file.write_text(text.replace(old, new))


def remove_question(quiz: Path, question_id: str) -> None:
    """Drop one question (its block up to the next one) from quiz.yaml."""
    blocks = re.split(r"(?m)^(?=  - id: )", quiz.read_text())
    kept = [b for b in blocks if not b.startswith(f"  - id: {question_id}\n")]
    assert len(kept) == len(blocks) - 1
    quiz.write_text("".join(kept))


async def quiz(bot: StudyBot, who=None):
    [reply] = await bot.handle(Command("quiz", "", who or learner(), channel()))
    return reply


async def test_a_broken_pack_keeps_the_old_library_and_reports_every_problem(
        bot: StudyBot, content: Path, caplog: pytest.LogCaptureFixture) -> None:
    before = bot.library
    quiz_file, glossary_file = content / "basics" / "quiz.yaml", content / "basics" / "glossary.yaml"
    edit(quiz_file, "    model_answer: \"It shards the parameters across GPUs and pays with extra communication.\"\n",
         "")
    edit(quiz_file, Q1_PROMPT, Q1_REWORDED)  # a good change in the same reload is not taken either
    glossary_file.write_text(glossary_file.read_text() + "\n  - term: [unclosed\n")
    caplog.set_level(logging.INFO, logger="studybot")

    report = await bot.reload()

    problems = [str(p) for p in report.problems]
    assert len(problems) == 2 and all(PROBLEM.match(p) for p in problems), problems
    assert any(p.startswith("content/basics/quiz.yaml:16: questions[1]: ") and "model_answer" in p
               for p in problems), problems
    assert any(p.startswith("content/basics/glossary.yaml:") and ": yaml: not valid YAML" in p
               for p in problems), problems
    logged = [r.getMessage() for r in caplog.records]
    assert all(p in logged for p in problems)
    assert any("still serving the ones loaded before" in m for m in logged)
    assert not any("reloaded" in m for m in logged)
    assert bot.library is before
    assert Q1_PROMPT in (await quiz(bot)).text


async def test_a_fixed_pack_serves_from_the_next_event(bot: StudyBot, content: Path,
                                                       caplog: pytest.LogCaptureFixture) -> None:
    first = await quiz(bot, learner("U1"))
    assert Q1_PROMPT in first.text
    edit(content / "basics" / "quiz.yaml", Q1_PROMPT, Q1_REWORDED)
    edit(content / "basics" / "glossary.yaml", '["Model FLOPs utilization"]',
         '["Model FLOPs utilization", "mfu ratio"]')
    caplog.set_level(logging.INFO, logger="studybot")

    report = await bot.reload()

    assert report.problems == []
    assert any(r.getMessage().startswith("lesson packs reloaded: 1 lesson(s), 4 questions") for r in caplog.records)
    assert Q1_REWORDED in (await quiz(bot, learner("U2"))).text
    [term] = await bot.handle(Command("glossary", "mfu ratio", learner(), channel()))
    assert term.text.startswith("**MFU**")  # the glossary index is rebuilt with the library
    q1 = bot.library.questions["core-q1"]
    [feedback] = await bot.handle(answer(q1, first, learner("U1"), channel()))  # asked before, answered after
    assert "Correct" in feedback.text


async def test_a_removed_questions_button_and_form_say_so_and_keep_what_was_recorded(
        bot: StudyBot, content: Path) -> None:
    """core-q1 (buttons) and core-q2 (a form) are asked; core-q1 is answered; both go in a reload."""
    who, other = learner("U1"), learner("U2")
    asked = await quiz(bot, who)
    q1 = bot.library.questions["core-q1"]
    [feedback] = await bot.handle(answer(q1, asked, who, channel()))
    [short] = await bot.handle(ChoiceMade(feedback.choices[-1].token, who, channel()))  # Next question: core-q2
    assert short.form is not None and "FSDP" in short.text
    unanswered = await quiz(bot, other)  # core-q1, never answered
    rows_before = await bot.store.engine.read("SELECT * FROM answers ORDER BY id")
    points_before = (await bot.store.boards.standing(who, None)).points
    assert len(rows_before) == 1 and points_before == 1

    quiz_file = content / "basics" / "quiz.yaml"
    remove_question(quiz_file, "core-q1")
    remove_question(quiz_file, "core-q2")
    assert (await bot.reload()).problems == []

    for event in (ChoiceMade(unanswered.choices[0].token, other, channel()),
                  ChoiceMade(unanswered.choices[-1].token, other, channel()),  # "I don't know"
                  TextSubmitted(short.form.token, "It shards the parameters.", who, channel())):
        [reply] = await bot.handle(event)
        assert reply.text.startswith(REMOVED) and reply.audience is Audience.PRIVATE
        assert "/quiz" in reply.text
    assert await bot.store.engine.read("SELECT * FROM answers ORDER BY id") == rows_before
    assert (await bot.store.boards.standing(who, None)).points == points_before
    assert "Put the steps of a training run in order." in (await quiz(bot, learner("U3"))).text


async def test_a_burst_of_answers_around_a_reload_loses_none(bot: StudyBot, content: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """Sixty learners answer in three waves around a reload that rewords core-q1 and removes
    core-q4: the first wave is in flight when the new packs are ready, the second starts as the
    reload goes on, the third after it. Every answer to core-q1 is recorded exactly once; an
    answer to core-q4 is recorded and told so, or refused as removed and not recorded, never in
    between; the first wave was served by the packs it began with, the third by the new ones."""
    lesson = next(iter(bot.library.lessons.values()))
    q1, q4 = lesson.questions[0], lesson.questions[3]
    asked = []
    for n in range(60):
        who = learner(f"U{n}")
        reply = await quiz(bot, who)
        if n % 2:  # odd learners first answer core-q1..q3, so that /quiz asks them core-q4
            for q in lesson.questions[:3]:
                [feedback] = await bot.handle(answer(q, reply, who, channel()))
                [reply] = await bot.handle(ChoiceMade(feedback.choices[-1].token, who, channel()))
        asked.append((who, q4 if n % 2 else q1, reply))
    [last] = await bot.store.engine.read("SELECT MAX(id) AS id FROM answers")
    edit(content / "basics" / "quiz.yaml", Q1_PROMPT, Q1_REWORDED)
    remove_question(content / "basics" / "quiz.yaml", "core-q4")

    real_check, checked, go = app.check_library, threading.Event(), threading.Event()

    def check(root: Path):  # the real check, held back until the first wave is in flight
        report = real_check(root)
        checked.set()
        go.wait(5)
        return report

    monkeypatch.setattr(app, "check_library", check)
    waves = [[answer(q, reply, who, channel()) for who, q, reply in asked[i:i + 20]] for i in (0, 20, 40)]
    reloading = asyncio.create_task(bot.reload())
    await asyncio.to_thread(checked.wait, 5)
    first = [asyncio.create_task(bot.handle(e)) for e in waves[0]]
    await asyncio.sleep(0)  # each has entered handle() and waits for the store
    go.set()
    second = [asyncio.create_task(bot.handle(e)) for e in waves[1]]
    report = await reloading
    third = [asyncio.create_task(bot.handle(e)) for e in waves[2]]
    replies = [reply for [reply] in await asyncio.gather(*first, *second, *third)]

    assert report.problems == [] and "core-q4" not in bot.library.questions
    rows = await bot.store.engine.read(
        "SELECT l.user_id, a.question_id, COUNT(*) AS n FROM answers a JOIN learners l ON l.id = a.learner_id "
        "WHERE a.id > ? GROUP BY l.user_id, a.question_id", (last["id"],))
    recorded = {(r["user_id"], r["question_id"]): r["n"] for r in rows}
    assert set(recorded.values()) == {1}
    told = []
    for (who, q, _), reply in zip(asked, replies, strict=True):
        told.append(reply.text.startswith("✅ Correct"))
        assert told[-1] or (q is q4 and reply.text.startswith(REMOVED)), reply.text
        assert ((who.user_id, q.id) in recorded) == told[-1], (who.user_id, q.id, reply.text)
    assert sum(1 for _, q_id in recorded if q_id == q1.id) == 30
    assert all(told[:20])  # begun before the swap: the old packs, core-q4 included
    assert [told[i] for i in range(40, 60)] == [q is q1 for _, q, _ in asked[40:]]  # after it: core-q4 is gone


async def test_a_reload_waits_for_the_event_in_flight(bot: StudyBot, content: Path) -> None:
    """The library changes between two events, never during one."""
    before = bot.library
    edit(content / "basics" / "quiz.yaml", Q1_PROMPT, Q1_REWORDED)
    async with bot.gate.event():  # an event being handled
        reloading = asyncio.create_task(bot.reload())
        done, _ = await asyncio.wait({reloading}, timeout=0.5)
        assert not done and bot.library is before
    await reloading
    assert bot.library.questions["core-q1"].prompt == Q1_REWORDED


async def test_overlapping_reloads_end_with_the_newest_packs(bot: StudyBot, content: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """Two reloads asked for at once (SIGHUP twice) run one after the other: a slow first read
    finishing last never puts back the packs as they were before the second."""
    real_check = app.check_library
    calls, running, most = [0], [0], [0]
    edited = threading.Event()
    lock = threading.Lock()

    def check(root: Path):
        with lock:
            calls[0] += 1
            running[0] += 1
            most[0] = max(most[0], running[0])
            first = calls[0] == 1
        try:
            report = real_check(root)
            if first:  # the pack is edited while the first reload is still busy with what it read
                edit(content / "basics" / "quiz.yaml", Q1_PROMPT, Q1_REWORDED)
                edited.set()
                time.sleep(0.2)
            return report
        finally:
            with lock:
                running[0] -= 1

    monkeypatch.setattr(app, "check_library", check)
    first = asyncio.create_task(bot.reload())
    await asyncio.to_thread(edited.wait, 5)
    await asyncio.gather(first, bot.reload())
    assert bot.library.questions["core-q1"].prompt == Q1_REWORDED
    assert most[0] == 1


async def test_a_round_goes_on_past_questions_a_reload_removed(bot: StudyBot, content: Path, clock) -> None:
    """The open question and the next one are removed mid-round: Next still works on both, and a
    removed question never counts as one nobody answered (the round is not paused for it)."""
    starter = learner("U0")
    replies = await bot.handle(Command("quiz", "round 3", starter, channel()))
    [first] = [r for r in replies if r.audience is Audience.PUBLIC]
    await bot.message_posted(first.tag, MessageRef("slack", "C1", "q1"))
    remove_question(content / "basics" / "quiz.yaml", "core-q1")
    remove_question(content / "basics" / "quiz.yaml", "core-q2")
    assert (await bot.reload()).problems == []
    outbox = RecordingOutbox()
    for _ in range(2):  # question 1, then question 2: both removed, nobody answered either
        [hurried] = await bot.handle(ChoiceMade(next(c for c in first.choices if c.label == "Next ▶").token,
                                                starter, channel()))
        assert hurried.text == "Revealing it now."
        assert await fire_due(bot, {"slack": outbox}) == 1
        first = outbox.sent[-1]
        assert "removed from the lesson" in outbox.edits[-1][1].text
    assert first.text.startswith("Round · question 3 of 3") and "Put the steps" in first.text
    assert (await bot.store.rounds.in_channel(channel())).state is RoundState.OPEN


async def test_a_burst_of_reload_requests_reads_the_packs_at_most_twice(bot: StudyBot, content: Path,
                                                                        caplog: pytest.LogCaptureFixture) -> None:
    """A SIGHUP storm: requests that arrive while a reload waits to begin share it, so each one is
    answered by a reading made after it arrived, and the packs are read one more time, not once each."""
    caplog.set_level(logging.INFO, app.RELOAD_LOG)
    edit(content / "basics" / "quiz.yaml", Q1_PROMPT, Q1_REWORDED)
    reports = await asyncio.gather(*(bot.reload() for _ in range(20)))
    assert all(report.problems == [] for report in reports)
    assert bot.library.questions["core-q1"].prompt == Q1_REWORDED
    assert 1 <= sum(m.startswith("lesson packs reloaded") for m in caplog.messages) <= 2
