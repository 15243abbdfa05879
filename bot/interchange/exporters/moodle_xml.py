"""A lesson's quiz as Moodle XML: multiple choice (`multichoice`, one right answer, each wrong one with
its feedback), short answers (`shortanswer`, the model answer and every accepted phrasing at 100%) and
put-in-order (`ordering`, Moodle 4.4 and later). Texts are written `format="markdown"`."""

from __future__ import annotations

import xml.etree.ElementTree as ET  # writing only: nothing is parsed here

from bot.content.model import Lesson
from bot.questions.base import Question
from bot.questions.mc import MultipleChoice
from bot.questions.order import Ordering
from bot.questions.short import ShortAnswer


def _text(parent: ET.Element, tag: str, text: str, fmt: str | None = "markdown") -> ET.Element:
    element = ET.SubElement(parent, tag, {"format": fmt} if fmt else {})
    ET.SubElement(element, "text").text = text
    return element


def _answer(parent: ET.Element, fraction: str, text: str, feedback: str = "") -> None:
    answer = _text(parent, "answer", text)
    answer.set("fraction", fraction)
    _text(answer, "feedback", feedback)


def question(quiz: ET.Element, q: Question) -> None:
    kind = {MultipleChoice: "multichoice", ShortAnswer: "shortanswer", Ordering: "ordering"}[type(q)]
    element = ET.SubElement(quiz, "question", {"type": kind})
    _text(element, "name", q.id, None)
    _text(element, "questiontext", q.prompt)
    _text(element, "generalfeedback", q.explanation)
    ET.SubElement(element, "idnumber").text = q.id
    if isinstance(q, MultipleChoice):
        ET.SubElement(element, "single").text = "true"
        ET.SubElement(element, "shuffleanswers").text = "true"
        for c in q.choices:
            _answer(element, "100" if c.correct else "0", c.text, c.why_wrong)
    elif isinstance(q, ShortAnswer):
        ET.SubElement(element, "usecase").text = "0"
        for a in dict.fromkeys([q.model_answer, *(a for p in q.rubric.points for a in p.accept)]):
            _answer(element, "100", a)
    elif isinstance(q, Ordering):
        for step in q.steps:
            _answer(element, "0", step)


def write(lesson: Lesson) -> tuple[bytes, list[str]]:
    quiz = ET.Element("quiz")
    category = ET.SubElement(quiz, "question", {"type": "category"})
    _text(category, "category", f"$course$/{lesson.id}", None)
    for q in lesson.questions:
        question(quiz, q)
    ET.indent(quiz)
    return b'<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(quiz, encoding="utf-8") + b"\n", []
