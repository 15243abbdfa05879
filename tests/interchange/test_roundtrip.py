"""Export, then import: the same questions, choices, keys and feedback, in every export format; and
the bundled lesson as an Anki package opens as a sound collection with its notes and cards."""

from __future__ import annotations

import zipfile
from pathlib import Path
from typing import Any

import pytest
from support import CONTENT

from bot.content.loader import check_library, load_library
from bot.interchange import readers
from bot.interchange.exporters import WRITERS
from bot.interchange.model import Item
from bot.interchange.readers.anki import read_collection, unpacked
from bot.interchange.safety import open_package
from bot.questions.mc import MultipleChoice
from bot.questions.order import Ordering
from bot.questions.short import ShortAnswer

LESSON = next(iter(load_library(CONTENT).lessons.values()))
READER = {"anki": "anki", "gift": "gift", "moodle-xml": "moodle-xml"}


def exported(tmp_path: Path, fmt: str) -> list[Item]:
    writer, suffix = WRITERS[fmt]
    data, _ = writer(LESSON)
    target = tmp_path / f"lesson{suffix}"
    target.write_bytes(data)
    return [i for i in readers.read(target, READER[fmt]).items if i.kind != "card"]


@pytest.mark.parametrize("fmt", ["anki", "gift", "moodle-xml"])
def test_export_then_import_gives_the_same_questions(tmp_path: Path, fmt: str) -> None:
    items = {i.prompt: i for i in exported(tmp_path, fmt)}
    held = [q for q in LESSON.questions if not (fmt == "gift" and isinstance(q, Ordering))]
    assert len(items) == len(held) and len(held) >= 9
    for q in held:
        item = items[q.prompt]
        assert item.explanation == q.explanation
        if isinstance(q, MultipleChoice):
            assert [(c.text, c.correct) for c in item.choices] == [(c.text, c.correct) for c in q.choices]
            assert [c.feedback for c in item.choices if not c.correct] == [c.why_wrong for c in q.choices
                                                                          if not c.correct]
        elif isinstance(q, ShortAnswer):
            assert item.kind == "short" and item.answers[0] == q.model_answer
            assert {a for p in q.rubric.points for a in p.accept} <= set(item.answers)
        else:
            assert isinstance(q, Ordering) and item.answers == q.steps


def test_the_lesson_as_anki_is_a_sound_collection(tmp_path: Path) -> None:
    data, _ = WRITERS["anki"][0](LESSON)
    package = tmp_path / "lesson.apkg"
    package.write_bytes(data)
    assert zipfile.ZipFile(package).testzip() is None
    with open_package(package) as opened, unpacked(opened) as (file, member):
        collection = read_collection(file)
    assert member == "collection.anki2"
    assert len(collection.notes) == len(LESSON.terms) + len(LESSON.questions)
    assert collection.cards == len(collection.notes)  # one card per note
    names = {t.name for t in collection.types.values()}
    assert {"studybot glossary term", "studybot multiple choice", "studybot short answer"} <= names
    assert any(t.typed == "Answer" for t in collection.types.values())  # the short answer asks to type it
    cards = {i.prompt: i.answers[0] for i in readers.read(package).items if i.kind == "card"}
    assert cards == {t.term: t.definition for t in LESSON.terms}


def test_a_gift_export_imports_into_a_pack_that_loads_the_same_choices(tmp_path: Path) -> None:
    from bot.interchange.pack_writer import write_pack

    writer, suffix = WRITERS["gift"]
    source = tmp_path / f"lesson{suffix}"
    source.write_bytes(writer(LESSON)[0])
    found = readers.read(source)
    written = write_pack(found, tmp_path / "content" / "again", tmp_path / "content")
    assert not [p for p in written.problems if "rubric" not in p]  # only the short answers' rubrics may need work
    loaded = {q.prompt: q for q in check_library(tmp_path / "content").library.questions.values()}
    mcs = [q for q in LESSON.questions if isinstance(q, MultipleChoice)]
    assert len(mcs) >= 4
    for q in mcs:
        assert loaded[q.prompt].choices == q.choices  # type: ignore[attr-defined]
        assert loaded[q.prompt].explanation == q.explanation


TRICKY = "Which of ~ = # { } : \\ and <b>&amp;</b> is “plain”?\n\nA second paragraph, after a blank line."


def tricky_lesson() -> Any:
    from dataclasses import replace

    from bot.questions.mc import AnswerOption

    q = next(q for q in LESSON.questions if isinstance(q, MultipleChoice))
    choices = (AnswerOption("a ~ b = c", True),
               AnswerOption("{x} # y: z \\ w", False, "Why: <i>not</i> & so on.\n\nReally."))
    return replace(LESSON, questions=(replace(q, prompt=TRICKY, explanation=TRICKY, choices=choices),), terms=())


@pytest.mark.parametrize("fmt", ["anki", "gift", "moodle-xml"])
def test_markup_characters_and_paragraphs_survive_the_round_trip(tmp_path: Path, fmt: str) -> None:
    writer, suffix = WRITERS[fmt]
    target = tmp_path / f"tricky{suffix}"
    target.write_bytes(writer(tricky_lesson())[0])
    [item] = readers.read(target, READER[fmt]).items
    assert item.prompt == TRICKY and item.explanation == TRICKY
    assert [(c.text, c.correct, c.feedback) for c in item.choices] == [
        ("a ~ b = c", True, ""), ("{x} # y: z \\ w", False, "Why: <i>not</i> & so on.\n\nReally.")]
