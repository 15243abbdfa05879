"""The scoring rules, as pure functions: the one place they are written down.

- A question scores once per learner: the first answer counts; later ones are practice.
- A correct scoring answer is worth one point; a self-grade replaces the grade of that answer.
- Each hint a learner took before answering (`hints:` in the pack) costs HINT_COST of that point, never
  below zero: with one point a question, a hinted answer is still right (in its marks and its review card)
  but earns no point. The hints stay with the answer (`answer_hints`), so a self-grade, a completion or
  an accepted dispute of it earns what a hinted answer earns.
- A teach-back earns one point the first time an attempt covers enough of its key points
  (by default more than half of them: both of two, two of three, three of four). A partly right
  answer or attempt (bot.grading.verdict) earns no point: only the verdict "correct" does.
- Ranks are standard competition ranks: 1, 2, 2, 4.
- Self-graded points count, are marked, or are left out of leaderboards, as a cohort chooses.
- Every point counts once wherever points are shown: a lesson's are its quiz's, its practice set's and its
  teach-backs' (/progress), as a week's and the leaderboards' are; quiz_results.txt lists the quiz only.
- An instructor's accepted dispute grades the answer correct: it earns what a correct answer earns by
  the rules above (a point for the scoring first answer, none for practice; a teach-back's point if
  not earned before), marked instructor-graded wherever points are shown.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import StrEnum

POINT = 1
HINT_COST = POINT  # what each hint taken costs a correct answer's point (never below zero)


class SelfGraded(StrEnum):
    """How self-graded points enter a leaderboard (`leaderboard.self_graded` in the config)."""

    COUNT = "count"  # like any other point
    MARK = "mark"  # counted, and shown as such: "12 (3 self-graded)"
    EXCLUDE = "exclude"  # left out of the points and the ranks


def answer_points(correct: bool, first_answer: bool, hints: int = 0) -> int:
    """The points an answer earns: one for a correct first answer, less HINT_COST for each hint it took
    (never below zero); none for practice."""
    return max(POINT - hints * HINT_COST, 0) if correct and first_answer else 0


def teachback_needed(key_points: int) -> int:
    """How many key points a teach-back must cover when its prompt does not say: more than half."""
    return key_points // 2 + 1


def teachback_points(passes: bool, passed_before: bool) -> int:
    """One point for the first passing attempt at a prompt; none for later ones."""
    return POINT if passes and not passed_before else 0


def competition_ranks(points: Sequence[int]) -> list[int]:
    """Standard competition ranks of scores listed best first: equal scores share a rank,
    and the next rank skips as many places as were shared (1, 2, 2, 4)."""
    ranks: list[int] = []
    for i, score in enumerate(points):
        ranks.append(ranks[-1] if i and score == points[i - 1] else i + 1)
    return ranks


def competition_rank(better: int) -> int:
    """A learner's competition rank when `better` learners have more points."""
    return better + 1
