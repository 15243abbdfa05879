"""A lesson pack in another language: `language:` in lesson.yaml, its rubrics read and its learners'
answers graded by that language's lemmas and function words, its examples graded as listed."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from support import REPO

from bot.content.loader import check_library
from bot.grading.matching import grade
from bot.grading.verdict import Verdict

SPANISH = REPO / "tests" / "packs" / "es"


def test_a_spanish_pack_loads_and_its_examples_grade_as_listed() -> None:
    report = check_library(SPANISH)  # the validator grades each listed example against its rubric
    assert [str(p) for p in report.problems] == []
    lesson = report.library.lessons["es-paralelismo"]
    assert lesson.language == "es" and lesson.prompts[0].rubric.language == "es"
    assert lesson.prompts[0].examples.correct and lesson.prompts[0].examples.wrong


def test_answers_are_read_in_the_packs_language() -> None:
    [question] = check_library(SPANISH).library.lessons["es-paralelismo"].questions
    rubric = question.rubric  # type: ignore[attr-defined]
    said = "Repartieron los parámetros en varias GPU a cambio de más comunicación."  # "repartir", inflected
    assert grade(rubric, said).verdict is Verdict.CORRECT
    assert grade(replace(rubric, language="en"), said).verdict is not Verdict.CORRECT  # English lemmas miss it
    assert grade(rubric, "Copia todo el modelo en cada GPU.").verdict is Verdict.NOT_YET


def test_a_pack_says_a_language_the_grader_reads(tmp_path: Path) -> None:
    pack = tmp_path / "p"
    pack.mkdir()
    text = (SPANISH / "paralelismo" / "lesson.yaml").read_text().replace("language: es", "language: fr")
    (pack / "lesson.yaml").write_text(text)
    problems = [str(p) for p in check_library(tmp_path).problems]
    assert any("lesson.yaml:" in p and "language: 'fr' is not a language studybot grades; write one of en, es, de"
               in p for p in problems), problems
