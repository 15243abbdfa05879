"""The grading benchmark's reading and scoring, on a few lines of synthetic data in the dataset's layout."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from support import REPO

if str(REPO) not in sys.path:  # the benchmarks package lives beside bot/, outside the installed packages
    sys.path.insert(0, str(REPO))

from benchmarks import bench_grading as bench  # noqa: E402

RUBRICS = """
synonyms:
  sat: saturday
"1.1":
  needed: 1
  points:
    - {id: yellow, point: "It is yellow", accept: ["yellow"]}
    - {id: sweet, point: "It is sweet", accept: ["sweet"], misconceptions: ["not sweet at all"]}
"1.2":
  needed: 1
  points:
    - {id: weekend, point: "Saturday or Sunday", accept: ["saturday", "sunday"]}
"""


def write_dataset(root: Path) -> Path:
    files = {
        "docs/files": "1.1\n1.2\n#1.3\n",
        "raw/questions": "1.1 What colour is a ripe banana?\n1.2 Name a day of the weekend.\n1.3 Put these in order.\n",
        "raw/answers": "1.1 Yellow, and sweet. \n1.2 Saturday or Sunday.\n1.3 a b c\n",
        "raw/1.1": "1.1 It is yellow.<br>\n1.1 Blue, I think.\n1.1 yellow &amp; sweet<br><BR>\n",
        "scores/1.1/ave": "5\n0\n4.5\n",
        "raw/1.2": "1.2 Sunday\n1.2 Monday, not sat\n",
        "scores/1.2/ave": "5.0\n1.0\n",
        "raw/1.3": "1.3 c b a\n",
        "scores/1.3/ave": "2\n",
    }
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    (root / "rubrics.yaml").write_text(RUBRICS)
    return root


def test_reading_keeps_short_answer_questions_and_cleans_each_answer(tmp_path: Path) -> None:
    questions = bench.load_dataset(write_dataset(tmp_path))
    assert [q.id for q in questions] == ["1.1", "1.2"]
    assert questions[0].prompt == "What colour is a ripe banana?" and questions[0].instructor == "Yellow, and sweet."
    assert questions[0].answers == (("It is yellow.", 5.0), ("Blue, I think.", 0.0), ("yellow & sweet", 4.5))
    rubrics, synonyms = bench.load_rubrics(tmp_path / "rubrics.yaml")
    assert set(rubrics) == {"1.1", "1.2"} and rubrics["1.1"].points[1].misconceptions == ("not sweet at all",)
    assert len(synonyms) == 1


def test_scoring_against_the_human_grades(tmp_path: Path) -> None:
    questions = bench.load_dataset(write_dataset(tmp_path))
    rubrics, synonyms = bench.load_rubrics(tmp_path / "rubrics.yaml")
    scored = bench.grade_all(questions, rubrics, synonyms)
    # the fraction is the grade's score: 0.6 x the best `needed` points + 0.4 x all points ("yellow" alone: 0.8)
    assert [(s.correct, s.fraction) for s in scored] == [(True, pytest.approx(0.8)), (False, 0.0), (True, 1.0),
                                                         (True, 1.0), (False, 0.0)]  # "not sat": negated
    f = bench.figures(scored)
    assert (f.n, f.accuracy, f.false_accepts, f.clearly_wrong, f.false_rejects, f.clearly_right) == (5, 1.0, 0, 2, 0, 3)
    assert f.r == pytest.approx(bench.pearson([0.8, 0, 1, 1, 0], [5, 0, 4.5, 5, 1]))
    wrong_way = bench.figures([bench.Scored("q", 5, False, 0), bench.Scored("q", 1, True, 1)])
    assert (wrong_way.accuracy, wrong_way.false_accept, wrong_way.false_reject) == (0, 1, 1)


def test_the_baseline_fits_its_threshold_on_the_data(tmp_path: Path) -> None:
    assert bench.cosine("It is yellow.", "Yellow!") == pytest.approx(3 ** -0.5)
    assert bench.cosine("", "yellow") == 0
    assert bench.fit_threshold([(0.9, 5), (0.6, 4), (0.5, 1), (0.1, 0)]) == 0.6
    assert bench.fit_threshold([(0.9, 1), (0.1, 2)]) == float("inf")  # everything wrong is best
    scored, threshold = bench.baseline(bench.load_dataset(write_dataset(tmp_path)))
    assert len(scored) == 5 and all(s.correct == (s.fraction >= threshold) for s in scored)


STRICT = """
"1.1":
  needed: 2
  points:
    - {id: yellow, point: "It is yellow", accept: ["yellow"]}
    - {id: sweet, point: "It is sweet", accept: ["sweet"]}
"1.2":
  needed: 1
  points:
    - {id: weekend, point: "Saturday or Sunday", accept: ["saturday"]}
"""


def two_sets(root: Path) -> dict[str, Path]:
    (root / "strict.yaml").write_text(STRICT)
    return {"first set": root / "rubrics.yaml", "strict set": root / "strict.yaml"}


def test_the_report_states_its_definitions_and_every_grader(tmp_path: Path) -> None:
    lines = bench.report(write_dataset(tmp_path), two_sets(tmp_path), detail=True)
    assert lines[0].startswith("grading vs human graders") and "5 answers to 2 questions" in lines[0]
    assert ">= 3" in lines[1] and ">= 4" in lines[1] and "<= 2.5" in lines[1] and "Pearson" in lines[2]
    assert "baseline word-overlap" in lines[4]
    assert "studybot, first set: accuracy 1.000, false-accept 0.0% (0/2), false-reject 0.0% (0/3)" in lines[5]
    strict = next(line for line in lines if "strict set" in line)
    assert "studybot, strict set: accuracy 0.600, false-accept 0.0% (0/2), false-reject 66.7% (2/3)" in strict
    assert sum(line.strip().startswith("1.1: n 3") for line in lines) == 2


async def test_without_the_data_it_says_why_it_skipped(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv(bench.ENV, raising=False)
    assert await bench.main() == [
        "grading vs human graders: skipped: STUDYBOT_UNT_DATA is not set"
        " (the folder of the UNT short-answer dataset, assignments 1-6)"]
    monkeypatch.setenv(bench.ENV, str(tmp_path / "missing"))
    (line,) = await bench.main()
    assert line.startswith("grading vs human graders: skipped:") and "missing" in line


def test_errors_are_counted_by_category(tmp_path: Path) -> None:
    rubric = bench.Rubric(2, (bench.KeyPoint("y", "yellow", ("yellow",), ("blue",)),
                              bench.KeyPoint("s", "sweet", ("sweet soft fruit",), ()),
                              bench.KeyPoint("c", "curved", ("curved",), ())))
    answers = (("yellow, blue", 5.0), ("yellow only", 4.0), ("it is not a sweet soft fruit", 4.5),
               ("a fruit so soft and sweet", 4.0), ("a tropical thing", 5.0), ("yellow and curved", 1.0),
               ("yellow", 3.0), ("it is curvd and yellow", 2.0), ("yelow and curvd", 2.0))
    question = bench.Question("1.1", "What is a banana like?", "Yellow, sweet and curved.", answers)
    assert bench.error_categories([question], {"1.1": rubric}, bench.Synonyms()) == {
        "false reject: voided by a misconception": 1,
        "false reject: fewer key points than needed": 1,
        "false reject: a phrasing stated only under a negation": 1,
        "false reject: a phrasing's words all in one clause, out of order or too far apart": 1,
        "false reject: said in words the rubric does not list": 1,
        "false accept: accepted phrasings said word for word, carried by one-word phrasings": 1,
        "false accept: needing the matcher's latitude (typos, inserted words, word order, half a point)": 2,
    }


def test_the_halves_and_the_categories_are_reported_on_request(tmp_path: Path) -> None:
    lines = bench.report(write_dataset(tmp_path), two_sets(tmp_path), halves=True, errors=True)
    assert sum(line.startswith("    assignments 1-3 (2 questions)") for line in lines) == 2
    assert sum(line.startswith("    assignments 4-6 (0 questions)") for line in lines) == 2
    assert lines.count("    errors by category, assignments 1-6:") == 2
    assert not any("assignments" in line for line in bench.report(write_dataset(tmp_path), two_sets(tmp_path)))


def test_each_single_grader_is_read_and_compared(tmp_path: Path) -> None:
    root = write_dataset(tmp_path)
    for qid, other, me in (("1.1", "5\n0\n4\n", "5\n1\n5\n"), ("1.2", "4\n2\n", "5\n0\n")):
        (root / "scores" / qid / "other").write_text(other)
        (root / "scores" / qid / "me").write_text(me)
    questions = bench.load_dataset(root)
    assert questions[0].graders == ((5.0, 5.0), (0.0, 1.0), (4.0, 5.0))
    rubrics, synonyms = bench.load_rubrics(root / "rubrics.yaml")
    scored = bench.grade_all(questions, rubrics, synonyms)
    assert [s.points for s in scored] == [1, 0, 1, 1, 0]  # what the product gives a first answer
    lines = bench._agreement_lines(scored)
    assert len(lines) == 2 and "studybot kappa 1.000" in lines[0]


def test_kappa_and_agreement_against_one_grader() -> None:
    assert bench.kappa([True, False, True, False], [True, False, True, False]) == 1
    assert bench.kappa([True, False], [False, True]) == -1
    assert bench.kappa([True, True, False, False], [True, False, True, False]) == 0  # chance agreement
    found = bench.agreement([True, True, False, False], [1.0, 5.0, 4.0, 0.0])
    assert (found.false_accepts, found.clearly_wrong, found.false_rejects, found.clearly_right) == (1, 2, 1, 2)


def test_partly_right_is_neither_an_accept_nor_a_reject_and_is_counted() -> None:
    scored = [bench.Scored("q", 5, False, 0.5, verdict="partly"), bench.Scored("q", 1, False, 0.5, verdict="partly"),
              bench.Scored("q", 4.5, False, 0, verdict="not_yet"), bench.Scored("q", 2, True, 1, verdict="correct")]
    f = bench.figures(scored)
    assert (f.false_accepts, f.clearly_wrong, f.false_rejects, f.clearly_right) == (1, 2, 1, 2)
    assert (f.correct, f.partly, f.partly_right) == (1, 2, 1)
    assert "verdicts: correct 25.0%, partly right 50.0% (1 human-correct, 1 human-wrong), not yet 25.0%" \
        in bench._line("studybot", f)
