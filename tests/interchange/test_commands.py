"""`studybot import` and `studybot export` end to end: the files each writes, flashcards as practice
questions, the newest Anki collection format, and the gradebook from a real database and config."""

from __future__ import annotations

import asyncio
import csv
import io
import sqlite3
import zipfile
from pathlib import Path

import genanki
import pytest
import zstandard
from support import CONTENT, CORE_PACK, learner, record

from adapters.cli import main
from bot.content.model import Lesson
from bot.core.clock import FixedClock
from bot.core.config import Settings
from bot.interchange import readers
from bot.interchange.exporters.anki import MODELS
from bot.interchange.readers.anki import MODEL_TERM
from bot.runtime.app import StudyBot


def run(argv: list[str]) -> int:
    with pytest.raises(SystemExit) as ended:
        main(argv)
    return int(ended.value.code or 0)


@pytest.mark.parametrize(("fmt", "suffix", "starts"), [("anki", ".apkg", b"PK"), ("gift", ".gift.txt", b"// "),
                                                        ("moodle-xml", ".xml", b"<?xml")])
def test_export_writes_the_lesson_in_each_format(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str], fmt: str, suffix: str,
                                                 starts: bytes) -> None:
    monkeypatch.setenv("STUDYBOT_CONTENT", str(CONTENT))
    monkeypatch.chdir(tmp_path)
    assert run(["export", fmt, "meta"]) == 0
    [written] = list(tmp_path.iterdir())
    assert written.name == f"meta-llm-scale{suffix}" and written.read_bytes().startswith(starts)
    assert capsys.readouterr().out.startswith(f"wrote meta-llm-scale{suffix}: ")


def test_export_of_an_unknown_lesson_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("STUDYBOT_CONTENT", str(CONTENT))
    monkeypatch.chdir(tmp_path)
    assert run(["export", "gift", "biology"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no lesson 'biology'" in err and "meta-llm-scale" in err
    assert list(tmp_path.iterdir()) == []


def test_flashcards_become_practice_questions_when_asked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    cards = tmp_path / "cards.tsv"
    cards.write_text("term\tdefinition\nosmosis\twater moving across a membrane\nmitosis\tone cell dividing in two\n")
    assert run(["import", str(cards), "--pack", "content/bio", "--cards", "practice"]) in (0, 1)
    practice = (tmp_path / "content/bio/practice.yaml").read_text()
    assert "prompt: osmosis" in practice and "model_answer: one cell dividing in two" in practice
    assert not (tmp_path / "content/bio/glossary.yaml").exists()
    assert run(["import", str(cards), "--pack", "content/words"]) == 0
    glossary = (tmp_path / "content/words/glossary.yaml").read_text()
    assert "term: osmosis" in glossary and "definition: water moving across a membrane" in glossary


def test_the_zstd_collection_of_newer_anki_is_read_before_the_stub(tmp_path: Path) -> None:
    deck = genanki.Deck(42, "zstd")
    deck.add_note(genanki.Note(MODELS[MODEL_TERM], ["photosynthesis", "light made into sugar"]))
    plain = tmp_path / "plain.apkg"
    genanki.Package(deck).write_to_file(str(plain))
    stub = genanki.Deck(43, "stub")
    stub.add_note(genanki.Note(MODELS[MODEL_TERM], ["This file requires a newer version of Anki.", "-"]))
    old = tmp_path / "stub.apkg"
    genanki.Package(stub).write_to_file(str(old))
    newer = tmp_path / "newer.colpkg"
    with zipfile.ZipFile(plain) as a, zipfile.ZipFile(old) as b, zipfile.ZipFile(newer, "w") as out:
        out.writestr("collection.anki2", b.read("collection.anki2"))
        out.writestr("collection.anki21b", zstandard.ZstdCompressor().compress(a.read("collection.anki2")))
    [card] = readers.read(newer).items
    assert (card.prompt, card.answers) == ("photosynthesis", ("light made into sugar",))


async def answered(settings: Settings) -> Lesson:
    """Three learners of cohort slack:T1: U1 right twice, U2 wrong once, U3 nothing yet."""
    bot = await StudyBot.start(settings, FixedClock())
    lesson = next(iter(bot.library.lessons.values()))
    ana, ben, cal = learner("U1"), learner("U2"), learner("U3")
    for who in (ana, ben, cal):
        await bot.store.learners.touch(who)
    await record(bot, ana, lesson.questions[0].id, lesson_id=lesson.id)
    await record(bot, ana, lesson.questions[1].id, lesson_id=lesson.id)
    await record(bot, ben, lesson.questions[0].id, correct=False, lesson_id=lesson.id)
    await bot.close()
    return lesson


def test_export_gradebook_reads_the_database_and_the_config_map(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    settings = Settings(db_path=tmp_path / "studybot.db", content_dir=CORE_PACK, results_dir=tmp_path / "results")
    lesson = asyncio.run(answered(settings))
    config = tmp_path / "studybot.yaml"
    config.write_text('cohorts: {T1: {platform: slack, gradebook: {U1: "=s001", U2: s002}}}\n')
    monkeypatch.setenv("STUDYBOT_DB", str(settings.db_path))
    monkeypatch.setenv("STUDYBOT_CONTENT", str(CORE_PACK))
    monkeypatch.setenv("STUDYBOT_CONFIG", str(config))
    monkeypatch.chdir(tmp_path)
    assert run(["export", "gradebook", "canvas", "--cohort", "slack:T1"]) == 0
    out = capsys.readouterr().out
    assert "wrote gradebook_canvas.csv: 2 learner(s)" in out and "left out 1 learner(s)" in out
    rows = list(csv.reader(io.StringIO((tmp_path / "gradebook_canvas.csv").read_text("utf-8-sig"))))
    assert rows[0][:5] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]
    assert rows[1][5] == str(len(lesson.questions))
    assert [(r[2], r[5]) for r in rows[2:]] == [("'=s001", "2"), ("s002", "0")]  # a formula is never run
    assert run(["export", "gradebook", "moodle", "--cohort", "slack:T1", "--out", "m.csv"]) == 0
    rows = list(csv.reader(io.StringIO((tmp_path / "m.csv").read_text("utf-8-sig"))))
    assert rows[0][:2] == ["ID number", "Full name"] and [r[2] for r in rows[1:]] == ["2", "0"]
    assert sqlite3.connect(settings.db_path).execute("SELECT COUNT(*) FROM learners").fetchone()[0] == 3


def test_a_term_another_pack_has_is_named_by_its_card(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("STUDYBOT_CONTENT", "content")
    first = tmp_path / "first.tsv"
    first.write_text("osmosis\twater crossing a membrane\n")
    second = tmp_path / "second.tsv"
    second.write_text("mitosis\tone cell dividing in two\nosmosis\twater moving through a membrane\n")
    assert run(["import", str(first), "--pack", "content/one"]) == 0
    capsys.readouterr()
    assert run(["import", str(second), "--pack", "content/two"]) == 1
    out = capsys.readouterr().out
    assert f"does not validate: {second}: line 2: glossary.yaml terms[1].term: duplicate term 'osmosis' " \
           "(lesson one has it)" in out
    assert "1 problem(s) to fix" in out
