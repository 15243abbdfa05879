"""Moodle XML, Moodle's full question-bank format (https://docs.moodle.org/en/Moodle_XML_format),
read with defusedxml (no maintained Python reader exists; the format is plain XML)."""

from __future__ import annotations

from typing import Any

from bot.interchange.markup import to_markdown
from bot.interchange.model import Choice, Found, ImportRefused, Item
from bot.interchange.safety import parse_xml

SKIPPED = {
    "essay": "an essay: studybot grades typed answers by a rubric of key points; write one by hand",
    "numerical": "a numerical question (numbers with tolerances): studybot has no numerical type",
    "calculated": "a calculated question: studybot has no numerical type",
    "calculatedsimple": "a calculated question: studybot has no numerical type",
    "calculatedmulti": "a calculated question: studybot has no numerical type",
    "cloze": "a cloze (embedded answers): studybot asks one question at a time",
    "multianswer": "a cloze (embedded answers): studybot asks one question at a time",
    "matching": "a matching question: studybot has no matching type",
    "match": "a matching question: studybot has no matching type",
    "randomsamatch": "a random matching question: studybot has no matching type",
    "description": "a description (no answers): nothing to ask",
    "ddwtos": "a drag-and-drop question: studybot has no such type",
    "ddimageortext": "a drag-and-drop question: studybot has no such type",
    "ddmarker": "a drag-and-drop question: studybot has no such type",
    "gapselect": "a select-missing-words question: studybot asks one question at a time",
}


def _text(element: Any, media: list[str]) -> str:
    """The Markdown of an element's <text> child (or its own text), with its media named."""
    if element is None:
        return ""
    node = element.find("text")
    raw = (node.text if node is not None else element.text) or ""
    fmt = element.get("format", "html")
    for file in element.findall("file"):
        if file.get("name"):
            media.append(file.get("name"))
    raw = raw.replace("@@PLUGINFILE@@/", "")
    if fmt in ("markdown", "plain_text"):
        return raw.strip()
    out, found = to_markdown(raw)
    media += found
    return out


def read(data: bytes, source: str) -> Found:
    found = Found()
    root = parse_xml(data, source)
    if root.tag != "quiz":
        raise ImportRefused(f"{source}: not Moodle XML (its root is <{root.tag[:40]}>, not <quiz>)")
    for number, question in enumerate(root.findall("question"), start=1):
        kind = question.get("type", "")
        if kind == "category":
            continue
        media: list[str] = []
        name = " ".join((question.findtext("name/text") or "").split())
        ref = f"'{name}' (question {number})" if name else f"question {number}"
        if (image := question.findtext("image")) and image.strip():
            media.append(image.strip())
        if kind in SKIPPED:
            found.skip(source, ref, SKIPPED[kind])
        else:
            _question(question, kind, source, ref, name, media, found)
        found.media += [m for m in media if m not in found.media]
    return found


def _answers(question: Any, media: list[str]) -> list[tuple[float, str, str]]:
    out = []
    for answer in question.findall("answer"):
        try:
            fraction = float(answer.get("fraction", "0"))
        except ValueError:
            fraction = 0.0
        out.append((fraction, _text(answer, media), _text(answer.find("feedback"), media)))
    return out


def _question(question: Any, kind: str, source: str, ref: str, name: str, media: list[str], found: Found) -> None:
    prompt = _text(question.find("questiontext"), media)
    explanation = _text(question.find("generalfeedback"), media)
    answers = _answers(question, media)
    if not prompt:
        found.skip(source, ref, "its question text is empty (an image or sound only)")
    elif kind in ("multichoice", "truefalse"):
        right = [a for a in answers if a[0] >= 100]
        if len(right) != 1:
            found.skip(source, ref, f"a multiple-response question ({len([a for a in answers if a[0] > 0])} answers "
                                    "earn credit): studybot's multiple choice has exactly one right answer")
            return
        if kind == "truefalse":  # Moodle writes the answers as "true" and "false"
            answers = [(f, t.capitalize() if t.lower() in ("true", "false") else t, fb) for f, t, fb in answers]
        choices = tuple(Choice(text, fraction >= 100, feedback) for fraction, text, feedback in answers)
        found.items.append(Item("mc", source, ref, prompt, choices, explanation=explanation, title=name))
    elif kind == "shortanswer":
        accepted = tuple(text for fraction, text, _ in answers if fraction >= 100 and text.strip("*"))
        if not accepted:
            found.skip(source, ref, "a short answer without a fully right answer")
            return
        found.items.append(Item("short", source, ref, prompt, answers=accepted, explanation=explanation, title=name))
    elif kind == "ordering":
        steps = tuple(text for _, text, _ in answers)
        found.items.append(Item("order", source, ref, prompt, answers=steps, explanation=explanation, title=name))
    else:
        found.skip(source, ref, f"a '{kind[:30]}' question: studybot has no such type")
