"""The disputes feature's own table: a short answer's or a teach-back's verdict sent by its learner
to the cohort's instructors, kept with the answer's text, the rubric's verdict and what it matched;
settled once, accepted or rejected, in one transaction with the points it gives and the marks it
leaves. Declared as the feature's store area (`AREA`): the store creates the table."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any

from bot.answering.questions import COMPLETE, SELF_GRADE
from bot.core.messages import Actor, Cohort
from bot.grading.scoring import answer_points, teachback_points
from bot.store import boards, learners
from bot.store.answers import hints_of
from bot.store.areas import Area
from bot.store.engine import Conn, Engine, Row
from bot.store.model import Disputed
from bot.store.timers import SET_TIMER

STEPS = {  # step 1 was the core schema's step 10 before disputes owned their table: IF NOT EXISTS keeps both
    1: """
    CREATE TABLE IF NOT EXISTS disputes (
        id {serial},
        learner_id INTEGER NOT NULL REFERENCES learners (id) ON DELETE CASCADE,
        platform TEXT NOT NULL,
        cohort TEXT NOT NULL,
        source TEXT NOT NULL,
        source_id INTEGER NOT NULL,
        lesson_id TEXT NOT NULL,
        item_id TEXT NOT NULL,
        text TEXT NOT NULL,
        rubric_correct INTEGER NOT NULL,
        matched TEXT NOT NULL,
        missed TEXT NOT NULL,
        state TEXT NOT NULL,
        opened_at TEXT NOT NULL,
        settled_at TEXT,
        settled_by TEXT,
        points INTEGER NOT NULL DEFAULT 0,
        note TEXT,
        UNIQUE (source, source_id)
    );
    CREATE INDEX IF NOT EXISTS disputes_open ON disputes (platform, cohort, opened_at) WHERE state = 'open';
    CREATE INDEX IF NOT EXISTS disputes_by_learner ON disputes (learner_id, state)
    """,
    2: "ALTER TABLE disputes ADD COLUMN verdict TEXT",  # the rubric's: correct, partly or not_yet
}

class DisputeState(StrEnum):
    OPEN = "open"
    ACCEPTED = "accepted"
    REJECTED = "rejected"


@dataclass(frozen=True)
class Dispute:
    """A verdict a learner sent to their instructors: the answer, the rubric's verdict and what it
    matched; once settled, who settled it, how, and the points it gave."""

    id: int
    platform: str
    cohort: str
    user_id: str
    display_name: str
    of: Disputed
    lesson_id: str
    item_id: str  # the question or teach-back prompt
    text: str
    rubric_correct: bool
    matched: tuple[str, ...]
    missed: tuple[str, ...]
    state: DisputeState
    opened_at: datetime
    settled_by: str | None = None
    points: int = 0
    note: str | None = None  # the instructor's word for the learner
    verdict: str | None = None  # the rubric's three-way verdict (partly: right in part), when it was kept
    source_id: int = 0  # the disputed answer's or attempt's id

    @property
    def learner(self) -> Actor:
        return Actor(self.platform, self.cohort, self.user_id, self.display_name)


@dataclass(frozen=True)
class Opened:
    """What became of a learner's request to open a dispute; `open` counts their open ones."""

    dispute: Dispute | None  # None: refused
    already: bool = False  # this answer was disputed before
    open: int = 0


_SELECT = ("SELECT d.*, l.user_id, l.display_name FROM disputes d JOIN learners l ON l.id = d.learner_id")


def _dispute(r: Row) -> Dispute:
    return Dispute(int(r["id"]), r["platform"], r["cohort"], r["user_id"], r["display_name"], Disputed(r["source"]),
                   r["lesson_id"], r["item_id"], r["text"], bool(r["rubric_correct"]), tuple(json.loads(r["matched"])),
                   tuple(json.loads(r["missed"])), DisputeState(r["state"]), datetime.fromisoformat(r["opened_at"]),
                   r["settled_by"], int(r["points"]), r["note"], r["verdict"], int(r["source_id"]))


def _source(c: Conn, of: Disputed, source_id: int, learner: int) -> dict[str, Any] | None:
    """The disputed answer or attempt, as the dispute keeps it; None when it is not this learner's."""
    if of is Disputed.ANSWER:
        row = c.execute("SELECT lesson_id, question_id, text, rubric_correct, matched, missed, verdict FROM answers"
                        " WHERE id = ? AND learner_id = ? AND text IS NOT NULL", (source_id, learner)).fetchone()
        return None if row is None else {
            "lesson_id": row["lesson_id"], "item_id": row["question_id"], "text": row["text"],
            "rubric_correct": int(row["rubric_correct"] or 0), "matched": row["matched"] or "[]",
            "missed": row["missed"] or "[]", "verdict": row["verdict"]}
    row = c.execute("SELECT lesson_id, prompt_id, explanation, covered, missed, passed, verdict FROM teachbacks"
                    " WHERE id = ? AND learner_id = ?", (source_id, learner)).fetchone()
    return None if row is None else {
        "lesson_id": row["lesson_id"], "item_id": row["prompt_id"], "text": row["explanation"],
        "rubric_correct": int(row["passed"] or 0), "matched": row["covered"], "missed": row["missed"],
        "verdict": row["verdict"]}


def _open(c: Conn, actor: Actor, of: Disputed, source_id: int, most: int, now: str) -> Opened:
    # The learner's upsert comes first: it locks their row, so two requests of one learner take turns
    # (in two processes too) and the count of open disputes below is the committed one.
    learner = learners.upsert(c, actor, now)
    if c.execute("SELECT 1 FROM disputes WHERE source = ? AND source_id = ?", (of, source_id)).fetchone():
        return Opened(None, already=True)
    open_now = c.execute("SELECT COUNT(*) FROM disputes WHERE learner_id = ? AND state = ?",
                         (learner, DisputeState.OPEN)).fetchone()[0]
    if open_now >= most:
        return Opened(None, open=open_now)
    source = _source(c, of, source_id, learner)
    if source is None:
        return Opened(None)
    row = c.execute(
        "INSERT INTO disputes (learner_id, platform, cohort, source, source_id, lesson_id, item_id, text,"
        " rubric_correct, matched, missed, state, opened_at, verdict) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)"
        " ON CONFLICT DO NOTHING RETURNING id",
        (learner, actor.platform, actor.cohort, of, source_id, source["lesson_id"], source["item_id"], source["text"],
         source["rubric_correct"], source["matched"], source["missed"], DisputeState.OPEN, now,
         source["verdict"])).fetchone()
    if row is None:  # the same answer, disputed at the same moment elsewhere
        return Opened(None, already=True)
    if of is Disputed.ANSWER:  # the instructor grades it now: the learner's own grade and follow-up are spent
        c.execute("UPDATE prompts SET closed_at = ? WHERE kind IN (?, ?) AND owner_id = ? AND item_id = ?"
                  " AND closed_at IS NULL", (now, SELF_GRADE, COMPLETE, learner, source["item_id"]))
    found = c.execute(_SELECT + " WHERE d.id = ?", (row[0],)).fetchone()
    return Opened(_dispute(found), open=open_now + 1)


def _accept(c: Conn, dispute: Row, cohort: Cohort) -> int:
    """Grade the disputed answer or attempt correct, by the instructor: the points scoring would have
    given a correct one (`bot.grading.scoring`), marked instructor-graded on the boards. Returns them."""
    learner = dispute["learner_id"]
    if dispute["source"] == Disputed.ANSWER:
        answer = c.execute("SELECT scored, points, self_graded, week FROM answers WHERE id = ?",
                           (dispute["source_id"],)).fetchone()
        if answer is None:
            return 0
        points = answer_points(True, bool(answer["scored"]), hints_of(c, dispute["source_id"]))
        c.execute("UPDATE answers SET correct = 1, points = ?, self_graded = 0, instructor_graded = 1 WHERE id = ?",
                  (points, dispute["source_id"]))
        was_self_graded = answer["points"] if answer["self_graded"] else 0
        boards.add_points(c, learner, cohort, answer["week"], points - answer["points"], -was_self_graded, points)
        return points
    attempt = c.execute("SELECT prompt_id, points, week FROM teachbacks WHERE id = ?",
                        (dispute["source_id"],)).fetchone()
    if attempt is None:
        return 0
    passed_before = c.execute("SELECT 1 FROM teachbacks WHERE learner_id = ? AND prompt_id = ? AND points > 0",
                              (learner, attempt["prompt_id"])).fetchone() is not None
    points = teachback_points(True, passed_before)
    c.execute("UPDATE teachbacks SET passed = 1, points = ?, instructor_graded = 1 WHERE id = ?",
              (points, dispute["source_id"]))
    boards.add_points(c, learner, cohort, attempt["week"], points, 0, points)
    return points


def _settle(c: Conn, dispute_id: int, accept: bool, instructor: Actor, tell: str,
            now: str) -> tuple[Dispute | None, bool]:
    """Settle an open dispute of the instructor's cohort: its state, when accepted its answer's new
    grade and points, and the timer `tell`, due now, that tells the learner."""
    row = c.execute(_SELECT + " WHERE d.id = ? AND d.platform = ? AND d.cohort = ?",
                    (dispute_id, instructor.platform, instructor.cohort)).fetchone()
    if row is None:
        return None, False
    state = DisputeState.ACCEPTED if accept else DisputeState.REJECTED
    settled = c.execute("UPDATE disputes SET state = ?, settled_at = ?, settled_by = ? WHERE id = ? AND state = ?",
                        (state, now, instructor.user_id, dispute_id, DisputeState.OPEN)).rowcount == 1
    if settled and accept:
        points = _accept(c, row, instructor.in_cohort)
        c.execute("UPDATE disputes SET points = ? WHERE id = ?", (points, dispute_id))
    if settled:
        c.execute(SET_TIMER, (tell, now))
    return _dispute(c.execute(_SELECT + " WHERE d.id = ?", (dispute_id,)).fetchone()), settled


class Disputes:
    def __init__(self, engine: Engine) -> None:
        self._engine = engine

    async def open(self, actor: Actor, of: Disputed, source_id: int, *, most: int) -> Opened:
        """Open a dispute of one of the learner's answers (or teach-back attempts), unless it was disputed
        before or the learner already has `most` open: one transaction."""
        return await self._engine.write(_open, actor, of, source_id, most, self._engine.now())

    async def settle(self, dispute_id: int, accept: bool, instructor: Actor, *,
                     tell: str) -> tuple[Dispute | None, bool]:
        """Accept or reject an open dispute of the instructor's cohort, with the points and marks an
        accepted one gives and the timer `tell` (due now) that tells its learner, in one transaction.
        Returns the dispute (None when it is not of this cohort) and whether this call settled it
        (False: it was settled before)."""
        return await self._engine.write(_settle, dispute_id, accept, instructor, tell, self._engine.now())

    async def add_note(self, dispute_id: int, instructor: Actor, note: str, *, tell: str) -> bool:
        """The settling instructor's word for the learner on a settled dispute of their cohort, once, with
        the timer `tell` (due now) that sends it: one transaction. False when there is one already."""

        def run(c: Conn) -> bool:
            added = c.execute("UPDATE disputes SET note = ? WHERE id = ? AND platform = ? AND cohort = ?"
                              " AND state != ? AND note IS NULL",
                              (note, dispute_id, instructor.platform, instructor.cohort, DisputeState.OPEN))
            if added.rowcount != 1:
                return False
            c.execute(SET_TIMER, (tell, now))
            return True

        now = self._engine.now()
        return await self._engine.write(run)

    async def get(self, dispute_id: int) -> Dispute | None:
        rows = await self._engine.read(_SELECT + " WHERE d.id = ?", (dispute_id,))
        return _dispute(rows[0]) if rows else None

    async def open_in(self, cohort: Cohort, limit: int) -> tuple[list[Dispute], int]:
        """A cohort's open disputes, oldest first (at most `limit`), and how many are open in all."""

        def run(c: Conn) -> tuple[list[Dispute], int]:
            rows = c.execute(_SELECT + " WHERE d.platform = ? AND d.cohort = ? AND d.state = ?"
                             " ORDER BY d.opened_at, d.id LIMIT ?",
                             (cohort.platform, cohort.id, DisputeState.OPEN, limit)).fetchall()
            total = c.execute("SELECT COUNT(*) FROM disputes WHERE platform = ? AND cohort = ? AND state = ?",
                              (cohort.platform, cohort.id, DisputeState.OPEN)).fetchone()[0]
            return [_dispute(r) for r in rows], int(total)

        return await self._engine.run(run)

    async def settled(self, lesson_id: str | None = None) -> list[Dispute]:
        """Every settled dispute of every cohort (of one lesson), oldest first: the rubrics' corrections."""
        sql = _SELECT + " WHERE d.state != ?"
        params: tuple = (DisputeState.OPEN,)
        if lesson_id:
            sql += " AND d.lesson_id = ?"
            params += (lesson_id,)
        return [_dispute(r) for r in await self._engine.read(sql + " ORDER BY d.settled_at, d.id", params)]


AREA = Area("disputes", STEPS, Disputes)
