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


def rows(learners: Iterable[Actor], answers: Iterable[AnswerSummary], library: Library) -> list[Row]:
    """Every learner crossed with every question of the library, with the learner's answers if any."""
    found = {(a.learner.user_id, a.question_id): a for a in answers}
    questions = [(lesson.id, q, short_prompt(q.prompt))
                 for lesson in library.lessons.values() for q in lesson.questions]
    return [Row(who, lesson_id, q.id, q.kind, prompt, found.get((who.user_id, q.id)))
            for who in learners for lesson_id, q, prompt in questions]


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
    out = io.StringIO(newline="")
    writer = csv.writer(out)
    writer.writerow(COLUMNS)
    writer.writerows(cells(table))
    return out.getvalue().encode("utf-8-sig")
