"""The engine under the store: one SQLite connection, its migrations, and group commit.

Each domain operation is one function run on aiosqlite's worker thread, so an operation
costs a single thread hop. Writes that arrive together share one transaction, each in its
own savepoint, and each is acknowledged only after that transaction committed. WAL with
synchronous=NORMAL survives a killed process; the schema moves forward by `PRAGMA user_version`.
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

import aiosqlite

from bot.clock import Clock
from bot.errors import StoreBusy, StoreUnavailable

T = TypeVar("T")

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
    # 3: leaderboard timers name their cohort's platform (keys were "leaderboard:<cohort>"); no timer payloads
    """
    UPDATE timers SET key = 'leaderboard:'
        || (SELECT l.platform FROM learners l WHERE l.cohort = substr(timers.key, 13) LIMIT 1)
        || ':' || substr(timers.key, 13)
    WHERE key GLOB 'leaderboard:*' AND key NOT GLOB 'leaderboard:*:*'
      AND EXISTS (SELECT 1 FROM learners l WHERE l.cohort = substr(timers.key, 13));
    DELETE FROM timers WHERE key GLOB 'leaderboard:*' AND key NOT GLOB 'leaderboard:*:*';
    ALTER TABLE timers DROP COLUMN data
    """,
    # 4: what a typed answer said and how the rubric read it (for self-grade audits); self-graded points
    """
    ALTER TABLE answers ADD COLUMN text TEXT;
    ALTER TABLE answers ADD COLUMN rubric_correct INTEGER;
    ALTER TABLE answers ADD COLUMN matched TEXT;
    ALTER TABLE answers ADD COLUMN missed TEXT;
    ALTER TABLE weekly_scores ADD COLUMN self_graded INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE learners ADD COLUMN self_graded INTEGER NOT NULL DEFAULT 0;
    CREATE INDEX answers_self_graded ON answers (week) WHERE self_graded = 1
    """,
    # 5: failed deliveries are retried with backoff, then given up with their reason recorded
    """
    ALTER TABLE timers ADD COLUMN attempts INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE timers ADD COLUMN last_error TEXT;
    CREATE TABLE failed_deliveries (
        id INTEGER PRIMARY KEY,
        timer TEXT NOT NULL,
        reason TEXT NOT NULL,
        failed_at TEXT NOT NULL
    );
    CREATE INDEX failed_deliveries_at ON failed_deliveries (failed_at)
    """,
)
SCHEMA_VERSION = len(MIGRATIONS)


def iso(moment: datetime) -> str:
    """Stored times are UTC in one fixed format, so comparing the text compares the times."""
    return moment.astimezone(UTC).isoformat(timespec="microseconds")


class Engine:
    """The connection, with `read` for queries and `write` for transactions (group commit)."""

    def __init__(self, db: aiosqlite.Connection, clock: Clock) -> None:
        self._db = db
        self.clock = clock
        self._pending: list[tuple[Callable[..., Any], tuple, asyncio.Future]] = []
        self._flushing: asyncio.Task | None = None

    @classmethod
    async def open(cls, path: Path | str, clock: Clock) -> Engine:
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
        engine = cls(db, clock)
        try:
            await engine.run(_prepare)
        except sqlite3.Error as exc:
            await db.close()
            raise StoreUnavailable(f"cannot use the database {path}: {exc}; make it and {path.parent} writable by "
                                   "this user, or set STUDYBOT_DB to another file") from exc
        return engine

    async def close(self) -> None:
        if self._flushing is not None:
            await self._flushing
        await self._db.close()

    def now(self) -> str:
        """The clock's time as stored."""
        return iso(self.clock.now())

    async def run(self, fn: Callable[..., T], *args: Any) -> T:
        """Run fn(sqlite3.Connection, *args) on the connection's thread: one hop, no transaction."""
        return await self._db._execute(fn, self._db._conn, *args)

    async def read(self, sql: str, params: Iterable[Any] = ()) -> list[sqlite3.Row]:
        return await self.run(lambda c: c.execute(sql, tuple(params)).fetchall())

    async def write(self, fn: Callable[..., T], *args: Any) -> T:
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
                    outcomes = await self.run(_commit_together, [(fn, args) for fn, args, _ in batch])
                except BaseException as exc:  # nothing of the batch was committed
                    outcomes = [(False, exc)] * len(batch)
                for (_, _, future), (ok, value) in zip(batch, outcomes, strict=True):
                    if not future.done():
                        future.set_result(value) if ok else future.set_exception(value)
        finally:
            self._flushing = None

    async def backup(self, target: Path | str) -> None:
        """A consistent copy of the whole database, taken while it is in use."""
        async with aiosqlite.connect(target) as dest:
            await self._db.backup(dest)


# ---------------------------------------------------------------- run on the worker thread


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
