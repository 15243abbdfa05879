"""A lesson's glossary and quiz as an Anki package, written with genanki: a deck per lesson, a note
per term and per question, in note types of studybot's own (so that `studybot import` reads them
back as the questions they were). A short answer's card asks to type the model answer."""

from __future__ import annotations

import hashlib
import tempfile
from pathlib import Path

import genanki

from bot.content.model import Lesson
from bot.interchange.markup import to_html
from bot.interchange.readers.anki import LETTERS, MODEL_MC, MODEL_ORDER, MODEL_SHORT, MODEL_TERM
from bot.questions.base import Question
from bot.questions.mc import MultipleChoice
from bot.questions.order import Ordering
from bot.questions.short import ShortAnswer

CSS = ".card { font-family: sans-serif; font-size: 18px; text-align: left; }"


def _id(name: str) -> int:
    """A stable id for a deck or note type (Anki wants them fixed across exports)."""
    return int(hashlib.sha256(name.encode()).hexdigest()[:12], 16)


def _model(name: str, fields: list[str], front: str, back: str) -> genanki.Model:
    return genanki.Model(_id(name), name, fields=[{"name": f} for f in fields],
                         templates=[{"name": "Card 1", "qfmt": front, "afmt": back}], css=CSS)


MODELS = {
    MODEL_TERM: _model(MODEL_TERM, ["Term", "Definition"], "{{Term}}", "{{FrontSide}}<hr id=answer>{{Definition}}"),
    MODEL_MC: _model(MODEL_MC, ["Prompt", "Choices", "Answer", "Feedback", "Explanation"],
                     "{{Prompt}}<br><br>{{Choices}}",
                     "{{FrontSide}}<hr id=answer>{{Answer}}<br><br>{{Feedback}}<br><br>{{Explanation}}"),
    MODEL_SHORT: _model(MODEL_SHORT, ["Prompt", "Answer", "Accepted", "Explanation"], "{{Prompt}}<br>{{type:Answer}}",
                        "{{FrontSide}}<hr id=answer>{{type:Answer}}<br><br>{{Explanation}}"),
    MODEL_ORDER: _model(MODEL_ORDER, ["Prompt", "Steps", "Explanation"], "{{Prompt}}",
                        "{{FrontSide}}<hr id=answer>{{Steps}}<br><br>{{Explanation}}"),
}


def _lines(lines: list[str]) -> str:
    return "<br>".join(to_html(line) for line in lines)


def _fields(q: Question) -> tuple[str, list[str]] | None:
    if isinstance(q, MultipleChoice):
        return MODEL_MC, [to_html(q.prompt), _lines([f"{LETTERS[i]}. {c.text}" for i, c in enumerate(q.choices)]),
                          LETTERS[q.correct_index],
                          _lines([f"{LETTERS[i]}: {c.why_wrong}" for i, c in enumerate(q.choices) if not c.correct]),
                          to_html(q.explanation)]
    if isinstance(q, ShortAnswer):
        accepted = [a for a in dict.fromkeys(a for p in q.rubric.points for a in p.accept) if a != q.model_answer]
        return MODEL_SHORT, [to_html(q.prompt), to_html(q.model_answer), _lines(accepted), to_html(q.explanation)]
    if isinstance(q, Ordering):
        return MODEL_ORDER, [to_html(q.prompt), _lines(list(q.steps)), to_html(q.explanation)]
    return None


def deck(lesson: Lesson) -> genanki.Deck:
    out = genanki.Deck(_id(f"studybot deck {lesson.id}"), f"studybot::{lesson.title}")
    for term in lesson.terms:
        out.add_note(genanki.Note(MODELS[MODEL_TERM], [to_html(term.term), to_html(term.definition)],
                                  guid=genanki.guid_for(lesson.id, "term", term.term), tags=[lesson.id]))
    for q in lesson.questions:
        if (made := _fields(q)) is not None:
            model, fields = made
            out.add_note(genanki.Note(MODELS[model], fields, guid=genanki.guid_for(lesson.id, q.id),
                                      tags=[lesson.id]))
    return out


def write(lesson: Lesson) -> tuple[bytes, list[str]]:
    with tempfile.TemporaryDirectory(prefix="studybot-apkg-") as folder:
        target = Path(folder) / "deck.apkg"
        genanki.Package(deck(lesson)).write_to_file(str(target))
        return target.read_bytes(), []
