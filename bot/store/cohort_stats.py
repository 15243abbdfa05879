"""Insights: a cohort's answers and teach-backs counted for its instructors, glossary lookups
counted per query (never per learner), and a learner's own trend and most missed key points.

Every cohort query joins `learners` on the cohort, so an instructor's figures never reach past
their own cohort, and a forgotten learner (deleted with their rows) is in none of them. A lesson
or a week of None means every lesson or all time."""

from __future__ import annotations

import asyncio
import json
import logging
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, TypeVar

from bot.core.errors import StoreBusy
from bot.core.messages import Actor, Cohort
from bot.store.engine import Conn, Engine
from bot.store.learners import LEARNER_ID, key, of_cohort

log = logging.getLogger("studybot.store")
T = TypeVar("T")

# glossary lookups counted per cohort, week and normalised query (never who looked up what)
SCHEMA = {
    7: """
    CREATE TABLE glossary_lookups (
        platform TEXT NOT NULL,
        cohort TEXT NOT NULL,
        week TEXT NOT NULL,
        found INTEGER NOT NULL,
        query TEXT NOT NULL,
        count INTEGER NOT NULL DEFAULT 0,
        PRIMARY KEY (platform, cohort, week, found, query)
    ){without_rowid}
    """,
}
WRITE_LOOKUPS_AFTER = 2.0  # seconds a glossary lookup's count may wait to be written
_COHORT = "l.platform = ? AND l.cohort = ?"
# x: the answer or attempt; the NULL tests are typed, since PostgreSQL cannot tell the type of a bare `? IS NULL`
_IN_LESSON = " AND (CAST(? AS TEXT) IS NULL OR x.lesson_id = ?)"
_SCOPE = _IN_LESSON + " AND (CAST(? AS TEXT) IS NULL OR x.week = ?)"


def _add_lookups(c: Conn, rows: list[tuple[str, str, str, int, str, int]]) -> None:
    c.executemany("INSERT INTO glossary_lookups (platform, cohort, week, found, query, count) VALUES (?,?,?,?,?,?)"
                  " ON CONFLICT (platform, cohort, week, found, query)"
                  " DO UPDATE SET count = glossary_lookups.count + excluded.count", rows)


@dataclass(frozen=True)
class QuestionCounts:
    """A question's first answers in a cohort: how many, correct, self-graded, partly right (by the rubric, still
    so: one completed with the missing point is correct), and each wrong choice's count."""

    question_id: str
    answered: int = 0
    correct: int = 0
    self_graded: int = 0
    wrong_choices: Counter[int] = field(default_factory=Counter)
    missed: Counter[str] = field(default_factory=Counter)  # key point id -> first answers that missed it
    partly: int = 0
    hinted: int = 0  # first answers given after a hint
    hints: int = 0  # the hints they took


@dataclass(frozen=True)
class TeachbackCounts:
    prompt_id: str
    attempts: int = 0
    partly: int = 0  # attempts the rubric read as partly right
    covered: Counter[str] = field(default_factory=Counter)  # key point id -> attempts that covered it
    missed: Counter[str] = field(default_factory=Counter)


@dataclass(frozen=True)
class LearnerActivity:
    """A learner of the cohort: when they last answered or explained (None: never), and whether this week."""

    user_id: str
    display_name: str
    last: datetime | None
    this_week: bool


@dataclass(frozen=True)
class WeekCounts:
    week: str
    active: int  # learners who answered or explained something that week
    points: int


@dataclass(frozen=True)
class AnswerSummary:
    """One learner's answers to one question: the first one (which scores) and how many in all."""

    learner: Actor
    question_id: str
    attempts: int
    correct: bool
    points: int
    self_graded: bool
    first_at: datetime
    verdict: str | None = None  # the first answer's rubric verdict (a typed answer): correct, partly or not_yet
    hints: int = 0  # the hints the first answer took


def _scope(cohort: Cohort, lesson: str | None, week: str | None) -> tuple:
    return cohort.platform, cohort.id, lesson, lesson, week, week


def _questions(c: Conn, params: tuple) -> list[QuestionCounts]:
    """CROSS JOIN keeps the answers outer (PostgreSQL plans it as any join), so that SQLite reads the
    covering indexes of first answers (answers_first, answers_first_missed) in order instead of each
    learner's answers one by one."""
    totals: dict[str, list[int]] = {}
    wrong: dict[str, Counter[int]] = {}
    missed: dict[str, Counter[str]] = {}
    for r in c.execute(
            "SELECT x.question_id, x.choice, x.correct, x.self_graded, COUNT(*) AS n FROM answers x"
            " CROSS JOIN learners l WHERE l.id = x.learner_id AND x.scored = 1 AND " + _COHORT + _SCOPE +
            " GROUP BY x.question_id, x.choice, x.correct, x.self_graded", params):
        total = totals.setdefault(r["question_id"], [0, 0, 0])
        total[0] += r["n"]
        total[1] += r["n"] if r["correct"] else 0
        total[2] += r["n"] if r["self_graded"] else 0
        if r["choice"] is not None and not r["correct"]:
            wrong.setdefault(r["question_id"], Counter())[r["choice"]] += r["n"]
    for r in c.execute(
            "SELECT x.question_id, m.value AS point, COUNT(*) AS n FROM answers x"
            " CROSS JOIN learners l, json_each(x.missed) m"
            " WHERE l.id = x.learner_id AND x.scored = 1 AND x.missed IS NOT NULL AND " + _COHORT + _SCOPE +
            " GROUP BY x.question_id, m.value", params):
        missed.setdefault(r["question_id"], Counter())[r["point"]] += r["n"]
    partly = {r["question_id"]: r["n"] for r in c.execute(  # a partly right answer always misses a point
        "SELECT x.question_id, COUNT(*) AS n FROM answers x CROSS JOIN learners l"
        " WHERE l.id = x.learner_id AND x.scored = 1 AND x.missed IS NOT NULL AND x.verdict = 'partly' AND " +
        _COHORT + _SCOPE + " GROUP BY x.question_id", params)}
    hinted = {r["question_id"]: (r["n"], r["hints"]) for r in c.execute(
        "SELECT x.question_id, COUNT(*) AS n, SUM(h.hints) AS hints FROM answer_hints h"
        " JOIN answers x ON x.id = h.answer_id JOIN learners l ON l.id = x.learner_id"
        " WHERE x.scored = 1 AND " + _COHORT + _SCOPE + " GROUP BY x.question_id", params)}
    return [QuestionCounts(q, answered, correct, self_graded, wrong.get(q, Counter()), missed.get(q, Counter()),
                           partly.get(q, 0), *hinted.get(q, (0, 0)))
            for q, (answered, correct, self_graded) in totals.items()]


def _teachbacks(c: Conn, params: tuple) -> list[TeachbackCounts]:
    found: dict[str, TeachbackCounts] = {r["prompt_id"]: TeachbackCounts(r["prompt_id"], r["n"], r["partly"])
                                         for r in c.execute(
        "SELECT x.prompt_id, COUNT(*) AS n, SUM(CASE WHEN x.verdict = 'partly' THEN 1 ELSE 0 END) AS partly"
        " FROM teachbacks x JOIN learners l ON l.id = x.learner_id"
        " WHERE " + _COHORT + _SCOPE + " GROUP BY x.prompt_id", params)}
    for column in ("covered", "missed"):
        for r in c.execute(
                "SELECT x.prompt_id, m.value AS point, COUNT(*) AS n FROM teachbacks x"
                " JOIN learners l ON l.id = x.learner_id, json_each(x." + column + ") m"
                " WHERE " + _COHORT + _SCOPE + " GROUP BY x.prompt_id, m.value", params):
            getattr(found[r["prompt_id"]], column)[r["point"]] += r["n"]
    return list(found.values())


def _activity(c: Conn, cohort: Cohort, lesson: str | None, week: str) -> list[LearnerActivity]:
    latest: dict[int, tuple[str, bool]] = {}
    for table, at in (("answers", "answered_at"), ("teachbacks", "submitted_at")):
        for r in c.execute(
                "SELECT x.learner_id, MAX(x." + at + ") AS last,"
                " MAX(CASE WHEN x.week = ? THEN 1 ELSE 0 END) AS this_week FROM " + table + " x"
                " JOIN learners l ON l.id = x.learner_id WHERE " + _COHORT + _IN_LESSON +
                " GROUP BY x.learner_id", (week, cohort.platform, cohort.id, lesson, lesson)):
            last, this_week = latest.get(r["learner_id"], ("", False))
            latest[r["learner_id"]] = (max(last, r["last"]), this_week or bool(r["this_week"]))
    learners = c.execute("SELECT l.id, l.user_id, l.display_name FROM learners l WHERE " + _COHORT +
                         " ORDER BY l.display_name, l.user_id", (cohort.platform, cohort.id)).fetchall()
    return [LearnerActivity(r["user_id"], r["display_name"],
                            datetime.fromisoformat(latest[r["id"]][0]) if r["id"] in latest else None,
                            latest.get(r["id"], ("", False))[1]) for r in learners]


def _summaries(c: Conn, cohort: Cohort) -> Iterator[AnswerSummary]:
    """The cohort's `summaries`, one at a time as the rows are read."""
    hinted = {(r["user_id"], r["question_id"]): int(r["hints"]) for r in c.execute(
        "SELECT l.user_id, x.question_id, h.hints FROM answer_hints h JOIN answers x ON x.id = h.answer_id"
        " JOIN learners l ON l.id = x.learner_id WHERE x.scored = 1 AND " + _COHORT,
        (cohort.platform, cohort.id)).fetchall()}
    rows = c.execute(
        "SELECT l.platform, l.cohort, l.user_id, l.display_name, x.question_id, COUNT(*) AS attempts,"
        " MAX(x.scored * x.correct) AS correct, MAX(x.scored * x.points) AS points,"
        " MAX(x.scored * x.self_graded) AS self_graded, MIN(x.answered_at) AS first_at,"
        " MAX(CASE WHEN x.scored = 1 THEN x.verdict END) AS verdict"
        " FROM answers x JOIN learners l ON l.id = x.learner_id WHERE " + _COHORT +
        " GROUP BY l.id, x.question_id ORDER BY l.user_id, x.question_id", (cohort.platform, cohort.id))
    learners: dict[str, Actor] = {}  # one Actor per learner, not per answer: a cohort has 100,000 of these

    def learner(r: Any) -> Actor:
        found = learners.get(r["user_id"])
        if found is None:
            found = learners[r["user_id"]] = Actor(r["platform"], r["cohort"], r["user_id"], r["display_name"])
        return found

    return (AnswerSummary(learner(r), r["question_id"], r["attempts"], bool(r["correct"]), r["points"],
                          bool(r["self_graded"]), datetime.fromisoformat(r["first_at"]), r["verdict"],
                          hinted.get((r["user_id"], r["question_id"]), 0))
            for r in rows)


class Insights:
    def __init__(self, engine: Engine) -> None:
        self._engine = engine
        self._lookups: Counter[tuple[str, str, str, int, str]] = Counter()  # not written yet
        self._due: asyncio.TimerHandle | None = None
        self._writing: set[asyncio.Task[None]] = set()

    async def questions(self, cohort: Cohort, lesson: str | None = None,
                        week: str | None = None) -> list[QuestionCounts]:
        """Per question answered in the cohort: its first answers counted (one per learner)."""
        return await self._engine.aside(_questions, _scope(cohort, lesson, week))

    async def teachbacks(self, cohort: Cohort, lesson: str | None = None,
                         week: str | None = None) -> list[TeachbackCounts]:
        """Per teach-back prompt: every attempt, and the key points they covered and missed."""
        return await self._engine.aside(_teachbacks, _scope(cohort, lesson, week))

    async def activity(self, cohort: Cohort, week: str, lesson: str | None = None) -> list[LearnerActivity]:
        """Every learner of the cohort with their last answer or attempt (in the lesson) and whether it
        fell in `week`; by display name."""
        return await self._engine.aside(_activity, cohort, lesson, week)

    async def weeks(self, cohort: Cohort, lesson: str | None = None) -> list[WeekCounts]:
        """Per week with any activity: learners who answered or explained, and the points earned."""
        rows = await self._engine.aside(lambda c: c.execute(
            "SELECT x.week, COUNT(DISTINCT x.learner_id) AS active, SUM(x.points) AS points FROM"
            " (SELECT learner_id, lesson_id, week, points FROM answers"
            "  UNION ALL SELECT learner_id, lesson_id, week, points FROM teachbacks) x"
            " JOIN learners l ON l.id = x.learner_id WHERE " + _COHORT + _IN_LESSON +
            " GROUP BY x.week ORDER BY x.week", (cohort.platform, cohort.id, lesson, lesson)).fetchall())
        return [WeekCounts(r["week"], r["active"], r["points"] or 0) for r in rows]

    async def summaries(self, cohort: Cohort) -> list[AnswerSummary]:
        """Per learner and question answered: the first answer and the number of answers."""
        return await self._engine.aside(lambda c: list(_summaries(c, cohort)))

    async def built(self, cohort: Cohort, build: Callable[[list[Actor], Iterator[AnswerSummary]], T]) -> T:
        """build(the cohort's learners, their `summaries` as they are read, in the learners' order) run beside
        the reads, on their connection and thread (an export): its work grows with the cohort, and the rows
        never reach the event loop."""
        return await self._engine.aside(lambda c: build(of_cohort(c, cohort), _summaries(c, cohort)))

    def looked_up(self, cohort: Cohort, week: str, query: str, found: bool) -> None:
        """Count one glossary lookup: the term found (its name) or the normalised query the glossary
        lacks. Counts are written behind the reply, every WRITE_LOOKUPS_AFTER seconds in one write
        (a crash may lose the last moment's counts, never anything a learner was told was recorded)."""
        self._lookups[(cohort.platform, cohort.id, week, int(found), query)] += 1
        if self._due is None:
            self._due = asyncio.get_running_loop().call_later(WRITE_LOOKUPS_AFTER, self._write_behind)

    async def write_lookups(self) -> None:
        """Write the lookups counted so far (before they are read, and at close)."""
        if self._due is not None:
            self._due.cancel()
            self._due = None
        while self._lookups:
            counts, self._lookups = self._lookups, Counter()
            await self._engine.write(_add_lookups, [(*where, n) for where, n in counts.items()])

    def _write_behind(self) -> None:
        self._due = None
        task = asyncio.get_running_loop().create_task(self._write_quietly())
        self._writing.add(task)
        task.add_done_callback(self._writing.discard)

    async def _write_quietly(self) -> None:
        try:
            await self.write_lookups()
        except StoreBusy:
            log.warning("glossary lookup counts skipped: the database is busy")
        except Exception:
            log.exception("glossary lookup counts not written")

    async def lookups(self, cohort: Cohort, found: bool, week: str | None = None,
                      limit: int = 10) -> list[tuple[str, int]]:
        """The terms looked up most (found) or the queries the glossary lacks most, with their counts."""
        await self.write_lookups()
        rows = await self._engine.read(
            "SELECT query, SUM(count) AS n FROM glossary_lookups WHERE platform = ? AND cohort = ? AND found = ?"
            " AND (CAST(? AS TEXT) IS NULL OR week = ?) GROUP BY query ORDER BY n DESC, query LIMIT ?",
            (cohort.platform, cohort.id, int(found), week, week, limit))
        return [(r["query"], r["n"]) for r in rows]

    # ------------------------------------------------------------ a learner's own

    async def trend(self, actor: Actor, weeks: tuple[str, ...]) -> dict[tuple[str, str], tuple[int, int]]:
        """(lesson, week) -> (answers, correct) for the learner's answers in those weeks, practice included."""
        rows = await self._engine.read(
            "SELECT lesson_id, week, COUNT(*) AS n, SUM(correct) AS n_right FROM answers WHERE learner_id = " +
            LEARNER_ID + " AND week IN (SELECT value FROM json_each(?)) GROUP BY lesson_id, week",
            (*key(actor), json.dumps(list(weeks))))
        return {(r["lesson_id"], r["week"]): (r["n"], r["n_right"]) for r in rows}

    async def missed(self, actor: Actor) -> Counter[tuple[str, str]]:
        """(question or teach-back prompt id, key point id) -> how often the learner missed it: in answers graded
        wrong (a correct one's other points are only worth knowing) and in teach-backs (whose feedback names
        every point missed)."""
        rows = await self._engine.read(
            "SELECT a.question_id AS item, m.value AS point, COUNT(*) AS n FROM answers a, json_each(a.missed) m"
            " WHERE a.missed IS NOT NULL AND a.correct = 0 AND a.learner_id = " + LEARNER_ID + " GROUP BY 1, 2"
            " UNION ALL SELECT t.prompt_id, m.value, COUNT(*) FROM teachbacks t, json_each(t.missed) m"
            " WHERE t.learner_id = " + LEARNER_ID + " GROUP BY 1, 2", (*key(actor), *key(actor)))
        return Counter({(r["item"], r["point"]): r["n"] for r in rows})
