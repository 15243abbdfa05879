"""quiz.md is generated from quiz.yaml; a stale one fails here (run `studybot render`)."""

import pytest
from support import CONTENT, CORE_PACK

from bot.content.loader import load_library
from bot.content.render import render_quiz


@pytest.mark.parametrize("root", [CONTENT, CORE_PACK], ids=["bundled", "core tests"])
def test_every_quiz_md_is_fresh(root) -> None:
    for lesson in load_library(root).lessons.values():
        written = (lesson.path / "quiz.md").read_text(encoding="utf-8")
        assert written == render_quiz(lesson), f"{lesson.path / 'quiz.md'} is stale: run `studybot render`"


@pytest.mark.parametrize("root", [CONTENT, CORE_PACK], ids=["bundled", "core tests"])
def test_rendered_quiz_has_every_question_and_its_answer(root) -> None:
    for lesson in load_library(root).lessons.values():
        text = render_quiz(lesson)
        for q in lesson.questions:
            assert q.prompt in text and q.id in text
            if q.kind == "mc":
                assert q.choices[q.correct_index].text in text
            elif q.kind == "short":
                assert q.model_answer in text


def test_an_order_question_is_shown_shuffled_and_keyed_in_order() -> None:
    lesson = next(iter(load_library(CORE_PACK).lessons.values()))
    order = next(q for q in lesson.questions if q.kind == "order")
    text = render_quiz(lesson)
    questions, key = text.split("## Answer key")
    shown = [line.split(". ", 1)[1] for line in questions.split(order.prompt)[1].split("###")[0].splitlines()
             if line[:1].isdigit()]
    assert sorted(shown) == sorted(order.steps) and shown != list(order.steps)
    answer = " ".join(str(shown.index(step) + 1) for step in order.steps)
    assert f"**Answer: {answer}.**" in key
    assert "\n".join(f"- ({shown.index(step) + 1}) {step}" for step in order.steps) in key  # numbered as shown
