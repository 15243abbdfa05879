"""How points graded otherwise than by a rubric are marked, wherever points are shown: " (3
self-graded, 1 instructor-graded)"."""

from __future__ import annotations

from bot.core import i18n
from bot.grading.scoring import SelfGraded
from bot.store.model import Standing


def graded_marks(self_graded: int, instructor_graded: int) -> str:
    """How some points were graded otherwise than by a rubric: " (3 self-graded, 1 instructor-graded)"."""
    tr = i18n.current()
    marks = ([tr.ngettext("{n} self-graded", "{n} self-graded", self_graded)] if self_graded else []) + (
        [tr.ngettext("{n} instructor-graded", "{n} instructor-graded", instructor_graded)] if instructor_graded else [])
    return f" ({', '.join(marks)})" if marks else ""


def marks_text(standing: Standing, policy: SelfGraded) -> str:
    """A learner's marks as a board shows them: self-graded points when the cohort marks them, and
    always the points instructors gave by accepting disputes."""
    return graded_marks(standing.self_graded if policy is SelfGraded.MARK else 0, standing.instructor_graded)
