"""quiz.md is generated from quiz.yaml; a stale one fails here (run `studybot render`)."""

from support import CONTENT

from bot.content.loader import load_library
from bot.render import render_quiz


def test_every_quiz_md_is_fresh() -> None:
    for lesson in load_library(CONTENT).lessons.values():
        written = (lesson.path / "quiz.md").read_text(encoding="utf-8")
        assert written == render_quiz(lesson), f"{lesson.path / 'quiz.md'} is stale: run `studybot render`"


def test_rendered_quiz_has_every_question_and_its_answer() -> None:
    for lesson in load_library(CONTENT).lessons.values():
        text = render_quiz(lesson)
        for q in lesson.questions:
            assert q.prompt in text and q.id in text
            assert (q.choices[q.correct_index].text if q.kind == "mc" else q.model_answer) in text
