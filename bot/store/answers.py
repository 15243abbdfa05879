"""Answers: each recorded answer, its grade and its points; self-grades; a question's tally."""

from __future__ import annotations

import json
from collections.abc import Iterable
from datetime import datetime

from bot.core.messages import Actor, Cohort
from bot.grading.scoring import answer_points
from bot.store import boards, cards, learners, prompts
from bot.store.engine import Conn, Engine, Row, iso
from bot.store.learners import LEARNER_ID, LEARNER_KEY, key
from bot.store.model import (
    CardReview,
    ChoiceCount,
    HintsTaken,
    Outcome,
    Recorded,
    ScoredAnswer,
    SelfGradedAnswer,
    Typed,
)

SCHEMA = {
    1: """
    CREATE TABLE answers (
        id {serial},
        learner_id INTEGER NOT NULL REFERENCES learners (id) ON DELETE CASCADE,
        prompt_id TEXT NOT NULL,
        lesson_id TEXT NOT NULL,
        question_id TEXT NOT NULL,
        mode TEXT NOT NULL,
        choice INTEGER,
        correct INTEGER NOT NULL,
        scored INTEGER NOT NULL,
        points INTEGER NOT NULL,
        self_graded INTEGER NOT NULL DEFAULT 0,
        week TEXT NOT NULL,
        answered_at TEXT NOT NULL,
        UNIQUE (prompt_id, learner_id)
    );
    CREATE INDEX answers_by_learner ON answers (learner_id, question_id)
    """,
    # what a typed answer said and how the rubric read it (for self-grade audits)
    4: """
    ALTER TABLE answers ADD COLUMN text TEXT;
    ALTER TABLE answers ADD COLUMN rubric_correct INTEGER;
    ALTER TABLE answers ADD COLUMN matched TEXT;
    ALTER TABLE answers ADD COLUMN missed TEXT;
    CREATE INDEX answers_self_graded ON answers (week) WHERE self_graded = 1
    """,
    # first answers indexed for instructors' per-question figures (covering, and only the answers that score)
    7: """
    CREATE INDEX answers_first ON answers (question_id, choice, correct, self_graded, learner_id, lesson_id, week)
        WHERE scored = 1;
    CREATE INDEX answers_first_missed ON answers (question_id, learner_id, lesson_id, week, missed)
        WHERE scored = 1 AND missed IS NOT NULL
    """,
    # an instructor's verdict replaced the rubric's (an accepted dispute)
    10: "ALTER TABLE answers ADD COLUMN instructor_graded INTEGER NOT NULL DEFAULT 0",
    11: "ALTER TABLE answers ADD COLUMN verdict TEXT",  # a typed answer's rubric verdict: correct, partly, not_yet
    12: "CREATE INDEX answers_by_time ON answers (learner_id, answered_at)",  # a learner's days of study (streaks)
    # the hints an answer took (the scoring rules weigh them): a table of its own, not a column of answers, whose
    # new column would turn SQLite's plans for the per-question figures away from their covering indexes
    13: """
    CREATE TABLE answer_hints (
        answer_id INTEGER PRIMARY KEY REFERENCES answers (id) ON DELETE CASCADE,
        hints INTEGER NOT NULL
    )
    """,
}


# whether an answer is the learner's first scoring one to its question (its parameters: scores, learner, question)
_FIRST = ("(? = 1 AND NOT EXISTS (SELECT 1 FROM answers WHERE learner_id = ? AND question_id = ? AND scored = 1))")


def _record(c: Conn, prompt_id: str, actor: Actor, lesson_id: str, question_id: str,
            mode: str, correct: bool, week: str, choice: int | None, now: str,
            rate: CardReview | None, typed: Typed | None, scores: bool, taken: HintsTaken | None) -> Recorded:
    # The learner's upsert comes first: it locks their row until commit, so two answers of one learner
    # (in two processes) take turns, and the answer's `first` test sees the other's committed answer.
    learner = learners.upsert(c, actor, now)
    card = cards.stored(c, learner, question_id) if rate else None  # read with the spending's answer
    if not prompts.spend_open(c, prompt_id, learner, now):
        return Recorded(prompts.not_spent(c, prompt_id))
    first_of = (int(scores), learner, question_id)
    hints = taken(c, learner) if taken else 0
    row = c.execute(
        "INSERT INTO answers (learner_id, prompt_id, lesson_id, question_id, mode, choice, correct, scored,"
        " points, week, answered_at, text, rubric_correct, matched, missed, verdict)"
        " VALUES (?,?,?,?,?,?,?, CASE WHEN " + _FIRST + " THEN 1 ELSE 0 END, CASE WHEN " + _FIRST +
        " THEN ? ELSE ? END, ?,?,?,?,?,?,?) RETURNING id, scored",
        (learner, prompt_id, lesson_id, question_id, mode, choice, int(correct), *first_of, *first_of,
         answer_points(correct, True, hints), answer_points(correct, False, hints), week, now,
         typed.text if typed else None, int(correct), json.dumps(typed.matched) if typed else None,
         json.dumps(typed.missed) if typed else None, typed.verdict if typed else None),
    ).fetchone()
    first = bool(row["scored"])
    if hints:
        c.execute("INSERT INTO answer_hints (answer_id, hints) VALUES (?, ?)", (row["id"], hints))
    if first:
        boards.add_points(c, learner, actor.in_cohort, week, answer_points(correct, first, hints))
    before = cards.review(c, learner, question_id, lesson_id, rate, asked=card) if rate else None
    return Recorded(Outcome.RECORDED, row["id"], first, before)


def hints_of(c: Conn, answer_id: int) -> int:
    """The hints an answer took before it was given (none for most)."""
    row = c.execute("SELECT hints FROM answer_hints WHERE answer_id = ?", (answer_id,)).fetchone()
    return int(row["hints"]) if row else 0


def _followed_up(c: Conn, answer_id: int, prompt_id: str, learner: int, now: str) -> Row | Outcome:
    """The learner's answer that a follow-up button (a self-grade, a completion) changes, its prompt spent
    once; or why not: the prompt was spent or closed by a dispute, an instructor graded it, it is gone."""
    closed = c.execute("SELECT closed_at FROM prompts WHERE id = ?", (prompt_id,)).fetchone()
    if closed is not None and closed["closed_at"] is not None:  # the learner asked an instructor instead
        return Outcome.SETTLED
    if not prompts.spend(c, prompt_id, learner, now):
        return Outcome.ALREADY
    row = c.execute("SELECT * FROM answers WHERE id = ? AND learner_id = ?", (answer_id, learner)).fetchone()
    if row is None:
        return Outcome.CLOSED
    return Outcome.SETTLED if row["instructor_graded"] else row


def _self_grade(c: Conn, answer_id: int, correct: bool, prompt_id: str, actor: Actor, now: str,
                question_id: str, lesson_id: str, rate: CardReview, card_before: str | None) -> Outcome:
    """Spend the self-grade button, replace the answer's grade and points, re-rate the card."""
    learner = learners.upsert(c, actor, now)
    row = _followed_up(c, answer_id, prompt_id, learner, now)
    if isinstance(row, Outcome):
        return row
    points = answer_points(correct, bool(row["scored"]), hints_of(c, answer_id))
    c.execute("UPDATE answers SET correct = ?, points = ?, self_graded = 1 WHERE id = ?",
              (int(correct), points, answer_id))
    was_self_graded = row["points"] if row["self_graded"] else 0
    boards.add_points(c, learner, actor.in_cohort, row["week"], points - row["points"], points - was_self_graded)
    cards.review(c, learner, question_id, lesson_id, rate, card_before or "")
    return Outcome.RECORDED


def _complete(c: Conn, answer_id: int, prompt_id: str, actor: Actor, now: str, typed: Typed, correct: bool,
              question_id: str, lesson_id: str, rate: CardReview, card_before: str | None) -> Outcome:
    """Spend the completion form and replace a partly right answer's text and grade with the completed
    one's, with the points it now earns and its card rated again; not once its learner or an instructor
    graded it (or a dispute closed the form)."""
    learner = learners.upsert(c, actor, now)
    row = _followed_up(c, answer_id, prompt_id, learner, now)
    if isinstance(row, Outcome):
        return row
    if row["self_graded"]:
        return Outcome.SETTLED
    points = answer_points(correct, bool(row["scored"]), hints_of(c, answer_id))
    c.execute("UPDATE answers SET correct = ?, rubric_correct = ?, points = ?, text = ?, matched = ?, missed = ?,"
              " verdict = ? WHERE id = ?", (int(correct), int(correct), points, typed.text, json.dumps(typed.matched),
                                            json.dumps(typed.missed), typed.verdict, answer_id))
    boards.add_points(c, learner, actor.in_cohort, row["week"], points - row["points"])
    cards.review(c, learner, question_id, lesson_id, rate, card_before or "")
    return Outcome.RECORDED


class Answers:
    def __init__(self, engine: Engine) -> None:
        self._engine = engine

    async def record(self, prompt_id: str, actor: Actor, *, lesson_id: str, question_id: str, mode: str,
                     correct: bool, week: str, choice: int | None = None, rate: CardReview | None = None,
                     typed: Typed | None = None, scores: bool = True, hints: HintsTaken | None = None) -> Recorded:
        """Record an answer, spend the prompt for this learner and rate their card, in one transaction.

        The first answer a learner gives to a question scores (in a mode that `scores`), less what the
        hints it took cost (`hints`, read in the transaction; `bot.grading.scoring`); later ones are
        practice. A typed answer keeps its text and the key points the rubric found (for instructors' audits)."""
        return await self._engine.write(_record, prompt_id, actor, lesson_id, question_id, mode, correct, week,
                                        choice, self._engine.now(), rate, typed, scores, hints)

    async def self_grade(self, answer_id: int, correct: bool, *, prompt_id: str, actor: Actor, question_id: str,
                         lesson_id: str, rate: CardReview, card_before: str | None) -> Outcome:
        """The learner's own grade replaces the rubric's, its points and its card rating: one transaction."""
        return await self._engine.write(_self_grade, answer_id, correct, prompt_id, actor, self._engine.now(),
                                        question_id, lesson_id, rate, card_before)

    async def complete(self, answer_id: int, typed: Typed, correct: bool, *, prompt_id: str, actor: Actor,
                       question_id: str, lesson_id: str, rate: CardReview, card_before: str | None) -> Outcome:
        """A partly right answer completed in its one follow-up: its new text, grade and points, one transaction."""
        return await self._engine.write(_complete, answer_id, prompt_id, actor, self._engine.now(), typed, correct,
                                        question_id, lesson_id, rate, card_before)

    async def answered(self, actor: Actor, lesson_id: str) -> set[str]:
        """The questions of a lesson the learner has answered at least once."""
        rows = await self._engine.read(
            "SELECT DISTINCT a.question_id FROM answers a JOIN learners l ON l.id = a.learner_id"
            " WHERE l.platform = ? AND l.cohort = ? AND l.user_id = ? AND a.lesson_id = ?", (*key(actor), lesson_id))
        return {r["question_id"] for r in rows}

    async def scored(self, actor: Actor, lesson_id: str | None = None) -> list[ScoredAnswer]:
        """Each question's scoring (first) answer for a learner."""
        sql = ("SELECT question_id, correct, self_graded, instructor_graded, verdict, points FROM answers"
               " WHERE scored = 1 AND learner_id = " + LEARNER_ID)
        params: tuple = key(actor)
        if lesson_id:
            sql += " AND lesson_id = ?"
            params += (lesson_id,)
        rows = await self._engine.read(sql, params)
        return [ScoredAnswer(r["question_id"], bool(r["correct"]), bool(r["self_graded"]), bool(r["instructor_graded"]),
                             r["verdict"], r["points"]) for r in rows]

    async def self_graded(self, cohort: Cohort, week: str, who: str | None = None) -> list[SelfGradedAnswer]:
        """A cohort's self-graded answers in a week, oldest first; with `who`, one learner's (their user
        id or display name, ignoring case)."""
        sql = ("SELECT l.user_id, l.display_name, a.question_id, a.text, a.correct, a.rubric_correct, a.matched,"
               " a.missed, a.answered_at FROM answers a JOIN learners l ON l.id = a.learner_id"
               " WHERE a.self_graded = 1 AND a.week = ? AND l.platform = ? AND l.cohort = ?")
        params: tuple = (week, cohort.platform, cohort.id)
        if who:
            sql += " AND (l.user_id = ? OR lower(l.display_name) = lower(?))"
            params += (who, who)
        rows = await self._engine.read(sql + " ORDER BY a.answered_at, a.id", params)
        return [SelfGradedAnswer(r["user_id"], r["display_name"], r["question_id"], r["text"] or "",
                                 bool(r["correct"]), bool(r["rubric_correct"]),
                                 tuple(json.loads(r["matched"] or "[]")), tuple(json.loads(r["missed"] or "[]")),
                                 datetime.fromisoformat(r["answered_at"])) for r in rows]

    async def streak(self, actor: Actor, days: Iterable[tuple[datetime, datetime]]) -> tuple[int, bool]:
        """Days in a row with an answer (a review or a teach-back is one too), `days` being the learner's local
        days from today backwards as UTC spans: counted from today, or from yesterday while today has none yet;
        and whether today has one. One indexed probe per day of the streak, however many answers there are
        (and, on a day without one, a look at the learner's few teach-backs)."""

        def active(c: Conn, learner: int, span: tuple[datetime, datetime]) -> bool:
            between = (learner, iso(span[0]), iso(span[1]))
            return (c.execute("SELECT 1 FROM answers WHERE learner_id = ? AND answered_at >= ? AND answered_at < ?"
                              " LIMIT 1", between).fetchone() is not None
                    or c.execute("SELECT 1 FROM teachbacks WHERE learner_id = ? AND submitted_at >= ?"
                                 " AND submitted_at < ? LIMIT 1", between).fetchone() is not None)

        def run(c: Conn) -> tuple[int, bool]:
            row = c.execute("SELECT id FROM learners WHERE " + LEARNER_KEY, key(actor)).fetchone()
            if row is None:
                return 0, False
            spans = iter(days)
            today = active(c, row[0], next(spans))
            count = int(today)
            for span in spans:
                if not active(c, row[0], span):
                    break
                count += 1
            return count, today

        return await self._engine.run(run)

    async def counts(self, prompt_id: str) -> list[ChoiceCount]:
        """How one posted question was answered: the answers counted per choice and grade."""
        rows = await self._engine.read(
            "SELECT choice, correct, COUNT(*) AS n FROM answers WHERE prompt_id = ? GROUP BY choice, correct",
            (prompt_id,))
        return [ChoiceCount(r["choice"], bool(r["correct"]), int(r["n"])) for r in rows]
