"""cohort_answers.csv: one row per learner and question of the library, for a spreadsheet.

Columns: learner (platform:id), display_name, lesson, question, type, first_answer_correct (1 or 0),
points, self_graded (1 or 0), attempts, first_answered_at_utc (YYYY-MM-DD HH:MM:SS), prompt (the
short form of the question's prompt), rubric_verdict (a typed first answer's verdict by the rubric:
correct, partly-right or not-yet; empty for a choice question); new columns come last, so that the
columns before them keep their places; the answer columns are empty where the learner has not answered.
Learners by user id, then lessons and questions in pack order, as in the cohort's quiz_results.txt.
UTF-8 with a byte-order mark (so that spreadsheets read it as UTF-8), written by the `csv` module; a
cell that a spreadsheet would read as a formula (starting with =, +, -, @, a tab or a carriage return)
starts with a quote ' instead."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Iterator
from itertools import groupby
from typing import NamedTuple

from bot.content.model import Library
from bot.core.messages import Actor
from bot.reports.cohort_figures import short_prompt
from bot.store.cohort_stats import AnswerSummary

FILENAME = "cohort_answers.csv"
COLUMNS = ("learner", "display_name", "lesson", "question", "type", "first_answer_correct", "points",
           "self_graded", "attempts", "first_answered_at_utc", "prompt", "rubric_verdict", "hints")
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
NOT_ANSWERED = ["", "", "", "0", ""]
VERDICTS = {"correct": "correct", "partly": "partly-right", "not_yet": "not-yet"}  # stored -> shown


class Row(NamedTuple):  # a tuple: a cohort's export makes one per learner and question
    learner: Actor
    lesson_id: str
    question_id: str
    kind: str
    prompt: str  # the short form of the question's prompt
    answer: AnswerSummary | None  # None: not answered


def rows(learners: Iterable[Actor], answers: Iterable[AnswerSummary], library: Library) -> Iterator[Row]:
    """Every learner crossed with every question of the library, with the learner's answers if any. The
    answers come in the learners' order (by user id, as the store reads both), so that the rows stream:
    one learner's answers held at a time, whatever the size of the cohort."""
    questions = [(lesson.id, q, short_prompt(q.prompt))
                 for lesson in library.lessons.values() for q in lesson.questions]
    groups = groupby(answers, key=lambda a: a.learner.user_id)
    user, group = next(groups, (None, iter(())))
    for who in learners:
        found: dict[str, AnswerSummary] = {}
        if user == who.user_id:
            found = {a.question_id: a for a in group}
            user, group = next(groups, (None, iter(())))
        for lesson_id, q, prompt in questions:
            yield Row(who, lesson_id, q.id, q.kind, prompt, found.get(q.id))


def neutral(cell: str) -> str:
    """A cell as text a spreadsheet shows and never runs."""
    return "'" + cell if cell.startswith(FORMULA_STARTS) else cell


def cells(table: Iterable[Row]) -> Iterator[list[str]]:
    """Each row's cells; a learner's cells and a question's are made once, not once per row."""
    learners: dict[str, list[str]] = {}
    questions: dict[str, tuple[list[str], str]] = {}
    for row in table:
        who = learners.get(row.learner.user_id)
        if who is None:
            who = learners[row.learner.user_id] = [neutral(f"{row.learner.platform}:{row.learner.user_id}"),
                                                   neutral(row.learner.display_name)]
        asked = questions.get(row.question_id)
        if asked is None:
            asked = questions[row.question_id] = ([neutral(row.lesson_id), neutral(row.question_id),
                                                   neutral(row.kind)], neutral(row.prompt))
        a = row.answer
        answered = (NOT_ANSWERED if a is None else
                    [str(int(a.correct)), str(a.points), str(int(a.self_graded)), str(a.attempts),
                     a.first_at.isoformat(" ", "seconds")[:19]])
        verdict = VERDICTS.get(a.verdict, "") if a is not None and a.verdict else ""
        yield [*who, *asked[0], *answered, asked[1], verdict, str(a.hints) if a is not None else ""]


def encode(table: Iterable[Row]) -> bytes:
    """The CSV's bytes, encoded as the rows are written (never one long step: a cohort's export runs
    beside the event loop, which waits for any step that holds the interpreter)."""
    out = io.BytesIO()
    with io.TextIOWrapper(out, encoding="utf-8-sig", newline="", write_through=False) as text:
        writer = csv.writer(text)
        writer.writerow(COLUMNS)
        writer.writerows(cells(table))
        text.flush()
        return out.getvalue()
