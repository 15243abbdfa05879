"""The one SQLite file: learners, answers, scores, rounds, tokens, timers, teach-backs, cards.

Each domain operation is one transaction run as one function on aiosqlite's worker
thread, so an answer costs a single thread hop and is committed before the method
returns. WAL with synchronous=NORMAL survives a killed process; the schema moves
forward by `PRAGMA user_version`.
"""

from __future__ import annotations

import asyncio
import json
import secrets
import sqlite3
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

import aiosqlite

from bot.clock import Clock
from bot.errors import StoreBusy, StudyError
from bot.messages import Actor, MessageRef, Place

T = TypeVar("T")
PROMPT_MEMORY = 100_000  # prompts kept in memory (about 20 MB at most)
CardReview = Callable[[str | None], tuple[str, datetime]]  # a card's state (None: new) -> (new state, due)

MIGRATIONS: tuple[str, ...] = (
    # 1: the first schema
    """
    CREATE TABLE learners (
        id INTEGER PRIMARY KEY,
        platform TEXT NOT NULL,
        cohort TEXT NOT NULL,
        user_id TEXT NOT NULL,
        display_name TEXT NOT NULL DEFAULT '',
        points INTEGER NOT NULL DEFAULT 0,
        last_seen TEXT NOT NULL,
        UNIQUE (platform, cohort, user_id)
    );
    CREATE INDEX learners_board ON learners (platform, cohort, points DESC);
    CREATE INDEX learners_by_user ON learners (platform, user_id, last_seen);

    CREATE TABLE rounds (
        id INTEGER PRIMARY KEY,
        platform TEXT NOT NULL,
        cohort TEXT NOT NULL,
        channel_id TEXT NOT NULL,
        lesson_id TEXT NOT NULL,
        starter_id INTEGER REFERENCES learners (id) ON DELETE SET NULL,
        question_ids TEXT NOT NULL,
        position INTEGER NOT NULL DEFAULT 0,
        state TEXT NOT NULL DEFAULT 'open',
        started_at TEXT NOT NULL,
        ended_at TEXT
    );
    CREATE INDEX rounds_open ON rounds (platform, cohort, channel_id, state);

    CREATE TABLE prompts (
        id TEXT PRIMARY KEY,
        kind TEXT NOT NULL,
        platform TEXT NOT NULL,
        cohort TEXT NOT NULL,
        owner_id INTEGER REFERENCES learners (id) ON DELETE CASCADE,
        lesson_id TEXT,
        item_id TEXT,
        mode TEXT,
        round_id INTEGER REFERENCES rounds (id),
        data TEXT NOT NULL DEFAULT '{}',
        created_at TEXT NOT NULL,
        closed_at TEXT
    );

    CREATE TABLE prompt_uses (
        prompt_id TEXT NOT NULL REFERENCES prompts (id) ON DELETE CASCADE,
        learner_id INTEGER NOT NULL REFERENCES learners (id) ON DELETE CASCADE,
        used_at TEXT NOT NULL,
        PRIMARY KEY (prompt_id, learner_id)
    ) WITHOUT ROWID;

    CREATE TABLE answers (
        id INTEGER PRIMARY KEY,
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
    CREATE INDEX answers_by_learner ON answers (learner_id, question_id);

    CREATE TABLE weekly_scores (
        learner_id INTEGER NOT NULL REFERENCES learners (id) ON DELETE CASCADE,
        week TEXT NOT NULL,
        platform TEXT NOT NULL,
        cohort TEXT NOT NULL,
        points INTEGER NOT NULL DEFAULT 0,
        PRIMARY KEY (learner_id, week)
    ) WITHOUT ROWID;
    CREATE INDEX weekly_board ON weekly_scores (platform, cohort, week, points DESC);

    CREATE TABLE teachbacks (
        id INTEGER PRIMARY KEY,
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
    CREATE INDEX teachbacks_by_learner ON teachbacks (learner_id, prompt_id);

    CREATE TABLE timers (
        key TEXT PRIMARY KEY,
        due_at TEXT NOT NULL,
        data TEXT NOT NULL DEFAULT '{}'
    );
    CREATE INDEX timers_due ON timers (due_at);

    CREATE TABLE messages (
        tag TEXT PRIMARY KEY,
        platform TEXT NOT NULL,
        channel_id TEXT NOT NULL,
        message_id TEXT NOT NULL
    );
    """,
    # 2: spaced-repetition cards, reminder opt-ins and the scheduler's heartbeat
    """
    CREATE TABLE cards (
        learner_id INTEGER NOT NULL REFERENCES learners (id) ON DELETE CASCADE,
        question_id TEXT NOT NULL,
        lesson_id TEXT NOT NULL,
        state TEXT NOT NULL,
        due TEXT NOT NULL,
        PRIMARY KEY (learner_id, question_id)
    ) WITHOUT ROWID;
    CREATE INDEX cards_due ON cards (learner_id, due);
    ALTER TABLE learners ADD COLUMN remind INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE learners ADD COLUMN reminded_on TEXT;
    CREATE TABLE heartbeat (id INTEGER PRIMARY KEY CHECK (id = 1), at TEXT NOT NULL);
    """,
)
SCHEMA_VERSION = len(MIGRATIONS)


@dataclass(frozen=True)
class PromptRow:
    """What a button or form token refers to."""

    id: str
    kind: str
    platform: str
    cohort: str
    owner_id: int | None
    lesson_id: str | None
    item_id: str | None
    mode: str | None
    round_id: int | None
    data: dict
    closed: bool
    created_at: datetime


@dataclass(frozen=True)
class Recorded:
    """The outcome of an answer: `status` is 'recorded', 'already' or 'closed'.

    `card_before` is the review card's state before this answer rated it (None: a new card)."""

    status: str
    answer_id: int | None = None
    scored: bool = False
    card_before: str | None = None


@dataclass(frozen=True)
class RoundRow:
    id: int
    platform: str
    cohort: str
    channel_id: str
    lesson_id: str
    starter_id: int | None
    question_ids: tuple[str, ...]
    position: int
    state: str

    @property
    def place(self) -> Place:
        return Place(self.platform, self.cohort, self.channel_id)


@dataclass(frozen=True)
class Standing:
    rank: int
    user_id: str
    display_name: str
    points: int


@dataclass(frozen=True)
class AnswerRow:
    question_id: str
    correct: bool
    self_graded: bool


def new_token() -> str:
    """A short opaque id: fits Slack action ids and Discord custom_ids with room to spare."""
    return secrets.token_urlsafe(9)


def _iso(moment: datetime) -> str:
    """Stored times are UTC in one fixed format, so comparing the text compares the times."""
    return moment.astimezone(UTC).isoformat(timespec="microseconds")


class Store:
    def __init__(self, db: aiosqlite.Connection, clock: Clock) -> None:
        self._db = db
        self.clock = clock
        self._prompts: dict[str, PromptRow] = {}  # tokens resolve on every click; rows never change but closing
        self._pending: list[tuple[Callable[..., Any], tuple, asyncio.Future]] = []
        self._flushing: asyncio.Task | None = None

    @classmethod
    async def open(cls, path: Path | str, clock: Clock) -> Store:
        path = Path(path)
        if str(path) != ":memory:" and not path.parent.is_dir():
            raise StoreUnavailable(f"the database folder {path.parent} does not exist; create it or set STUDYBOT_DB")
        try:
            sqlite3.connect(path).close()  # fails here, before aiosqlite starts a thread that would outlive the loop
            db = await aiosqlite.connect(path, isolation_level=None, timeout=5.0)
        except sqlite3.Error as exc:
            raise StoreUnavailable(f"cannot open the database {path}: {exc}; make {path.parent} writable by this "
                                   "user, or set STUDYBOT_DB to a file in a folder it can write") from exc
        db.row_factory = sqlite3.Row
        store = cls(db, clock)
        try:
            await store._run(_prepare)
        except sqlite3.Error as exc:
            await db.close()
            raise StoreUnavailable(f"cannot use the database {path}: {exc}; make it and {path.parent} writable by "
                                   "this user, or set STUDYBOT_DB to another file") from exc
        return store

    async def close(self) -> None:
        if self._flushing is not None:
            await self._flushing
        await self._db.close()

    async def _run(self, fn: Callable[..., T], *args: Any) -> T:
        """Run fn(sqlite3.Connection, *args) on the connection's thread: one hop."""
        return await self._db._execute(fn, self._db._conn, *args)

    async def _write(self, fn: Callable[..., T], *args: Any) -> T:
        """Run fn(connection, *args) in a transaction and return once it has committed.

        Writes that arrive together share one transaction (group commit), each in its own
        savepoint so that one failing write does not undo the others. A locked or full
        database is StoreBusy: nothing of that batch was committed.
        """
        future: asyncio.Future = asyncio.get_running_loop().create_future()
        self._pending.append((fn, args, future))
        if self._flushing is None:
            self._flushing = asyncio.create_task(self._flush())
        try:
            return await future
        except sqlite3.OperationalError as exc:
            text = str(exc).lower()
            if "locked" in text or "busy" in text or "full" in text or "disk" in text:
                raise StoreBusy() from exc
            raise

    async def _flush(self) -> None:
        try:
            while self._pending:
                batch, self._pending = self._pending, []
                try:
                    outcomes = await self._run(_commit_together, [(fn, args) for fn, args, _ in batch])
                except BaseException as exc:  # nothing of the batch was committed
                    outcomes = [(False, exc)] * len(batch)
                for (_, _, future), (ok, value) in zip(batch, outcomes, strict=True):
                    if not future.done():
                        future.set_result(value) if ok else future.set_exception(value)
        finally:
            self._flushing = None

    async def _read(self, sql: str, params: Iterable[Any] = ()) -> list[sqlite3.Row]:
        return await self._run(lambda c: c.execute(sql, tuple(params)).fetchall())

    # ------------------------------------------------------------ learners

    async def learner_id(self, actor: Actor) -> int:
        return await self._write(_learner, actor, _iso(self.clock.now()))

    async def last_cohort(self, platform: str, user_id: str) -> str | None:
        rows = await self._read(
            "SELECT cohort FROM learners WHERE platform = ? AND user_id = ? ORDER BY last_seen DESC LIMIT 1",
            (platform, user_id),
        )
        return rows[0]["cohort"] if rows else None

    async def forget(self, actor: Actor) -> bool:
        def run(c: sqlite3.Connection) -> bool:
            row = c.execute(
                "SELECT id FROM learners WHERE platform = ? AND cohort = ? AND user_id = ?",
                (actor.platform, actor.cohort, actor.user_id),
            ).fetchone()
            if row is None:
                return False
            c.execute("DELETE FROM learners WHERE id = ?", (row["id"],))  # cascades
            return True

        self._prompts.clear()  # some of them were the learner's
        return await self._write(run)

    # ------------------------------------------------------------ prompts and tokens

    async def new_prompt(
        self,
        kind: str,
        place: Place,
        owner: Actor | None = None,
        *,
        lesson_id: str | None = None,
        item_id: str | None = None,
        mode: str | None = None,
        round_id: int | None = None,
        data: dict | None = None,
    ) -> str:
        def run(c: sqlite3.Connection) -> PromptRow:
            owner_id = _learner(c, owner, iso) if owner else None
            row = PromptRow(new_token(), kind, place.platform, place.cohort, owner_id, lesson_id, item_id, mode,
                            round_id, data or {}, False, now)
            c.execute(
                "INSERT INTO prompts (id, kind, platform, cohort, owner_id, lesson_id, item_id, mode,"
                " round_id, data, created_at) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                (row.id, kind, place.platform, place.cohort, owner_id, lesson_id, item_id, mode,
                 round_id, json.dumps(row.data), iso),
            )
            return row

        now = self.clock.now()
        iso = _iso(now)
        row = await self._write(run)
        self._remember(row)
        return row.id

    async def prompt(self, prompt_id: str) -> PromptRow | None:
        """What a token refers to, from memory when this process made or read it before."""
        if (known := self._prompts.get(prompt_id)) is not None:
            return known
        row = await self._write(lambda c: c.execute("SELECT * FROM prompts WHERE id = ?", (prompt_id,)).fetchone())
        if row is None:
            return None
        self._remember(prompt := _prompt_row(row))
        return prompt

    def _remember(self, prompt: PromptRow) -> None:
        self._prompts[prompt.id] = prompt
        if len(self._prompts) > PROMPT_MEMORY:
            del self._prompts[next(iter(self._prompts))]  # the oldest

    async def spend(self, prompt_id: str, actor: Actor) -> bool:
        """Spend a prompt for a learner; False when they already had."""

        def run(c: sqlite3.Connection) -> bool:
            learner = _learner(c, actor, now)
            cur = c.execute(
                "INSERT OR IGNORE INTO prompt_uses (prompt_id, learner_id, used_at) VALUES (?,?,?)",
                (prompt_id, learner, now),
            )
            return cur.rowcount == 1

        now = _iso(self.clock.now())
        return await self._write(run)

    # ------------------------------------------------------------ answers and scores

    async def record_answer(
        self,
        prompt_id: str,
        actor: Actor,
        *,
        lesson_id: str,
        question_id: str,
        mode: str,
        correct: bool,
        week: str,
        choice: int | None = None,
        review: CardReview | None = None,
    ) -> Recorded:
        """Record an answer, spend the prompt for this learner and review their card, in one transaction.

        The first answer a learner gives to a question scores; later ones are practice.
        """
        now = _iso(self.clock.now())
        return await self._write(
            _record_answer, prompt_id, actor, lesson_id, question_id, mode, correct, week, choice, now, review
        )

    async def self_grade(self, answer_id: int, correct: bool) -> bool:
        """Replace an answer's grade with the learner's own; False if it was gone."""

        def run(c: sqlite3.Connection) -> bool:
            row = c.execute(
                "SELECT a.*, l.platform, l.cohort FROM answers a JOIN learners l ON l.id = a.learner_id"
                " WHERE a.id = ?",
                (answer_id,),
            ).fetchone()
            if row is None:
                return False
            points = int(correct) if row["scored"] else 0
            delta = points - row["points"]
            c.execute(
                "UPDATE answers SET correct = ?, points = ?, self_graded = 1 WHERE id = ?",
                (int(correct), points, answer_id),
            )
            if delta:
                _add_points(c, row["learner_id"], row["platform"], row["cohort"], row["week"], delta)
            return True

        return await self._write(run)

    async def answered_questions(self, actor: Actor, lesson_id: str) -> set[str]:
        rows = await self._read(
            "SELECT DISTINCT a.question_id FROM answers a JOIN learners l ON l.id = a.learner_id"
            " WHERE l.platform = ? AND l.cohort = ? AND l.user_id = ? AND a.lesson_id = ?",
            (actor.platform, actor.cohort, actor.user_id, lesson_id),
        )
        return {r["question_id"] for r in rows}

    async def scored_answers(self, learner_id: int, lesson_id: str | None = None) -> list[AnswerRow]:
        """Each question's scoring answer for a learner, in the order given."""
        sql = "SELECT question_id, correct, self_graded FROM answers WHERE learner_id = ? AND scored = 1"
        params: tuple = (learner_id,)
        if lesson_id:
            sql += " AND lesson_id = ?"
            params += (lesson_id,)
        rows = await self._read(sql, params)
        return [AnswerRow(r["question_id"], bool(r["correct"]), bool(r["self_graded"])) for r in rows]

    async def find_learner(self, actor: Actor) -> int | None:
        rows = await self._read(
            "SELECT id FROM learners WHERE platform = ? AND cohort = ? AND user_id = ?",
            (actor.platform, actor.cohort, actor.user_id),
        )
        return rows[0]["id"] if rows else None

    async def cohort_learners(self, platform: str, cohort: str) -> list[sqlite3.Row]:
        return await self._read(
            "SELECT id, user_id, display_name FROM learners WHERE platform = ? AND cohort = ? ORDER BY user_id",
            (platform, cohort),
        )

    async def tally(self, prompt_id: str) -> dict[str, int]:
        """How many answered a round's question: per choice index and per correctness."""
        rows = await self._read(
            "SELECT choice, correct, COUNT(*) AS n FROM answers WHERE prompt_id = ? GROUP BY choice, correct",
            (prompt_id,),
        )
        counts: dict[str, int] = {"answers": 0, "correct": 0}
        for r in rows:
            counts["answers"] += r["n"]
            counts["correct"] += r["n"] if r["correct"] else 0
            if r["choice"] is not None:
                counts[f"choice:{r['choice']}"] = counts.get(f"choice:{r['choice']}", 0) + r["n"]
        return counts

    # ------------------------------------------------------------ leaderboards

    async def leaderboard(self, platform: str, cohort: str, week: str | None, limit: int = 10) -> list[Standing]:
        """The top of a cohort's board, for one week or (week None) all time; competition ranks."""
        if week:
            sql = (
                "SELECT l.user_id, l.display_name, w.points FROM weekly_scores w"
                " JOIN learners l ON l.id = w.learner_id"
                " WHERE w.platform = ? AND w.cohort = ? AND w.week = ? AND w.points > 0"
                " ORDER BY w.points DESC, l.display_name LIMIT ?"
            )
            params: tuple = (platform, cohort, week, limit)
        else:
            sql = (
                "SELECT user_id, display_name, points FROM learners"
                " WHERE platform = ? AND cohort = ? AND points > 0"
                " ORDER BY points DESC, display_name LIMIT ?"
            )
            params = (platform, cohort, limit)
        rows = await self._read(sql, params)
        standings, rank = [], 0
        for i, r in enumerate(rows):
            if i == 0 or r["points"] != rows[i - 1]["points"]:
                rank = i + 1
            standings.append(Standing(rank, r["user_id"], r["display_name"], r["points"]))
        return standings

    async def standing(self, actor: Actor, week: str | None) -> Standing | None:
        """One learner's rank: 1 + how many have more points (standard competition rank)."""

        def run(c: sqlite3.Connection) -> Standing | None:
            if week:
                row = c.execute(
                    "SELECT w.points FROM weekly_scores w JOIN learners l ON l.id = w.learner_id"
                    " WHERE l.platform = ? AND l.cohort = ? AND l.user_id = ? AND w.week = ?",
                    (actor.platform, actor.cohort, actor.user_id, week),
                ).fetchone()
                if not row or row["points"] <= 0:
                    return None
                above = c.execute(
                    "SELECT COUNT(*) FROM weekly_scores WHERE platform = ? AND cohort = ? AND week = ?"
                    " AND points > ?",
                    (actor.platform, actor.cohort, week, row["points"]),
                ).fetchone()[0]
            else:
                row = c.execute(
                    "SELECT points FROM learners WHERE platform = ? AND cohort = ? AND user_id = ?",
                    (actor.platform, actor.cohort, actor.user_id),
                ).fetchone()
                if not row or row["points"] <= 0:
                    return None
                above = c.execute(
                    "SELECT COUNT(*) FROM learners WHERE platform = ? AND cohort = ? AND points > ?",
                    (actor.platform, actor.cohort, row["points"]),
                ).fetchone()[0]
            return Standing(above + 1, actor.user_id, actor.display_name, row["points"])

        return await self._run(run)

    # ------------------------------------------------------------ teach-backs

    async def record_teachback(
        self, actor: Actor, *, lesson_id: str, prompt_id: str, explanation: str,
        covered: Iterable[str], missed: Iterable[str], earns_point: bool, week: str,
    ) -> int:
        """Store an attempt; it scores a point only the first time the prompt is passed."""

        def run(c: sqlite3.Connection) -> int:
            learner = _learner(c, actor, now)
            passed_before = c.execute(
                "SELECT 1 FROM teachbacks WHERE learner_id = ? AND prompt_id = ? AND points > 0",
                (learner, prompt_id),
            ).fetchone()
            points = 1 if earns_point and not passed_before else 0
            c.execute(
                "INSERT INTO teachbacks (learner_id, lesson_id, prompt_id, explanation, covered, missed,"
                " points, week, submitted_at) VALUES (?,?,?,?,?,?,?,?,?)",
                (learner, lesson_id, prompt_id, explanation, json.dumps(list(covered)),
                 json.dumps(list(missed)), points, week, now),
            )
            if points:
                _add_points(c, learner, actor.platform, actor.cohort, week, points)
            return points

        now = _iso(self.clock.now())
        return await self._write(run)

    async def teachback_counts(self, learner_id: int) -> dict[str, tuple[int, int]]:
        """Per lesson: (attempts, points)."""
        rows = await self._read(
            "SELECT lesson_id, COUNT(*) AS n, SUM(points) AS p FROM teachbacks WHERE learner_id = ?"
            " GROUP BY lesson_id",
            (learner_id,),
        )
        return {r["lesson_id"]: (r["n"], r["p"] or 0) for r in rows}

    async def teachback_attempts(self, learner_id: int) -> dict[str, int]:
        rows = await self._read(
            "SELECT prompt_id, COUNT(*) AS n FROM teachbacks WHERE learner_id = ? GROUP BY prompt_id",
            (learner_id,),
        )
        return {r["prompt_id"]: r["n"] for r in rows}

    # ------------------------------------------------------------ rounds

    async def open_round(self, place: Place, starter: Actor, lesson_id: str, question_ids: list[str]) -> int:
        def run(c: sqlite3.Connection) -> int:
            busy = c.execute(
                "SELECT 1 FROM rounds WHERE platform = ? AND cohort = ? AND channel_id = ? AND state = 'open'",
                (place.platform, place.cohort, place.channel_id),
            ).fetchone()
            if busy:
                raise StudyError("A round is already running in this channel. Answer it, or wait for it to end.")
            starter_id = _learner(c, starter, now)
            return c.execute(
                "INSERT INTO rounds (platform, cohort, channel_id, lesson_id, starter_id, question_ids,"
                " started_at) VALUES (?,?,?,?,?,?,?)",
                (place.platform, place.cohort, place.channel_id, lesson_id, starter_id,
                 json.dumps(question_ids), now),
            ).lastrowid

        now = _iso(self.clock.now())
        return await self._write(run)

    async def round(self, round_id: int) -> RoundRow | None:
        rows = await self._read("SELECT * FROM rounds WHERE id = ?", (round_id,))
        if not rows:
            return None
        r = rows[0]
        return RoundRow(r["id"], r["platform"], r["cohort"], r["channel_id"], r["lesson_id"], r["starter_id"],
                        tuple(json.loads(r["question_ids"])), r["position"], r["state"])

    async def advance_round(self, round_id: int, position: int, prompt_id: str) -> bool:
        """Close question `position` and move on, once: False if it was already closed."""

        def run(c: sqlite3.Connection) -> bool:
            row = c.execute("SELECT position, question_ids, state FROM rounds WHERE id = ?", (round_id,)).fetchone()
            if row is None or row["state"] != "open" or row["position"] != position:
                return False
            last = position + 1 >= len(json.loads(row["question_ids"]))
            c.execute(
                "UPDATE rounds SET position = ?, state = ?, ended_at = ? WHERE id = ?",
                (position + 1, "done" if last else "open", now if last else None, round_id),
            )
            c.execute("UPDATE prompts SET closed_at = ? WHERE id = ? AND closed_at IS NULL", (now, prompt_id))
            return True

        now = _iso(self.clock.now())
        advanced = await self._write(run)
        if (known := self._prompts.get(prompt_id)) is not None:
            self._prompts[prompt_id] = replace(known, closed=True)
        return advanced

    async def round_prompt(self, round_id: int, position: int) -> str | None:
        rows = await self._read(
            "SELECT id FROM prompts WHERE round_id = ? AND kind = 'question' AND json_extract(data, '$.position') = ?",
            (round_id, position),
        )
        return rows[0]["id"] if rows else None

    async def round_scores(self, round_id: int) -> list[tuple[str, int, int]]:
        """(display name, correct, answered) per learner in a round, best first."""
        rows = await self._read(
            "SELECT l.display_name, l.user_id, SUM(a.correct) AS right, COUNT(*) AS n"
            " FROM answers a JOIN prompts p ON p.id = a.prompt_id JOIN learners l ON l.id = a.learner_id"
            " WHERE p.round_id = ? GROUP BY a.learner_id ORDER BY right DESC, l.display_name",
            (round_id,),
        )
        return [(r["display_name"] or r["user_id"], r["right"], r["n"]) for r in rows]

    # ------------------------------------------------------------ timers and posted messages

    async def set_timer(self, key: str, due: datetime, data: dict | None = None) -> None:
        await self._write(
            lambda c: c.execute(
                "INSERT OR REPLACE INTO timers (key, due_at, data) VALUES (?,?,?)",
                (key, _iso(due), json.dumps(data or {})),
            )
        )

    async def due_timers(self, now: datetime) -> list[tuple[str, dict]]:
        rows = await self._read("SELECT key, data FROM timers WHERE due_at <= ? ORDER BY due_at", (_iso(now),))
        return [(r["key"], json.loads(r["data"])) for r in rows]

    async def delete_timer(self, key: str, fired_at: datetime | None = None) -> None:
        """Delete a timer; with `fired_at`, only if it was not re-armed for later meanwhile."""
        if fired_at is None:
            await self._write(lambda c: c.execute("DELETE FROM timers WHERE key = ?", (key,)))
        else:
            await self._write(lambda c: c.execute("DELETE FROM timers WHERE key = ? AND due_at <= ?",
                                                  (key, _iso(fired_at))))

    async def arm_timer(self, key: str, due: datetime) -> None:
        """Set a timer to `due`, unless it is already past due: that one still has to fire."""
        await self._write(lambda c: c.execute(
            "INSERT INTO timers (key, due_at) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET due_at = excluded.due_at"
            " WHERE timers.due_at > ?", (key, _iso(due), _iso(self.clock.now()))))

    async def ensure_timer(self, key: str, due: datetime) -> None:
        """Create a timer unless one with that key exists."""
        await self._write(lambda c: c.execute("INSERT OR IGNORE INTO timers (key, due_at) VALUES (?, ?)",
                                              (key, _iso(due))))

    # ------------------------------------------------------------ review cards

    async def update_card(self, actor: Actor, question_id: str, lesson_id: str, review: CardReview,
                          base: str | None = None) -> str | None:
        """Apply `review` to a learner's card in one transaction; returns the state before it.

        With `base`, review that state rather than the stored one ('' for a new card)."""
        now = _iso(self.clock.now())
        return await self._write(
            lambda c: _review_card(c, _learner(c, actor, now), question_id, lesson_id, review, base)
        )

    async def due_cards(self, learner_id: int, until: datetime, lesson_id: str | None = None,
                        limit: int = 1) -> list[str]:
        """Question ids of the cards due by `until`, most overdue first: one indexed range."""
        sql = "SELECT question_id FROM cards WHERE learner_id = ? AND due <= ?"
        params: tuple = (learner_id, _iso(until))
        if lesson_id:
            sql += " AND lesson_id = ?"
            params += (lesson_id,)
        rows = await self._read(sql + " ORDER BY due LIMIT ?", params + (limit,))
        return [r["question_id"] for r in rows]

    async def next_due(self, learner_id: int, lesson_id: str) -> datetime | None:
        rows = await self._read("SELECT MIN(due) AS due FROM cards WHERE learner_id = ? AND lesson_id = ?",
                                (learner_id, lesson_id))
        return datetime.fromisoformat(rows[0]["due"]) if rows and rows[0]["due"] else None

    async def cards(self, learner_id: int) -> list[sqlite3.Row]:
        return await self._read("SELECT question_id, lesson_id, state, due FROM cards WHERE learner_id = ?",
                                (learner_id,))

    async def set_remind(self, actor: Actor, on: bool) -> None:
        def run(c: sqlite3.Connection) -> None:
            c.execute("UPDATE learners SET remind = ? WHERE id = ?", (int(on), _learner(c, actor, now)))

        now = _iso(self.clock.now())
        await self._write(run)

    async def claim_reminders(self, until: datetime, local_day: Callable[[str], str | None]) -> list[Actor]:
        """Opted-in learners with cards due and no reminder yet on their local day; marks them reminded."""

        def run(c: sqlite3.Connection) -> list[Actor]:
            rows = c.execute(
                "SELECT l.id, l.platform, l.cohort, l.user_id, l.display_name, l.reminded_on FROM learners l"
                " WHERE l.remind = 1 AND EXISTS (SELECT 1 FROM cards WHERE learner_id = l.id AND due <= ?)",
                (_iso(until),),
            ).fetchall()
            claimed = []
            for r in rows:
                today = local_day(r["cohort"])
                if today is not None and r["reminded_on"] != today:
                    c.execute("UPDATE learners SET reminded_on = ? WHERE id = ?", (today, r["id"]))
                    claimed.append(Actor(r["platform"], r["cohort"], r["user_id"], r["display_name"]))
            return claimed

        return await self._write(run)

    async def remember_message(self, tag: str, ref: MessageRef) -> None:
        await self._write(
            lambda c: c.execute(
                "INSERT OR REPLACE INTO messages (tag, platform, channel_id, message_id) VALUES (?,?,?,?)",
                (tag, ref.platform, ref.channel_id, ref.message_id),
            )
        )

    async def message(self, tag: str) -> MessageRef | None:
        rows = await self._read("SELECT * FROM messages WHERE tag = ?", (tag,))
        return MessageRef(rows[0]["platform"], rows[0]["channel_id"], rows[0]["message_id"]) if rows else None

    # ------------------------------------------------------------ maintenance

    async def beat(self) -> None:
        """The scheduler is alive: `studybot health` reads this."""
        await self._write(lambda c: c.execute("INSERT OR REPLACE INTO heartbeat (id, at) VALUES (1, ?)",
                                              (_iso(self.clock.now()),)))

    async def last_beat(self) -> datetime | None:
        rows = await self._read("SELECT at FROM heartbeat WHERE id = 1")
        return datetime.fromisoformat(rows[0]["at"]) if rows else None

    async def backup(self, target: Path | str) -> None:
        """A consistent copy of the whole database, taken while it is in use."""
        async with aiosqlite.connect(target) as dest:
            await self._db.backup(dest)

    async def count(self, table: str) -> int:
        if table not in {"answers", "learners", "teachbacks", "prompt_uses", "weekly_scores", "cards", "timers"}:
            raise ValueError(table)
        rows = await self._read(f"SELECT COUNT(*) AS n FROM {table}")
        return rows[0]["n"]


class StoreUnavailable(Exception):
    """The database cannot be opened or used; the message says what to fix."""


# ---------------------------------------------------------------- functions run on the worker thread


def _prepare(c: sqlite3.Connection) -> None:
    c.execute("PRAGMA journal_mode = WAL")
    c.execute("PRAGMA synchronous = NORMAL")
    c.execute("PRAGMA foreign_keys = ON")
    c.execute("PRAGMA busy_timeout = 5000")
    migrate(c)
    c.execute("DELETE FROM heartbeat WHERE 0")  # a read-only file fails here, at start, not at the first answer


def migrate(c: sqlite3.Connection, target: int = SCHEMA_VERSION) -> int:
    """Apply the migrations after the file's user_version, each in its own transaction."""
    version = c.execute("PRAGMA user_version").fetchone()[0]
    if version > SCHEMA_VERSION:
        raise sqlite3.DatabaseError(f"schema version {version} is newer than this studybot ({SCHEMA_VERSION})")
    for number in range(version + 1, target + 1):
        c.execute("BEGIN IMMEDIATE")
        try:
            for statement in MIGRATIONS[number - 1].split(";"):
                if statement.strip():
                    c.execute(statement)
            c.execute(f"PRAGMA user_version = {number}")
            c.execute("COMMIT")
        except BaseException:
            c.execute("ROLLBACK")
            raise
    return target


def _commit_together(c: sqlite3.Connection, writes: list[tuple[Callable[..., Any], tuple]]) -> list[tuple[bool, Any]]:
    """Run each write in a savepoint of one IMMEDIATE transaction, then commit them all."""
    outcomes: list[tuple[bool, Any]] = []
    c.execute("BEGIN IMMEDIATE")
    try:
        for fn, args in writes:
            c.execute("SAVEPOINT write")
            try:
                outcomes.append((True, fn(c, *args)))
            except Exception as exc:  # this write is undone; the others stand
                if not c.in_transaction:  # SQLITE_FULL (and the like) rolled the whole transaction back
                    raise
                c.execute("ROLLBACK TO write")
                outcomes.append((False, exc))
            c.execute("RELEASE write")
        c.execute("COMMIT")
    except BaseException:
        if c.in_transaction:
            c.execute("ROLLBACK")
        raise
    return outcomes


def _learner(c: sqlite3.Connection, actor: Actor, now: str) -> int:
    row = c.execute(
        "INSERT INTO learners (platform, cohort, user_id, display_name, last_seen) VALUES (?,?,?,?,?)"
        " ON CONFLICT (platform, cohort, user_id) DO UPDATE SET"
        " display_name = CASE WHEN excluded.display_name != '' THEN excluded.display_name ELSE display_name END,"
        " last_seen = excluded.last_seen RETURNING id",
        (actor.platform, actor.cohort, actor.user_id, actor.display_name[:80], now),
    ).fetchone()
    return row[0]


def _add_points(c: sqlite3.Connection, learner: int, platform: str, cohort: str, week: str, points: int) -> None:
    c.execute(
        "INSERT INTO weekly_scores (learner_id, week, platform, cohort, points) VALUES (?,?,?,?,?)"
        " ON CONFLICT (learner_id, week) DO UPDATE SET points = points + excluded.points",
        (learner, week, platform, cohort, points),
    )
    c.execute("UPDATE learners SET points = points + ? WHERE id = ?", (points, learner))


def _record_answer(
    c: sqlite3.Connection, prompt_id: str, actor: Actor, lesson_id: str, question_id: str, mode: str,
    correct: bool, week: str, choice: int | None, now: str, review: CardReview | None,
) -> Recorded:
    prompt = c.execute("SELECT closed_at FROM prompts WHERE id = ?", (prompt_id,)).fetchone()
    if prompt is None or prompt["closed_at"] is not None:
        return Recorded("closed")
    learner = _learner(c, actor, now)
    spent = c.execute(
        "INSERT OR IGNORE INTO prompt_uses (prompt_id, learner_id, used_at) VALUES (?,?,?)",
        (prompt_id, learner, now),
    ).rowcount
    if not spent:
        return Recorded("already")
    scored = c.execute(
        "SELECT 1 FROM answers WHERE learner_id = ? AND question_id = ? AND scored = 1 LIMIT 1",
        (learner, question_id),
    ).fetchone() is None
    points = int(scored and correct)
    answer_id = c.execute(
        "INSERT INTO answers (learner_id, prompt_id, lesson_id, question_id, mode, choice, correct, scored,"
        " points, week, answered_at) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
        (learner, prompt_id, lesson_id, question_id, mode, choice, int(correct), int(scored), points, week, now),
    ).lastrowid
    if points:
        _add_points(c, learner, actor.platform, actor.cohort, week, points)
    elif scored:
        c.execute(
            "INSERT OR IGNORE INTO weekly_scores (learner_id, week, platform, cohort, points) VALUES (?,?,?,?,0)",
            (learner, week, actor.platform, actor.cohort),
        )
    before = _review_card(c, learner, question_id, lesson_id, review) if review else None
    return Recorded("recorded", answer_id, scored, before)


def _review_card(c: sqlite3.Connection, learner: int, question_id: str, lesson_id: str, review: CardReview,
                 base: str | None = None) -> str | None:
    row = c.execute("SELECT state FROM cards WHERE learner_id = ? AND question_id = ?",
                    (learner, question_id)).fetchone()
    previous = row["state"] if row else None
    state, due = review(base if base is not None else previous)
    c.execute("INSERT INTO cards (learner_id, question_id, lesson_id, state, due) VALUES (?,?,?,?,?)"
              " ON CONFLICT (learner_id, question_id) DO UPDATE SET state = excluded.state, due = excluded.due",
              (learner, question_id, lesson_id, state, _iso(due)))
    return previous


def _prompt_row(r: sqlite3.Row) -> PromptRow:
    return PromptRow(r["id"], r["kind"], r["platform"], r["cohort"], r["owner_id"], r["lesson_id"],
                     r["item_id"], r["mode"], r["round_id"], json.loads(r["data"]), r["closed_at"] is not None,
                     datetime.fromisoformat(r["created_at"]))
