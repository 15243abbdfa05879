"""PostgreSQL, for many processes on many machines: the same domain functions and the same group
commit as SQLite, on one psycopg connection per process, run on a thread of its own.

The store's SQL is written with `?` placeholders; `PgConn` turns them into psycopg's `%s` (once per
text) and hands back rows readable by name and by position, as `sqlite3.Row` is. Schema steps run
under an advisory lock, so processes starting together apply each step once. A batch that meets a
deadlock or a serialization failure is retried once, whole; a lost connection fails its batch
(nothing of it was committed) and the next operation connects again.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractContextManager, contextmanager
from functools import lru_cache
from pathlib import Path
from typing import Any, TypeVar

import psycopg
from psycopg import errors as pg_errors
from psycopg import sql

from bot.core.clock import Clock
from bot.core.errors import StoreUnavailable
from bot.store import pg_dumps, pg_url, schema
from bot.store.engine import POSTGRESQL, Engine
from bot.store.pg_url import explain, readable, redacted
from bot.store.schema import SCHEMA_VERSION

log = logging.getLogger("studybot.store")
T = TypeVar("T")

MIGRATE_LOCK = 7_226_001  # pg_advisory_lock key: one process applies the schema steps at a time
LOCKS = 7_226_002  # the first key of the named advisory locks (Engine.locked, Engine.first)
CONNECT_TIMEOUT = 5  # seconds
LISTEN_RETRY_FIRST, LISTEN_RETRY_MOST = 1.0, 30.0  # seconds before listening again after a lost connection
# SQLite's json_each over a JSON array of text, so that the store's SQL reads the same on both databases.
FUNCTIONS = ("CREATE OR REPLACE FUNCTION json_each(text) RETURNS TABLE (value text) LANGUAGE sql IMMUTABLE"
             " AS $$ SELECT jsonb_array_elements_text($1::jsonb) $$")
RETRYABLE = (pg_errors.DeadlockDetected, pg_errors.SerializationFailure)


class PgRow:
    """A row readable by column name and by position (the shape of `sqlite3.Row`)."""

    __slots__ = ("_names", "_values")

    def __init__(self, names: dict[str, int], values: Sequence[Any]) -> None:
        self._names = names
        self._values = values

    def __getitem__(self, key: int | str) -> Any:
        return self._values[self._names[key]] if isinstance(key, str) else self._values[key]

    def __iter__(self) -> Iterator[Any]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def keys(self) -> list[str]:
        return list(self._names)


def _rows(cursor: psycopg.Cursor[Any]) -> Callable[[Sequence[Any]], PgRow]:
    names = {d.name: i for i, d in enumerate(cursor.description or ())}
    return lambda values: PgRow(names, values)


@lru_cache(maxsize=1024)
def translate(sql: str) -> str:
    """The store's SQL with psycopg's placeholders (its text holds no literal `?`)."""
    return sql.replace("%", "%%").replace("?", "%s")


class Queued:
    """A statement sent in pipeline mode: its results are waited for when read (its rowcount too, which
    psycopg leaves unset until then)."""

    __slots__ = ("_cursor", "_pipeline")

    def __init__(self, cursor: psycopg.Cursor[Any], pipeline: psycopg.Pipeline) -> None:
        self._cursor = cursor
        self._pipeline = pipeline

    @property
    def rowcount(self) -> int:
        self._pipeline.sync()
        return self._cursor.rowcount

    def fetchone(self) -> Any:
        return self._cursor.fetchone()

    def fetchall(self) -> list[Any]:
        return self._cursor.fetchall()

    def __iter__(self) -> Iterator[Any]:
        return iter(self._cursor)


class PgConn:
    """A psycopg connection that takes the store's SQL as it is written for SQLite."""

    def __init__(self, conn: psycopg.Connection[Any]) -> None:
        self.conn = conn
        self.pipeline: psycopg.Pipeline | None = None  # while in pipeline mode

    def execute(self, sql: str, parameters: Sequence[Any] = ()) -> Any:
        cursor = self.conn.cursor(row_factory=_rows)
        cursor.execute(translate(sql), tuple(parameters))
        return cursor if self.pipeline is None else Queued(cursor, self.pipeline)

    @contextmanager
    def pipelined(self) -> Iterator[None]:
        """Statements sent without waiting for each one's result (psycopg's pipeline mode)."""
        with self.conn.pipeline() as pipeline:
            self.pipeline = pipeline
            try:
                yield
            finally:
                self.pipeline = None

    def executemany(self, sql: str, parameters: Iterable[Sequence[Any]]) -> Any:
        cursor = self.conn.cursor(row_factory=_rows)
        cursor.executemany(translate(sql), [tuple(p) for p in parameters])
        return cursor


def connect(url: str) -> psycopg.Connection[Any]:
    """An autocommit connection: the engine says BEGIN and COMMIT itself."""
    return psycopg.connect(readable(url), autocommit=True, connect_timeout=CONNECT_TIMEOUT)


def schema_version(c: PgConn) -> int:
    """The database's schema version (0: not a studybot database yet)."""
    found = c.execute("SELECT to_regclass('schema_version') IS NOT NULL").fetchone()[0]
    if not found:
        return 0
    row = c.execute("SELECT MAX(version) FROM schema_version").fetchone()
    return int(row[0] or 0)


def migrate(c: PgConn, target: int = SCHEMA_VERSION) -> int:
    """Apply the schema steps the database lacks (schema.plan), each in its own transaction, under an
    advisory lock: processes that start together apply each step once."""
    c.execute("SELECT pg_advisory_lock(?)", (MIGRATE_LOCK,))
    try:
        c.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER PRIMARY KEY, applied_at TEXT)")
        version = _version(c)
        c.execute(FUNCTIONS)
        for number in schema.plan(c, POSTGRESQL, version, target):
            c.execute("BEGIN")
            try:
                schema.apply(c, number, POSTGRESQL)
                if number > version:
                    c.execute("INSERT INTO schema_version (version, applied_at) VALUES (?, now()::text)", (number,))
                c.execute("COMMIT")
            except BaseException:
                c.execute("ROLLBACK")
                raise
    finally:
        c.execute("SELECT pg_advisory_unlock(?)", (MIGRATE_LOCK,))
    return target


def rehearse(c: PgConn) -> None:
    """What `migrate` would do at start, in one transaction rolled back (`studybot check` runs what
    `studybot run` runs); psycopg.Error says what would fail."""
    c.execute("BEGIN")
    try:
        c.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER PRIMARY KEY, applied_at TEXT)")
        c.execute(FUNCTIONS)
        for number in schema.plan(c, POSTGRESQL, _version(c), SCHEMA_VERSION):
            schema.apply(c, number, POSTGRESQL)
    finally:
        c.execute("ROLLBACK")


def _version(c: PgConn) -> int:
    version = schema_version(c)
    if version > SCHEMA_VERSION:
        raise StoreUnavailable(f"the database has schema {version}, newer than this studybot's {SCHEMA_VERSION}; "
                               "run the newer studybot, or restore a backup made by this one")
    return version

class PostgresEngine(Engine):
    dialect = POSTGRESQL

    def __init__(self, url: str, clock: Clock) -> None:
        super().__init__(clock)
        self.url = url
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="studybot-pg")
        self._conn: PgConn | None = None

    @property
    def where(self) -> str:
        return redacted(self.url)

    @classmethod
    async def open(cls, url: str, clock: Clock) -> PostgresEngine:
        engine = cls(url, clock)
        try:
            await engine.run(migrate)
        except StoreUnavailable:
            await engine.close()
            raise
        except psycopg.Error as exc:
            await engine.close()
            raise StoreUnavailable(explain(url, exc)) from exc
        return engine

    async def try_lock(self, name: str, key: str = "") -> bool:
        """A session advisory lock on this process's connection (a process that dies lets go of it)."""
        return bool(await self.run(lambda c: c.execute("SELECT pg_try_advisory_lock(?, hashtext(?))",
                                                       (LOCKS, f"{name}:{key}")).fetchone()[0]))

    async def unlock(self, name: str, key: str = "") -> None:
        await self.run(lambda c: c.execute("SELECT pg_advisory_unlock(?, hashtext(?))", (LOCKS, f"{name}:{key}")))

    async def notices(self, channel: str) -> AsyncIterator[str]:
        """LISTEN on a connection of its own (NOTIFY's payloads), connecting again with a backoff
        when it is lost; what was announced while it was away is missed, and the log says so."""
        delay = LISTEN_RETRY_FIRST
        while True:
            try:
                async with await psycopg.AsyncConnection.connect(readable(self.url), autocommit=True,
                                                                 connect_timeout=CONNECT_TIMEOUT) as conn:
                    await conn.execute(sql.SQL("LISTEN {}").format(sql.Identifier(channel)))
                    delay = LISTEN_RETRY_FIRST
                    async for notice in conn.notifies():
                        yield notice.payload
            except psycopg.Error as exc:
                log.warning("not listening for %s (%s); trying again in %g s (announcements meanwhile are missed)",
                            channel, pg_url.masked(" ".join(str(exc).split()), self.url)[:120], delay)
                await asyncio.sleep(delay)
                delay = min(delay * 2, LISTEN_RETRY_MOST)

    def _connection(self) -> PgConn:
        """The live connection, connecting (again) when there is none or it broke."""
        if self._conn is None or self._conn.conn.broken or self._conn.conn.closed:
            if self._conn is not None:
                log.warning("the PostgreSQL connection was lost; connecting again")
                self._conn.conn.close()
            self._conn = None
            self._conn = PgConn(connect(self.url))
        return self._conn

    async def run(self, fn: Callable[..., T], *args: Any) -> T:
        return await asyncio.get_running_loop().run_in_executor(self._thread, lambda: fn(self._connection(), *args))

    async def aside(self, fn: Callable[..., T], *args: Any) -> T:
        """Run fn on a connection of its own, in a worker thread, in one read-only snapshot."""
        return await asyncio.to_thread(_aside, self.url, fn, *args)

    async def _commit(self, writes: list[tuple[Callable[..., Any], tuple]]) -> list[tuple[bool, Any]]:
        try:
            return await self.run(self._commit_together, writes)
        except RETRYABLE:
            log.info("a batch of %d write(s) met a deadlock or serialization failure; retrying it once", len(writes))
            return await self.run(self._commit_together, writes)

    def _pipelined(self, c: PgConn) -> AbstractContextManager[None]:
        return c.pipelined()

    def _undoes_all(self, c: PgConn, exc: Exception) -> bool:
        return isinstance(exc, RETRYABLE) or c.conn.broken  # a deadlock's transaction must go (and retry) whole

    def _can_roll_back(self, c: PgConn) -> bool:
        return not c.conn.broken and not c.conn.closed

    def _busy(self, exc: BaseException) -> bool:
        return isinstance(exc, psycopg.OperationalError | pg_errors.LockNotAvailable | pg_errors.DiskFull
                          | pg_errors.QueryCanceled | pg_errors.TooManyConnections)

    async def close(self) -> None:
        await self._wait_for_writes()

        def shut() -> None:
            if self._conn is not None:
                self._conn.conn.close()
                self._conn = None

        await asyncio.get_running_loop().run_in_executor(self._thread, shut)
        self._thread.shutdown(wait=True)

    async def backup(self, target: Path | str) -> None:
        """pg_dump's custom format into a new file, mode 0600 (pg_dumps.dump)."""
        await asyncio.to_thread(pg_dumps.dump, self.url, Path(target))


def _aside(url: str, fn: Callable[..., T], *args: Any) -> T:
    """fn(connection, *args) in a read-only REPEATABLE READ transaction (one snapshot), on a new connection."""
    with connect(url) as raw:
        c = PgConn(raw)
        c.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
        try:
            return fn(c, *args)
        finally:
            if not raw.broken:
                c.execute("ROLLBACK")


def notify(url: str, channel: str, payload: str = "") -> None:
    """Announce on `channel` to every process LISTENing on this database; StoreUnavailable says why not."""
    try:
        with connect(url) as raw:
            raw.execute("SELECT pg_notify(%s, %s)", (channel, payload))
    except psycopg.Error as exc:
        raise StoreUnavailable(explain(url, exc)) from exc


def examine(url: str) -> str:
    """What `studybot check` reports of a PostgreSQL database, read without changing it;
    StoreUnavailable says what stops studybot from using it."""
    try:
        with connect(url) as raw:
            c = PgConn(raw)
            version = schema_version(c)
            server = c.execute("SHOW server_version").fetchone()[0]
            if version <= SCHEMA_VERSION:
                try:
                    rehearse(c)
                except psycopg.Error as exc:
                    raise StoreUnavailable(
                        f"the database {redacted(url)} cannot be upgraded to schema {SCHEMA_VERSION} "
                        f"({pg_url.masked(' '.join(str(exc).split()), url)[:160]}); studybot run would stop here: "
                        "restore a backup made by studybot, and report this") from exc
    except psycopg.Error as exc:
        raise StoreUnavailable(explain(url, exc)) from exc
    where = redacted(url)
    if version > SCHEMA_VERSION:
        raise StoreUnavailable(f"the database {where} has schema {version}, newer than this studybot's "
                               f"{SCHEMA_VERSION}; run the newer studybot, or restore a backup made by this one")
    upgrade = f", upgraded to {SCHEMA_VERSION} at start" if version < SCHEMA_VERSION else ""
    return f"{where} (PostgreSQL {server}, schema {version}{upgrade})"


def peek(url: str, fn: Callable[[PgConn], T]) -> T | None:
    """fn run in a read-only transaction; None when fn's tables do not exist yet."""
    try:
        with connect(url) as raw:
            c = PgConn(raw)
            c.execute("BEGIN READ ONLY")
            try:
                return fn(c)
            except pg_errors.UndefinedTable:
                return None
            finally:
                c.execute("ROLLBACK")
    except psycopg.Error as exc:
        raise StoreUnavailable(explain(url, exc)) from exc


def restore(backup: Path, url: str) -> None:
    """pg_restore a dump made by `studybot backup`, every studybot process stopped (pg_dumps.restore)."""
    pg_dumps.restore(backup, url)
