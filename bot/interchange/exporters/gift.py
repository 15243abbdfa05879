"""A lesson's quiz as GIFT, for Moodle and the LMSs that read it. Texts are written `[markdown]`, as
the pack holds them; a short answer lists its model answer and every accepted phrasing as right
answers (GIFT has no key points); put-in-order questions have no GIFT form and are left out."""

from __future__ import annotations

from bot.content.model import Lesson
from bot.questions.base import Question
from bot.questions.mc import MultipleChoice
from bot.questions.short import ShortAnswer

SPECIAL = "\\~=#{}:"


def escape(text: str) -> str:
    out = "".join(f"\\{ch}" if ch in SPECIAL else ch for ch in text)
    return out.replace("\n", "\\n")


def question(q: Question) -> str | None:
    head = f"::{escape(q.id)}::[markdown]{escape(q.prompt)} {{"
    general = f"\n\t####{escape(q.explanation)}" if q.explanation else ""
    if isinstance(q, MultipleChoice):
        lines = [f"\t={escape(c.text)}" if c.correct else f"\t~{escape(c.text)}#{escape(c.why_wrong)}"
                 for c in q.choices]
    elif isinstance(q, ShortAnswer):
        accepted = dict.fromkeys([q.model_answer, *(a for p in q.rubric.points for a in p.accept)])
        lines = [f"\t={escape(a)}" for a in accepted]
    else:
        return None
    return head + "\n" + "\n".join(lines) + general + "\n}\n"


def write(lesson: Lesson) -> tuple[bytes, list[str]]:
    """The GIFT text, and the ids of the questions GIFT cannot hold."""
    blocks, left_out = [f"// {lesson.title} ({lesson.id}), exported by studybot\n$CATEGORY: {lesson.id}\n"], []
    for q in lesson.questions:
        block = question(q)
        if block is None:
            left_out.append(q.id)
        else:
            blocks.append(block)
    return "\n".join(blocks).encode("utf-8"), left_out
