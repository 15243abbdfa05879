"""Answering and storage read declarations: a throwaway mode, a throwaway offer and a throwaway
feature with a table of its own, each written to a temporary module, work through the real router,
answering pipeline and store (SQLite and PostgreSQL), with nothing in bot/ changed."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest
from support import channel, choice_for, learner

from bot.core.messages import ChoiceMade, Command
from bot.runtime.app import FEATURES, StudyBot

EXAM = '''
from bot.answering.asking import arrangement
from bot.core.messages import Audience
from bot.kit.commands import command
from bot.kit.context import Mode
from bot.kit.feature import Feature
from bot.store.model import QUESTION


@command(summary="An exam question: no feedback until the end")
async def exam(ctx, cmd):
    """/exam: the lesson's first question, as an exam asks it."""
    question = ctx.lesson(None).questions[0]
    prompt = await ctx.store.prompts.new(QUESTION, cmd.place, cmd.actor, lesson_id=question.lesson_id,
                                         item_id=question.id, mode="exam")
    return [question.ask(prompt.id, "Exam", Audience.PRIVATE, arrangement(question, prompt))]


FEATURE = Feature("exam", commands=(exam,), modes=(Mode("exam", feedback=False),))
'''

EXPLAIN = '''
from bot.core.messages import Choice
from bot.kit.context import Offered, Offer
from bot.kit.feature import Feature


async def explain(ctx, answered):
    prompt = await ctx.store.prompts.new("explain", answered.event.place, answered.event.actor,
                                         lesson_id=answered.lesson_id, item_id=answered.item_id)
    return Offered(("Stuck? A worked example is one press away.",), (Choice("Show me why", f"{prompt.id}.0"),))


async def on_explain(ctx, event, prompt, suffix):
    from bot.core.messages import Reply
    return [Reply(f"Worked example for {prompt.item_id}.")]


FEATURE = Feature("explain", choices={"explain": on_explain},
                  offers=(Offer("explain", applies=lambda answered: not answered.correct, make=explain),))
'''

NOTES = '''
from bot.core.messages import Reply
from bot.kit.commands import command
from bot.kit.feature import Feature
from bot.store.areas import Area

SCHEMA = {1: "CREATE TABLE notes (id {serial}, user_id TEXT NOT NULL, text TEXT NOT NULL)"}  # STEPS


class Notes:
    def __init__(self, engine):
        self.engine = engine

    async def add(self, user_id, text):
        def insert(c):
            c.execute("INSERT INTO notes (user_id, text) VALUES (?, ?)", (user_id, text))
        await self.engine.write(insert)

    async def count(self, user_id):
        rows = await self.engine.read("SELECT COUNT(*) AS n FROM notes WHERE user_id = ?", (user_id,))
        return int(rows[0]["n"])


AREA = Area("notes", SCHEMA, Notes)


@command(summary="Keep a note")
async def note(ctx, cmd):
    """/note text: keep a note."""
    await ctx.store.area(AREA).add(cmd.actor.user_id, cmd.args)
    return [Reply(f"Noted; you have {await ctx.store.area(AREA).count(cmd.actor.user_id)}.")]


FEATURE = Feature("notes", commands=(note,), storage=(AREA,))
'''
NOTES_STEP_2 = NOTES.replace("}  # STEPS", ', 2: "ALTER TABLE notes ADD COLUMN pinned INTEGER NOT NULL DEFAULT 0"}')


@pytest.fixture
def temporary_module(tmp_path: Path) -> Iterator:
    loaded: list[str] = []

    def load(name: str, source: str) -> ModuleType:
        path = tmp_path / f"{name}.py"
        path.write_text(source)
        spec = importlib.util.spec_from_file_location(name, path)
        assert spec and spec.loader
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = loaded.append(name) or module
        spec.loader.exec_module(module)
        return module

    yield load
    for name in loaded:
        sys.modules.pop(name, None)


async def started(settings, clock, *extra: ModuleType) -> StudyBot:  # noqa: ANN001
    return await StudyBot.start(settings, clock, (*FEATURES, *(m.FEATURE for m in extra)))


def _wrong_choice(reply):  # noqa: ANN001, ANN202
    return next(c for c in reply.choices if c.label not in ("I don't know",) and c.token.rsplit(".", 1)[1].isdigit())


async def test_a_mode_is_one_declaration(temporary_module, settings, clock) -> None:
    """An exam mode: no feedback until the end, no Next question; the answer is stored in that mode."""
    bot = await started(settings, clock, temporary_module("exam_mode", EXAM))
    try:
        who = learner("U5")
        [asked] = await bot.handle(Command("exam", "", who, channel()))
        question = bot.library.lesson(None).questions[0]
        [reply] = await bot.handle(ChoiceMade(choice_for(asked, question.correct_index).token, who, channel()))
        assert reply.text == "Answer recorded." and reply.choices == ()
        modes = await bot.store.engine.read("SELECT mode, correct FROM answers")
        assert [(r["mode"], r["correct"]) for r in modes] == [("exam", 1)]
    finally:
        await bot.close()


async def test_an_offer_is_one_declaration(temporary_module, settings, clock) -> None:
    """A button after wrong answers only, before the mode's Next question, and it works."""
    bot = await started(settings, clock, temporary_module("explain_offer", EXPLAIN))
    try:
        who = learner("U6")
        question = bot.library.lesson(None).questions[0]
        assert question.kind == "mc"
        [asked] = await bot.handle(Command("quiz", "", who, channel()))
        wrong = next(c for c in asked.choices if c.token != choice_for(asked, question.correct_index).token
                     and c.token.rsplit(".", 1)[1].isdigit())
        [missed] = await bot.handle(ChoiceMade(wrong.token, who, channel()))
        assert [c.label for c in missed.choices] == ["Show me why", "Next question"]
        assert "Stuck? A worked example is one press away." in missed.text.splitlines()
        [shown] = await bot.handle(ChoiceMade(missed.choices[0].token, who, channel()))
        assert shown.text == f"Worked example for {question.id}."
        [asked] = await bot.handle(ChoiceMade(missed.choices[1].token, who, channel()))
        second = bot.library.lesson(None).questions[1]
        if second.kind == "mc":
            [right] = await bot.handle(ChoiceMade(choice_for(asked, second.correct_index).token, who, channel()))
            assert [c.label for c in right.choices] == ["Next question"]
    finally:
        await bot.close()


@pytest.mark.both_engines
async def test_a_feature_with_a_table_of_its_own(temporary_module, settings, clock) -> None:
    """Its schema steps run once per database, and a step added later runs at the next start."""
    notes = temporary_module("notes_feature", NOTES)
    bot = await started(settings, clock, notes)
    try:
        assert (await bot.handle(Command("note", "read the brief", learner("U1"), channel())))[0].text == \
            "Noted; you have 1."
    finally:
        await bot.close()
    again = await started(settings, clock, notes)  # the step is not applied twice
    try:
        assert (await again.handle(Command("note", "then quiz", learner("U1"), channel())))[0].text == \
            "Noted; you have 2."
    finally:
        await again.close()
    grown = await started(settings, clock, temporary_module("notes_feature_2", NOTES_STEP_2))
    try:
        rows = await grown.store.engine.read("SELECT pinned FROM notes")
        assert [r["pinned"] for r in rows] == [0, 0]
        versions = await grown.store.engine.read("SELECT version FROM area_versions WHERE area = 'notes'")
        assert [r["version"] for r in versions] == [2]
    finally:
        await grown.close()


def test_two_features_may_not_declare_one_mode_or_form(temporary_module) -> None:
    from bot.kit.commands import CommandForm
    from bot.kit.context import Mode
    from bot.kit.feature import Feature

    exam = temporary_module("exam_mode_twice", EXAM).FEATURE
    with pytest.raises(ValueError, match="two features declare the mode exam"):
        StudyBot(None, (exam, Feature("again", modes=(Mode("exam"),))))  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="two features declare the form"):
        StudyBot(None, (*FEATURES, Feature("again", command_forms=(CommandForm("quiz", "round", None),))))  # type: ignore[arg-type]


async def test_a_database_whose_core_schema_made_the_disputes_table_keeps_it(tmp_path, clock) -> None:
    """The disputes table was the core schema's before the feature owned it: its first step finds it there."""
    import sqlite3

    from bot.features.disputes.storage import AREA
    from bot.store import Store
    from bot.store.sqlite_engine import migrate

    path = tmp_path / "older.db"
    with sqlite3.connect(path, isolation_level=None) as c:
        migrate(c)
        c.execute(AREA.schema[1].split(";")[0].replace("IF NOT EXISTS ", "").replace("{serial}", "INTEGER PRIMARY KEY"))
        c.execute("INSERT INTO learners (platform, cohort, user_id, display_name, last_seen) VALUES"
                  " ('slack', 'T1', 'U1', 'U1', '2026-01-01')")
        c.execute("INSERT INTO disputes (learner_id, platform, cohort, source, source_id, lesson_id, item_id, text,"
                  " rubric_correct, matched, missed, state, opened_at) VALUES"
                  " (1, 'slack', 'T1', 'answer', 7, 'l', 'q', 'my answer', 0, '[]', '[]', 'open', '2026-01-01')")
    store = await Store.open(path, clock, (AREA,))
    try:
        assert (await store.area(AREA).get(1)).text == "my answer"
        versions = await store.engine.read("SELECT version FROM area_versions WHERE area = 'disputes'")
        assert [r["version"] for r in versions] == [max(AREA.schema)]
    finally:
        await store.close()
