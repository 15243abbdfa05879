"""Helpers shared by the tests (importable as `support`)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from bot.content.loader import load_library
from bot.content.render import render_quiz
from bot.core.messages import Actor, Choice, ChoiceMade, MessageRef, Place, Reply, TextSubmitted
from bot.store.model import QUESTION, AnswerMode

REPO = Path(__file__).resolve().parents[1]
CONTENT = REPO / "content"  # the bundled lesson packs
CORE_PACK = REPO / "tests" / "packs" / "core"  # the core tests' own small pack


def with_cohort(settings: Any, cohort: str = "T1", **section: Any) -> Any:
    """The settings with one Slack cohort configured as STUDYBOT_CONFIG says it
    (`cohorts.<id>: {platform: slack, ...section}`)."""
    return settings.with_config({"cohorts": {cohort: {"platform": "slack", **section}}})


def dont_know(reply: Reply) -> Choice:
    """The "I don't know" button of a question, wherever it is shown."""
    return next(c for c in reply.choices if c.label == "I don't know")


def learner(user: str = "U1", *, cohort: str = "T1", platform: str = "slack", teacher: bool = False) -> Actor:
    return Actor(platform, cohort, user, f"name-{user}", teacher)


def channel(cohort: str = "T1", channel_id: str | None = "C1", platform: str = "slack") -> Place:
    return Place(platform, cohort, channel_id)


def choice_for(reply: Reply, index: int) -> Choice:
    """The button of a question's choice with pack index `index`, wherever it is shown."""
    return next(c for c in reply.choices if c.token.rsplit(".", 1)[1] == str(index))


def order_numbers(question: Any, text: str, right: bool = True) -> str:
    """The shown numbers of an order question's steps, in the right order (or a wrong one), read
    from the question as it was asked ("1. step" lines)."""
    shown = {line.split(". ", 1)[1]: line.split(". ", 1)[0] for line in text.splitlines()
             if line[:1].isdigit() and ". " in line}
    numbers = [shown[step] for step in question.steps]
    return " ".join(numbers if right else numbers[::-1])


def answer(question: Any, reply: Reply, who: Actor, place: Place, right: bool = True) -> ChoiceMade | TextSubmitted:
    """The event of a learner answering `question`, as asked in `reply`, right or wrong."""
    if question.kind == "mc":
        index = question.correct_index if right else (question.correct_index + 1) % len(question.choices)
        return ChoiceMade(choice_for(reply, index).token, who, place)
    assert reply.form is not None, "a text-answered question is asked with a form"
    if question.kind == "order":
        text = order_numbers(question, reply.form.prompt, right)
    else:
        text = question.model_answer if right else "I do not know."
    return TextSubmitted(reply.form.token, text, who, place)


async def record(bot: Any, who: Actor, question_id: str, *, correct: bool = True, lesson_id: str = "l") -> Any:
    """Record one practice answer straight through the store (a prompt, then the answer)."""
    prompt = await bot.store.prompts.new(QUESTION, channel(who.cohort, platform=who.platform), who,
                                         lesson_id=lesson_id, item_id=question_id, mode=AnswerMode.PRACTICE)
    return await bot.store.answers.record(prompt.id, who, lesson_id=lesson_id, question_id=question_id,
                                          mode=AnswerMode.PRACTICE, correct=correct,
                                          week=bot.ctx.week(who.in_cohort))


class RecordingOutbox:
    """An Outbox that records what the core asked the platform to do."""

    def __init__(self) -> None:
        self.sent: list[Reply] = []
        self.edits: list[tuple[MessageRef, Reply]] = []

    async def send(self, reply: Reply) -> MessageRef:
        self.sent.append(reply)
        return MessageRef("slack", reply.place.channel_id if reply.place else "D", f"m{len(self.sent)}")

    async def edit(self, ref: MessageRef, reply: Reply) -> None:
        self.edits.append((ref, reply))


HINTS = {  # the core pack's hints, as `hinted_pack` adds them (from each question's own key)
    "core-q1": ("It is split inside each layer, not across the batch.", "Think of the layer's matrix math."),
    "core-q2": ("What does each GPU hold only a shard of?", "What does gathering the shards cost?"),
}


def hinted_pack(tmp_path: Path) -> Path:
    """A copy of the core pack whose core-q1 (multiple choice) and core-q2 (short answer) have hints."""
    content = tmp_path / "hinted"
    shutil.copytree(CORE_PACK, content)
    quiz = content / "basics" / "quiz.yaml"
    text = quiz.read_text()
    for question_id, hints in HINTS.items():
        listed = ", ".join(f'"{hint}"' for hint in hints)
        text = text.replace(f"  - id: {question_id}\n", f"  - id: {question_id}\n    hints: [{listed}]\n")
    quiz.write_text(text)
    for lesson in load_library(content).lessons.values():
        (lesson.path / "quiz.md").write_text(render_quiz(lesson), encoding="utf-8")
    return content


HINTED = "SELECT a.correct, a.points, h.hints FROM answers a JOIN answer_hints h ON h.answer_id = a.id"  # hinted ones
