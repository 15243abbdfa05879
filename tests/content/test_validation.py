"""Every bundled pack validates; each kind of bad YAML gives its exact message and line."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
from support import CONTENT, CORE_PACK, REPO

from bot.content.loader import check_library, load_library
from bot.content.render import render_quiz
from bot.core.config import Settings
from bot.core.errors import ConfigError

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


SHORT = """\
  - id: q2
    type: short
    goal: g1
    prompt: "Say why"
    model_answer: "Because it shards."
    rubric:
      needed: 1
      points:
        - id: p1
          point: "It shards"
          accept: ["it shards"]
          misconceptions: ["it copies"]
    explanation: "Why"
    sources: [P1]
"""
PROMPTS = """\
prompts:
  - id: tb1
    goal: g1
    prompt: "Explain it"
    key_points:
      - id: k1
        point: "It shards"
        accept: ["it shards"]
"""
TERMS = 'terms:\n  - term: "A"\n    definition: "d"\n    aliases: ["AA"]\n'
NOTES = "# Reading log\n\n## P1 — A source\n- what it says\n"


@pytest.fixture(autouse=True)
def beside_the_packs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Run where the packs are made, so problems name them from here: content/l1/quiz.yaml."""
    monkeypatch.chdir(tmp_path)


def pack(tmp_path: Path, notes: str | None = NOTES, **files: str) -> Path:
    folder = tmp_path / "content" / "l1"
    folder.mkdir(parents=True)
    for name, text in {"lesson": LESSON, "quiz": QUIZ, **files}.items():
        (folder / (name if "." in name else f"{name}.yaml")).write_text(text)
    if notes is not None:
        (folder / "notes.md").write_text(notes)
    report = check_library(tmp_path / "content")
    if "quiz.md" not in files and not report.problems:  # rendered, as `studybot render` would
        for lesson in report.library.lessons.values():
            (lesson.path / "quiz.md").write_text(render_quiz(lesson), encoding="utf-8")
    return tmp_path / "content"


def problems(root: Path) -> list[str]:
    return [str(p) for p in check_library(root).problems]


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
    assert problems(pack(tmp_path, quiz=quiz)) == [
        "content/l1/quiz.yaml:2: questions[0]: missing required field 'prompt'"]


def test_wrong_type(tmp_path: Path) -> None:
    quiz = QUIZ.replace("    sources: [P1]", "    sources: P1")
    assert problems(pack(tmp_path, quiz=quiz)) == [
        "content/l1/quiz.yaml:12: questions[0].sources: expected a list of text, got str"
    ]


def test_a_flag_that_is_not_true_or_false_says_what_it_found(tmp_path: Path) -> None:
    """The packs and the config are read by one validator: the same check, the same words."""
    quiz = QUIZ.replace("        correct: true", '        correct: "maybe"')
    assert "content/l1/quiz.yaml:8: questions[0].choices[0].correct: must be true or false, not 'maybe'" in problems(
        pack(tmp_path, quiz=quiz))
    with pytest.raises(ConfigError, match=r"^STUDYBOT_CONFIG: instructors.console: must be true or false, not 'maybe'"):
        Settings().with_config({"instructors": {"console": "maybe"}})


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
        "content/l1/quiz.yaml:3: questions[0].type: must be one of mc, short, order, not 'essay'",
        "content/l1/quiz.yaml:2: questions[0]: missing required field 'explanation'",
    ]


def test_related_terms_must_exist(tmp_path: Path) -> None:
    glossary = 'terms:\n  - term: "A"\n    definition: "d"\n    related: ["Nope"]\n'
    assert problems(pack(tmp_path, glossary=glossary)) == [
        "content/l1/glossary.yaml:4: terms[0].related[0]: 'Nope' is not a term of the library"
    ]


def test_validate_command_exit_codes(tmp_path: Path) -> None:
    good = subprocess.run([sys.executable, "-m", "adapters.cli", "validate", str(CORE_PACK)], cwd=REPO,
                          capture_output=True, text=True)
    assert good.returncode == 0 and good.stdout.startswith("OK: ")
    bad_root = pack(tmp_path, quiz=QUIZ.replace("    type: mc", "    type: yes"))
    bad = subprocess.run([sys.executable, "-m", "adapters.cli", "validate", str(bad_root)], cwd=REPO,
                         capture_output=True, text=True)
    assert bad.returncode == 1
    assert "content/l1/quiz.yaml:3: questions[0].type: expected text, got a boolean" in bad.stdout


# ---------------------------------------------------------------- unknown keys, with a did-you-mean


@pytest.mark.parametrize("files, expected", [
    ({"lesson": LESSON + 'sumary: "x"\n'},
     "content/l1/lesson.yaml:7: sumary: unknown key 'sumary' (did you mean 'summary'?)"),
    ({"quiz": QUIZ.replace('    explanation: "Why"', '    explanation: "Why"\n    explaination: "x"')},
     "content/l1/quiz.yaml:12: questions[0].explaination: unknown key 'explaination' (did you mean 'explanation'?)"),
    ({"quiz": QUIZ + SHORT.replace("      needed: 1", "      need: 1")},
     "content/l1/quiz.yaml:19: questions[1].rubric.need: unknown key 'need' (did you mean 'needed'?)"),
    ({"quiz": QUIZ + SHORT.replace("          misconceptions:", "          misconception:")},
     "content/l1/quiz.yaml:24: questions[1].rubric.points[0].misconception: unknown key 'misconception' "
     "(did you mean 'misconceptions'?)"),
    ({"glossary": TERMS.replace("aliases", "alias")},
     "content/l1/glossary.yaml:4: terms[0].alias: unknown key 'alias' (did you mean 'aliases'?)"),
    ({"teachback": PROMPTS.replace("    goal: g1", "    goals: g1")},
     "content/l1/teachback.yaml:3: prompts[0].goals: unknown key 'goals' (did you mean 'goal'?)"),
], ids=["top level", "question", "rubric", "key point", "glossary term", "teach-back"])
def test_an_unknown_key_is_named_with_the_closest_known_one(tmp_path: Path, files: dict, expected: str) -> None:
    assert problems(pack(tmp_path, **files)) == [expected]


def test_the_same_packs_without_the_misspellings_are_clean(tmp_path: Path) -> None:
    """Guards the cases above: each fails only for its misspelt key."""
    assert problems(pack(tmp_path, quiz=QUIZ + SHORT, glossary=TERMS, teachback=PROMPTS)) == []


# ---------------------------------------------------------------- what used to pass silently


def test_pack_files_without_lesson_yaml_are_reported(tmp_path: Path) -> None:
    root = pack(tmp_path)
    (root / "l1" / "lesson.yaml").rename(root / "l1" / "lessons.yaml")
    assert problems(root) == [
        "content/l1:1: folder: has lessons.yaml, quiz.yaml but no lesson.yaml (lessons.yaml: did you mean "
        "'lesson.yaml'?); every pack needs one (see content/README.md)"
    ]


def test_a_misspelt_pack_file_is_reported(tmp_path: Path) -> None:
    assert problems(pack(tmp_path, **{"glosary.yaml": TERMS})) == [
        "content/l1/glosary.yaml:1: file: not a lesson-pack file (did you mean 'glossary.yaml'?); "
        "a pack holds lesson.yaml, quiz.yaml, glossary.yaml, teachback.yaml, practice.yaml"
    ]


def test_an_empty_quiz_is_reported(tmp_path: Path) -> None:
    assert problems(pack(tmp_path, quiz="")) == [
        "content/l1/quiz.yaml:1: file: the file is empty; write its fields (see content/README.md) or delete it"
    ]


def test_a_source_not_in_the_notes_is_reported(tmp_path: Path) -> None:
    quiz = QUIZ.replace("    sources: [P1]", "    sources: [P1, P9]")
    assert problems(pack(tmp_path, quiz=quiz)) == [
        "content/l1/quiz.yaml:12: questions[0].sources[1]: 'P9' is not a source heading (## P9 — …) of notes.md"
    ]
    assert problems(pack(tmp_path / "without", notes=None)) == [
        "without/content/l1/quiz.yaml:12: questions[0].sources[0]: cites 'P1', but the pack has no notes.md to list it"
    ]


def test_a_missing_quiz_md_is_a_warning_that_says_to_render(tmp_path: Path) -> None:
    root = pack(tmp_path)
    (root / "l1" / "quiz.md").unlink()
    report = check_library(root)
    assert report.problems == []
    assert [str(w) for w in report.warnings] == [
        "content/l1/quiz.md: file: warning: missing; run `studybot render` to write it (the questions and answer key)"]
    checked = subprocess.run([sys.executable, "-m", "adapters.cli", "validate", "content"], cwd=tmp_path,
                             capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(REPO)})
    [warned, summary] = checked.stdout.splitlines()
    assert checked.returncode == 0 and warned == str(report.warnings[0]) and summary.endswith("; 1 warning(s).")
    (root / "l1" / "quiz.yaml").unlink()  # a lesson with no questions has no answer key to render
    assert check_library(root).warnings == []


def test_a_stale_quiz_md_is_a_warning_that_says_to_render(tmp_path: Path) -> None:
    root = pack(tmp_path, **{"quiz.md": "an old rendering\n"})
    report = check_library(root)
    assert report.problems == []
    assert [str(w) for w in report.warnings] == [
        "content/l1/quiz.md:1: file: warning: quiz.md does not match quiz.yaml; run `studybot render` to update it"
    ]
    done = subprocess.run([sys.executable, "-m", "adapters.cli", "render", str(root)], cwd=REPO,
                          capture_output=True, text=True)
    assert done.returncode == 0 and check_library(root).warnings == []


# ---------------------------------------------------------------- rubrics that test themselves

EXAMPLES = """\
    examples:
      correct: ["It copies the model to each GPU."]
      wrong: ["Well, it shards, I think."]
"""


def warnings(root: Path) -> list[str]:
    return [str(w) for w in check_library(root).warnings]


def test_examples_graded_otherwise_than_listed_are_problems_with_their_line(tmp_path: Path) -> None:
    quiz = QUIZ + SHORT.replace('    explanation: "Why"\n', '    explanation: "Why"\n' + EXAMPLES, 1)
    assert problems(pack(tmp_path, quiz=quiz)) == [
        'content/l1/quiz.yaml:27: questions[1].examples.correct[0]: graded wrong but listed as correct: '
        '"It copies the model to each GPU." (matched: none; missed: p1; voided: p1)',
        'content/l1/quiz.yaml:28: questions[1].examples.wrong[0]: graded correct but listed as wrong: '
        '"Well, it shards, I think." (matched: p1)',
    ]


def test_a_teachback_prompt_checks_its_examples_too(tmp_path: Path) -> None:
    prompts = PROMPTS + '    examples:\n      correct: ["It copies."]\n'
    assert problems(pack(tmp_path, teachback=prompts)) == [
        'content/l1/teachback.yaml:10: prompts[0].examples.correct[0]: graded wrong but listed as correct: '
        '"It copies." (matched: none; missed: k1)'
    ]


def test_examples_that_agree_with_the_rubric_pass(tmp_path: Path) -> None:
    good = EXAMPLES.replace("It copies the model to each GPU.", "Each GPU only holds a slice: it shards.")
    good = good.replace("Well, it shards, I think.", "It copies the model.")
    quiz = QUIZ + SHORT.replace('    explanation: "Why"\n', '    explanation: "Why"\n' + good, 1)
    assert problems(pack(tmp_path, quiz=quiz)) == [] and warnings(tmp_path / "content") == []


@pytest.mark.parametrize("change, expected", [
    (('    prompt: "Say why"', '    prompt: "Why do we say it shards?"'),
     "content/l1/quiz.yaml:16: questions[1].prompt: warning: the question's own prompt is graded correct "
     "(matched: p1)"),
    (('    prompt: "Say why"', '    prompt: "Say why a model shards"'),
     None),  # a prompt word that is an accepted word is no typo of it
    (('          accept: ["it shards"]', '          accept: ["it shards", "splits the modle weights"]'),
     'content/l1/quiz.yaml:23: questions[1].rubric.points[0].accept[1]: warning: accepted word "modle" is '
     'one typo away from "model" in the prompt'),
], ids=["prompt", "no warning", "typo of the prompt"])
def test_a_rubric_that_leaks_is_warned_about_with_its_line(tmp_path: Path, change, expected) -> None:
    short = SHORT.replace(*change)
    if "modle" in short:
        short = short.replace('    prompt: "Say why"', '    prompt: "Say why a model grows"')
    root = pack(tmp_path, quiz=QUIZ + short)
    assert problems(root) == []
    assert warnings(root) == ([expected] if expected else [])


def test_a_rubric_that_a_bare_list_passes_is_a_problem_with_its_line(tmp_path: Path) -> None:
    # a warning before issue 26; keyword lists never pass, so it is a problem now
    root = pack(tmp_path, quiz=QUIZ + SHORT.replace('          accept: ["it shards"]', '          accept: ["shards"]'))
    assert problems(root) == [
        'content/l1/quiz.yaml:18: questions[1].rubric: a bare list of the accepted words is graded correct: "shards" '
        "(matched: p1); give those key points phrasings that relate two words or more"]


def test_an_empty_answer_graded_correct_is_warned_about(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No rubric of today's matcher credits an empty answer; should a matcher ever do so, validate says."""
    import bot.grading.selfcheck as audit
    from bot.grading.matching import Grade
    from bot.grading.matching import grade as real_grade

    def lenient(rubric, text, *, synonyms=None, prompt=""):
        found = real_grade(rubric, text, synonyms=synonyms, prompt=prompt)
        return found if text else Grade((rubric.points[0].id,), (), (), True)  # credits an empty answer

    monkeypatch.setattr(audit, "grade", lenient)
    root = pack(tmp_path, quiz=QUIZ + SHORT)
    assert "content/l1/quiz.yaml:18: questions[1].rubric: warning: an empty answer is graded correct (matched: p1)" \
        in warnings(root)


TAGGED = """\
    examples:
      correct:
        - "It shards, plainly."
        - kind: paraphrase
          answer: "Well, it shards."
      wrong:
        - kind: shorthand
          answer: "It copies."
"""


def test_a_tagged_example_is_graded_like_any_other(tmp_path: Path) -> None:
    quiz = QUIZ + SHORT.replace('    explanation: "Why"\n', '    explanation: "Why"\n' + TAGGED, 1)
    root = pack(tmp_path, quiz=quiz)
    assert problems(root) == []
    assert load_library(root).questions["q2"].examples.correct == ("It shards, plainly.", "Well, it shards.")
    wrong = TAGGED.replace('answer: "It copies."', 'answer: "It shards."')
    assert problems(pack(tmp_path / "again", quiz=QUIZ + SHORT.replace(
        '    explanation: "Why"\n', '    explanation: "Why"\n' + wrong, 1))) == [
        'again/content/l1/quiz.yaml:32: questions[1].examples.wrong[0]: graded correct but listed as wrong: '
        '"It shards." (matched: p1)']


@pytest.mark.parametrize(("change", "expected"), [
    (("kind: paraphrase", "kind: synonym"),
     "content/l1/quiz.yaml:29: questions[1].examples.correct[1].kind: must be one of shorthand, paraphrase, "
     "not 'synonym'"),
    (('answer: "Well, it shards."', 'text: "Well, it shards."'),
     "content/l1/quiz.yaml:30: questions[1].examples.correct[1].text: unknown key 'text'"),
], ids=["unknown kind", "misspelt answer"])
def test_a_tagged_example_names_what_is_wrong_with_it(tmp_path: Path, change, expected) -> None:
    quiz = QUIZ + SHORT.replace('    explanation: "Why"\n', '    explanation: "Why"\n' + TAGGED.replace(*change), 1)
    assert expected in problems(pack(tmp_path, quiz=quiz))


def test_a_teachback_says_why_it_needs_that_many_in_one_line(tmp_path: Path) -> None:
    reason = '    needed: 1\n    needed_because: "One idea is the whole point."\n'
    prompts = PROMPTS.replace("    key_points:\n", reason + "    key_points:\n")
    root = pack(tmp_path, teachback=prompts)
    assert problems(root) == []
    assert load_library(root).prompts["tb1"].needed_because == "One idea is the whole point."
    two_lines = prompts.replace('"One idea is the whole point."', '"One idea\\nis the whole point."')
    assert problems(pack(tmp_path / "lines", teachback=two_lines)) == [
        "lines/content/l1/teachback.yaml:6: prompts[0].needed_because: must be one line: say in a sentence why that "
        "many key points are needed"]
    unset = prompts.replace("    needed: 1\n", "")
    assert problems(pack(tmp_path / "unset", teachback=unset)) == [
        "unset/content/l1/teachback.yaml:5: prompts[0].needed_because: explains `needed`, which is not set; set it or "
        "drop the reason"]


def test_a_teachback_that_needs_all_its_points_is_partly_right_with_all_but_half_of_one(tmp_path: Path) -> None:
    """A teach-back takes the short answers' half-point rule: "needs all" means all for the point, and all but half of
    one (said in that point's own words) is partly right, never "not yet"."""
    from bot.grading.matching import grade
    from bot.grading.verdict import Verdict

    second = '      - id: k2\n        point: "It gathers the weights"\n        accept: ["gathers the weights"]\n'
    prompts = PROMPTS.replace("    key_points:\n", "    needed: 2\n    key_points:\n") + second
    rubric = load_library(pack(tmp_path, teachback=prompts)).prompts["tb1"].rubric
    assert rubric.needed == 2 and rubric.half_point
    assert grade(rubric, "It shards, then gathers what each layer needs.").verdict is Verdict.PARTLY
    assert grade(rubric, "It shards, then gathers the weights.").verdict is Verdict.CORRECT


def test_an_example_listed_as_partly_right_must_grade_partly_right(tmp_path: Path) -> None:
    second = '      - id: k2\n        point: "It gathers the weights"\n        accept: ["gathers the weights"]\n'
    examples = ('    examples:\n      partly: ["It shards, then gathers what each layer needs.", '
                '"It shards, then gathers the weights."]\n')
    prompts = PROMPTS.replace("    key_points:\n", "    needed: 2\n    key_points:\n") + second + examples
    assert problems(pack(tmp_path, teachback=prompts)) == [
        'content/l1/teachback.yaml:14: prompts[0].examples.partly[1]: graded correct but listed as partly right: '
        '"It shards, then gathers the weights." (matched: k1, k2; missed: none)']
