"""The Meta lesson's held-out answer set (benchmarks/meta_answers.yaml) loads, names only items of the pack,
and its benchmark runs and prints its figures. The figures themselves are never asserted: the set measures
the rubrics, it is not a target for them."""

from __future__ import annotations

import re
import sys
from functools import cache
from pathlib import Path

import pytest
import yaml
from support import REPO

if str(REPO) not in sys.path:  # the benchmarks package lives beside bot/, outside the installed packages
    sys.path.insert(0, str(REPO))

from benchmarks import bench_lesson as bench  # noqa: E402
from bot.content.loader import load_library  # noqa: E402


@cache
def library():
    return load_library(bench.CONTENT)


@pytest.mark.parametrize("path", list(bench.ANSWER_SETS), ids=lambda path: path.name)
def test_every_answer_is_labelled_correct_or_wrong_and_each_item_has_both(path: Path) -> None:
    raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    for item in raw["items"]:
        labels = [answer["label"] for answer in item["answers"]]
        assert set(labels) == {"correct", "wrong"}, item["id"]
        assert all(answer["text"].strip() and answer["why"].strip() for answer in item["answers"]), item["id"]


@pytest.mark.parametrize("path", list(bench.ANSWER_SETS), ids=lambda path: path.name)
def test_the_set_loads_and_every_item_is_one_of_the_lessons_own(path: Path) -> None:
    answers = bench.load_answers(path)
    lesson = library().lessons[answers.lesson]
    ids = [item.id for item in answers.items]
    assert len(ids) == len(set(ids))
    own = {q.id for q in lesson.review_questions if q.kind == "short"} | {p.id for p in lesson.prompts}
    assert set(ids) <= own
    for item in answers.items:
        assert bench.rubric_of(library(), item).points, item.id


def test_the_fresh_batches_cover_every_short_answer_and_teachback_of_the_lesson() -> None:
    lesson = library().lessons["meta-llm-scale"]
    own = {q.id for q in lesson.review_questions if q.kind == "short"} | {p.id for p in lesson.prompts}
    for name in ("meta_fresh_a.yaml", "meta_fresh_b.yaml"):
        assert {item.id for item in bench.load_answers(bench.ANSWERS.with_name(name)).items} == own, name


def test_an_item_the_pack_does_not_have_is_refused() -> None:
    item = bench.Item("meta-q99", "short", (bench.Answer("anything", True),))
    with pytest.raises(ValueError, match="meta-q99"):
        bench.rubric_of(library(), item)
    mc = bench.Item("meta-q04", "short", (bench.Answer("anything", True),))  # a multiple-choice question
    with pytest.raises(ValueError, match="meta-q04"):
        bench.rubric_of(library(), mc)


def test_a_label_other_than_correct_or_wrong_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "answers.yaml"
    path.write_text("lesson: meta-llm-scale\nitems:\n  - id: meta-q06\n    kind: short\n    answers:\n"
                    "      - {label: partly, why: half of it, text: shards the state}\n", encoding="utf-8")
    with pytest.raises(ValueError, match="label"):
        bench.load_answers(path)


async def test_the_benchmark_runs_and_prints_its_figures() -> None:
    lines = await bench.main()
    figures = re.compile(r"^  (\S.*?)\s+\d+\.\d% \(\s*\d+/\d+\s*\)\s+\d+\.\d% \(\s*\d+/\d+\s*\)"
                         r"(\s+\d+\.\d%){3}\s+\(\s*\d+ right,\s+\d+ wrong\)$")
    rows = {m.group(1) for line in lines if (m := figures.match(line))}
    items = {item.id for item in bench.load_answers().items}
    assert rows == items | {"short answers", "teach-backs", "total"}
    assert not any("misgraded" in line for line in lines)  # no per-answer listing unless asked
    headers = [line for line in lines if line.startswith("lesson grading on")]
    assert [next(p.name for p in bench.ANSWER_SETS if f"({p.name}:" in h) for h in headers] == \
        [p.name for p in bench.ANSWER_SETS]  # every set reported, the held-out batch B apart from A
    assert "batch B: held out" in headers[-1]
