"""The cohort's scores as a gradebook CSV that an LMS imports: one row per learner the instructor mapped
(`cohorts.<id>.gradebook` in the config: chat user id -> the LMS's id), one column per lesson, the
points of first answers to its quiz (out of its number of questions).

canvas: Student, ID, SIS User ID, SIS Login ID, Section, then a column per lesson, and a "Points Possible"
row first (Canvas matches learners by SIS User ID when ID is empty). moodle: "ID number", "Full name",
then a column per lesson (map "ID number" to the users' ID number when importing). UTF-8 with a
byte-order mark; cells a spreadsheet would run as formulas start with a quote."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from bot.content.model import Library
from bot.core.messages import Actor
from bot.reports.cohort_csv import neutral
from bot.store.cohort_stats import AnswerSummary

LMS = ("canvas", "moodle")
FILENAMES = {"canvas": "gradebook_canvas.csv", "moodle": "gradebook_moodle.csv"}


@dataclass(frozen=True)
class Gradebook:
    data: bytes
    learners: int  # rows written
    unmapped: tuple[str, ...]  # learners left out: no LMS id in the config


def _column(lesson_id: str, title: str) -> str:
    return f"{title} ({lesson_id})"


def build(lms: str, learners: Iterable[Actor], answers: Iterable[AnswerSummary], library: Library,
          mapping: Mapping[str, str]) -> Gradebook:
    lessons = list(library.lessons.values())
    lesson_of = {q.id: lesson.id for lesson in lessons for q in lesson.questions}
    scores: dict[tuple[str, str], int] = {}
    for a in answers:
        if (lesson_id := lesson_of.get(a.question_id)) is not None:
            scores[a.learner.user_id, lesson_id] = scores.get((a.learner.user_id, lesson_id), 0) + a.points
    columns = [neutral(_column(les.id, les.title)) for les in lessons]
    out = io.StringIO(newline="")
    writer = csv.writer(out)
    if lms == "canvas":
        writer.writerow(["Student", "ID", "SIS User ID", "SIS Login ID", "Section", *columns])
        writer.writerow(["Points Possible", "", "", "", "", *(str(len(les.questions)) for les in lessons)])
    else:
        writer.writerow(["ID number", "Full name", *columns])
    written, unmapped = 0, []
    for who in learners:
        lms_id = mapping.get(who.user_id)
        if not lms_id:
            unmapped.append(who.display_name or who.user_id)
            continue
        cells = [str(scores.get((who.user_id, les.id), 0)) for les in lessons]
        name = neutral(who.display_name or who.user_id)
        writer.writerow([name, "", neutral(lms_id), "", "", *cells] if lms == "canvas"
                        else [neutral(lms_id), name, *cells])
        written += 1
    return Gradebook(out.getvalue().encode("utf-8-sig"), written, tuple(unmapped))
