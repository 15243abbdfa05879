"""Every bundled pack validates; each kind of bad YAML gives its exact message and line."""

import subprocess
import sys
from pathlib import Path

import pytest

from bot.content import check_library, load_library
from support import CONTENT, REPO

LESSON = """\
id: l1
title: "Lesson one"
summary: "A summary"
goals:
  - id: g1
    text: "Goal one"
"""
QUIZ = """\
questions:
  - id: q1
    type: mc
    goal: g1
    prompt: "Pick one"
    choices:
      - text: "Right"
        correct: true
      - text: "Wrong"
        why_wrong: "Because"
    explanation: "Why"
    sources: [P1]
"""


def pack(tmp_path: Path, **files: str) -> Path:
    folder = tmp_path / "content" / "l1"
    folder.mkdir(parents=True)
    for name, text in {"lesson": LESSON, "quiz": QUIZ, **files}.items():
        (folder / f"{name}.yaml").write_text(text)
    return tmp_path / "content"


def problems(root: Path) -> list[str]:
    return [str(p) for p in check_library(root)[1]]


def test_the_bundled_library_validates() -> None:
    library = load_library(CONTENT)
    assert library.lessons and library.questions and library.terms


def test_a_good_pack_has_no_problems(tmp_path: Path) -> None:
    assert problems(pack(tmp_path)) == []


def test_duplicate_id(tmp_path: Path) -> None:
    quiz = QUIZ + QUIZ.split("\n", 1)[1]  # the same question twice
    assert problems(pack(tmp_path, quiz=quiz)) == [
        "content/l1/quiz.yaml:13: questions[1].id: duplicate question 'q1' (first at content/l1/quiz.yaml:2)"
    ]


def test_missing_field(tmp_path: Path) -> None:
    quiz = QUIZ.replace('    prompt: "Pick one"\n', "")
    assert problems(pack(tmp_path, quiz=quiz)) == ["content/l1/quiz.yaml:2: questions[0]: missing required field 'prompt'"]


def test_wrong_type(tmp_path: Path) -> None:
    quiz = QUIZ.replace("    sources: [P1]", "    sources: P1")
    assert problems(pack(tmp_path, quiz=quiz)) == [
        "content/l1/quiz.yaml:12: questions[0].sources: expected a list of text, got str"
    ]


@pytest.mark.parametrize("value, shown", [("yes", "a boolean"), ("1.0", "a number (1.0)")])
def test_boolean_or_number_where_text_belongs(tmp_path: Path, value: str, shown: str) -> None:
    quiz = QUIZ.replace('      - text: "Wrong"', f"      - text: {value}")
    assert problems(pack(tmp_path, quiz=quiz)) == [
        f"content/l1/quiz.yaml:9: questions[0].choices[1].text: expected text, got {shown}; put the text in quotes"
    ]


def test_broken_yaml(tmp_path: Path) -> None:
    quiz = QUIZ.replace('    prompt: "Pick one"', '    prompt: "Pick one\n    oops: [')
    [message] = problems(pack(tmp_path, quiz=quiz))
    assert message.startswith("content/l1/quiz.yaml:") and ": yaml: not valid YAML:" in message


def test_every_problem_is_reported_at_once(tmp_path: Path) -> None:
    lesson = LESSON.replace('title: "Lesson one"', "title: no")
    quiz = QUIZ.replace("    type: mc", "    type: essay").replace('    explanation: "Why"\n', "")
    found = problems(pack(tmp_path, lesson=lesson, quiz=quiz))
    assert found == [
        "content/l1/lesson.yaml:2: title: expected text, got a boolean; put the text in quotes",
        "content/l1/quiz.yaml:3: questions[0].type: must be one of mc, short, not 'essay'",
        "content/l1/quiz.yaml:2: questions[0]: missing required field 'explanation'",
    ]


def test_related_terms_must_exist(tmp_path: Path) -> None:
    glossary = 'terms:\n  - term: "A"\n    definition: "d"\n    related: ["Nope"]\n'
    assert problems(pack(tmp_path, glossary=glossary)) == [
        "content/l1/glossary.yaml:4: terms[0].related[0]: 'Nope' is not a term of the library"
    ]


def test_validate_command_exit_codes(tmp_path: Path) -> None:
    good = subprocess.run([sys.executable, "-m", "bot.cli", "validate", str(CONTENT)], cwd=REPO,
                          capture_output=True, text=True)
    assert good.returncode == 0 and good.stdout.startswith("OK: ")
    bad_root = pack(tmp_path, quiz=QUIZ.replace("    type: mc", "    type: yes"))
    bad = subprocess.run([sys.executable, "-m", "bot.cli", "validate", str(bad_root)], cwd=REPO,
                         capture_output=True, text=True)
    assert bad.returncode == 1
    assert "content/l1/quiz.yaml:3: questions[0].type: expected text, got a boolean" in bad.stdout
