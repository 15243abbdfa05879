"""Teach-back attempts: the explanation, the key points it covered and missed, its point."""

from __future__ import annotations

import json
from collections.abc import Iterable

from bot.core.messages import Actor
from bot.grading.scoring import teachback_points
from bot.store import boards, learners, prompts
from bot.store.engine import Conn, Engine
from bot.store.learners import LEARNER_ID, key
from bot.store.model import Attempt, TeachbackCount

SCHEMA = {
    1: """
    CREATE TABLE teachbacks (
        id {serial},
        learner_id INTEGER NOT NULL REFERENCES learners (id) ON DELETE CASCADE,
        lesson_id TEXT NOT NULL,
        prompt_id TEXT NOT NULL,
        explanation TEXT NOT NULL,
        covered TEXT NOT NULL,
        missed TEXT NOT NULL,
        points INTEGER NOT NULL,
        week TEXT NOT NULL,
        submitted_at TEXT NOT NULL
    );
    CREATE INDEX teachbacks_by_learner ON teachbacks (learner_id, prompt_id)
    """,
    # the rubric's verdict (NULL before it was kept), and an instructor's that replaced it (an accepted dispute)
    10: """
    ALTER TABLE teachbacks ADD COLUMN passed INTEGER;
    ALTER TABLE teachbacks ADD COLUMN instructor_graded INTEGER NOT NULL DEFAULT 0
    """,
    11: "ALTER TABLE teachbacks ADD COLUMN verdict TEXT",  # the rubric's: correct, partly, not_yet
}

_OWN = "learner_id = " + LEARNER_ID


class Teachbacks:
    def __init__(self, engine: Engine) -> None:
        self._engine = engine

    async def record(self, actor: Actor, *, form: str, lesson_id: str, prompt_id: str, explanation: str,
                     covered: Iterable[str], missed: Iterable[str], passes: bool, week: str,
                     verdict: str | None = None) -> Attempt | None:
        """Store an attempt and spend its form, in one transaction; it scores a point only the first
        time the prompt is passed. None when the form was already used (a repeat is not stored)."""

        def run(c: Conn) -> Attempt | None:
            learner = learners.upsert(c, actor, now)
            if not prompts.spend(c, form, learner, now):
                return None
            passed_before = c.execute(
                "SELECT 1 FROM teachbacks WHERE learner_id = ? AND prompt_id = ? AND points > 0",
                (learner, prompt_id)).fetchone() is not None
            points = teachback_points(passes, passed_before)
            attempt = c.execute(
                "INSERT INTO teachbacks (learner_id, lesson_id, prompt_id, explanation, covered, missed,"
                " points, week, submitted_at, passed, verdict) VALUES (?,?,?,?,?,?,?,?,?,?,?) RETURNING id",
                (learner, lesson_id, prompt_id, explanation, json.dumps(list(covered)), json.dumps(list(missed)),
                 points, week, now, int(passes), verdict)).fetchone()[0]
            if points:
                boards.add_points(c, learner, actor.in_cohort, week, points)
            return Attempt(int(attempt), points)

        now = self._engine.now()
        return await self._engine.write(run)

    async def counts(self, actor: Actor) -> dict[str, TeachbackCount]:
        """Per lesson: attempts and points (and how many of them were instructor-graded)."""
        rows = await self._engine.read(
            "SELECT lesson_id, COUNT(*) AS n, SUM(points) AS p,"
            " SUM(CASE WHEN instructor_graded = 1 THEN points ELSE 0 END) AS i FROM teachbacks WHERE " + _OWN
            + " GROUP BY lesson_id", key(actor))
        return {r["lesson_id"]: TeachbackCount(r["n"], r["p"] or 0, r["i"] or 0) for r in rows}

    async def passed(self, actor: Actor) -> set[str]:
        """The prompts the learner has passed at least once, by the rubric or an instructor (an attempt that
        scored passed, also from before the verdict was kept)."""
        rows = await self._engine.read(
            "SELECT DISTINCT prompt_id FROM teachbacks WHERE (passed = 1 OR points > 0) AND " + _OWN, key(actor))
        return {r["prompt_id"] for r in rows}

    async def attempts(self, actor: Actor) -> dict[str, int]:
        """Per prompt: how many attempts."""
        rows = await self._engine.read(
            "SELECT prompt_id, COUNT(*) AS n FROM teachbacks WHERE " + _OWN + " GROUP BY prompt_id", key(actor))
        return {r["prompt_id"]: r["n"] for r in rows}
