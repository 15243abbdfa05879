"""SQLite, the embedded default: one connection on aiosqlite's worker thread, one file.

WAL with synchronous=NORMAL survives a killed process; the schema moves forward by `PRAGMA user_version`.
The file is checked at open (`PRAGMA quick_check`), and before each batch of writes its path
must still name the file that was opened: a database deleted or replaced under a running bot
would otherwise take answers into an unlinked file, acknowledged and then lost.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sqlite3
from collections.abc import Callable
from contextlib import closing
from pathlib import Path
from typing import Any, TypeVar

import aiosqlite

from bot.core.clock import Clock
from bot.core.errors import SetupError, StoreUnavailable
from bot.store import schema
from bot.store.engine import SQLITE, Engine
from bot.store.private import create_private, touch_private
from bot.store.schema import SCHEMA_VERSION

log = logging.getLogger("studybot.store")

T = TypeVar("T")
WAL_OWNER = "-wal.owner"  # beside the database: which file (device and inode) its -wal belongs to


class SqliteEngine(Engine):
    """The SQLite file (or memory), with group commit in one IMMEDIATE transaction per batch."""

    dialect = SQLITE

    def __init__(self, db: aiosqlite.Connection, clock: Clock, path: Path | None = None) -> None:
        super().__init__(clock)
        self._db = db
        self.path = path  # None: in memory
        self._identity = _identity(path) if path else None

    @property
    def where(self) -> str:
        return str(self.path or ":memory:")

    @classmethod
    async def open(cls, path: Path | str, clock: Clock) -> SqliteEngine:
        path = Path(path)
        in_memory = str(path) == ":memory:"
        if not in_memory and (problem := path_problem(path)):
            raise StoreUnavailable(problem)
        if not in_memory and not path.parent.is_dir():
            raise StoreUnavailable(f"the database folder {path.parent} does not exist; create it or set STUDYBOT_DB")
        if not in_memory:
            _check_wal_owner(path)
        try:
            if not in_memory:
                touch_private(path)  # a new database is 0600, and SQLite gives its -wal and -shm the same mode
            sqlite3.connect(path).close()  # fails here, before aiosqlite starts a thread that would outlive the loop
            db = await aiosqlite.connect(path, isolation_level=None, timeout=5.0)
        except (sqlite3.Error, PermissionError) as exc:
            raise StoreUnavailable(f"cannot open the database {path}: {exc}; make {path.parent} writable by this "
                                   "user, or set STUDYBOT_DB to a file in a folder it can write") from exc
        db.row_factory = sqlite3.Row
        engine = cls(db, clock, None if in_memory else path)
        try:
            damage = await engine.run(_quick_check)
            if damage is None:
                await engine.run(_prepare)
        except sqlite3.Error as exc:
            await db.close()
            if isinstance(exc, sqlite3.DatabaseError) and "malformed" in str(exc):
                raise StoreUnavailable(damaged(path, str(exc))) from exc
            if "newer than this studybot" in str(exc):
                raise StoreUnavailable(f"the database {path} has a {exc}; run the newer studybot, or restore a backup "
                                       "made by this one") from exc
            if "not a database" in str(exc):
                raise StoreUnavailable(not_sqlite(path)) from exc
            raise StoreUnavailable(f"cannot use the database {path}: {exc}; make it and {path.parent} writable by "
                                   "this user, or set STUDYBOT_DB to another file") from exc
        if damage is not None:
            await db.close()
            raise StoreUnavailable(damaged(path, damage))
        if not in_memory:
            _claim_wal(path)
        return engine

    def size(self) -> int:
        """Bytes on disk: the file and its write-ahead log (0 in memory)."""
        if self.path is None:
            return 0
        return sum(f.stat().st_size for f in (self.path, _sidecar(self.path, "-wal")) if f.exists())

    def check_file(self) -> StoreUnavailable | None:
        """Whether the path still names the open file; once not, every later write is refused."""
        if self.failure is None and self._identity is not None and _identity(self.path) != self._identity:
            self.failure = StoreUnavailable(
                f"the database file {self.path} was deleted or replaced while studybot ran; nothing more is "
                "recorded: restore it if it was deleted by mistake, then start studybot again")
            log.error("%s", self.failure)
            self.failed.set()
        return self.failure

    async def close(self) -> None:
        await self._wait_for_writes()
        await self._db.close()
        if self.path is not None and self._identity == _identity(self.path) \
                and not _sidecar(self.path, "-wal").exists():  # checkpointed and removed: nothing left to claim
            _sidecar(self.path, WAL_OWNER).unlink(missing_ok=True)

    async def run(self, fn: Callable[..., T], *args: Any) -> T:
        """Run fn(sqlite3.Connection, *args) on the connection's thread: one hop, no transaction."""
        return await self._db._execute(fn, self._db._conn, *args)

    async def aside(self, fn: Callable[..., T], *args: Any) -> T:
        """Run fn on a read-only connection of its own, in a worker thread (WAL lets it read while the
        engine writes); in memory, on the engine's connection."""
        if self.path is None:
            return await self.run(fn, *args)
        return await asyncio.to_thread(_aside, self.path, fn, *args)

    async def _commit(self, writes: list[tuple[Callable[..., Any], tuple]]) -> list[tuple[bool, Any]]:
        return await self.run(self._commit_together, writes)

    def _undoes_all(self, c: sqlite3.Connection, exc: Exception) -> bool:
        return not c.in_transaction  # SQLITE_FULL (and the like) rolled the whole transaction back

    def _can_roll_back(self, c: sqlite3.Connection) -> bool:
        return c.in_transaction

    def _busy(self, exc: BaseException) -> bool:
        text = str(exc).lower()
        return isinstance(exc, sqlite3.OperationalError) and any(w in text for w in ("locked", "busy", "full", "disk"))

    async def backup(self, target: Path | str) -> None:
        """A consistent copy of the whole database, taken while it is in use; SetupError says why
        the target cannot be written."""
        target = Path(target)
        problem = _unwritable(target)
        if self.path is not None and target.exists() and target.resolve() == self.path.resolve():
            problem = "is the database itself"
        if problem:
            raise SetupError(f"cannot write the backup {target}: it {problem}; choose another path")
        try:
            os.close(create_private(target, exclusive=False))  # 0600: a backup holds the bot tokens
            async with aiosqlite.connect(target) as dest:
                await self._db.backup(dest)
        except (sqlite3.Error, OSError) as exc:
            raise SetupError(f"cannot write the backup {target}: {exc}; choose a path on a disk with room") from exc


def _aside(path: Path, fn: Callable[..., T], *args: Any) -> T:
    """fn(connection, *args) in one read transaction of a read-only connection, closed after."""
    with closing(read_only(path)) as c:
        c.row_factory = sqlite3.Row
        c.execute("BEGIN")  # one snapshot for every query of fn
        try:
            return fn(c, *args)
        finally:
            c.execute("ROLLBACK")


def damaged(path: Path, detail: str) -> str:
    detail = " ".join(detail.split())[:120]
    return (f"the database {path} is damaged (SQLite: {detail}); stop studybot and restore the latest backup "
            "with `studybot restore BACKUP`")


def _sidecar(path: Path, suffix: str) -> Path:
    return path.with_name(path.name + suffix)


def _identity(path: Path | None) -> tuple[int, int] | None:
    try:
        info = os.stat(path) if path else None
    except OSError:
        return None
    return (info.st_dev, info.st_ino) if info else None


SQLITE_HEADER = b"SQLite format 3\x00"


def not_sqlite(path: Path) -> str:
    return (f"the database {path} is not a SQLite file; set STUDYBOT_DB to studybot's database, or move that file "
            "away and start again to create a new one")


def path_problem(path: Path) -> str | None:
    """What is wrong with STUDYBOT_DB's path itself, said as it is (None: nothing found)."""
    for folder in path.parents:
        if folder.exists():
            if not folder.is_dir():
                return (f"the database {path} is under {folder}, which is a file, not a folder; set STUDYBOT_DB to "
                        "a path in a folder")
            break
    if path.is_dir():
        return f"the database {path} is a folder; set STUDYBOT_DB to a file, such as {path / 'studybot.db'}"
    try:
        with path.open("rb") as file:
            head = file.read(len(SQLITE_HEADER))
    except OSError:
        return None  # missing (created at start) or unreadable (SQLite says which)
    if head and head != SQLITE_HEADER:
        return not_sqlite(path)
    return None


def _check_wal_owner(path: Path) -> None:
    """Refuse a write-ahead log left by another file than `path` (a database replaced with `mv` while
    studybot ran, then a crash): SQLite would replay it over this one. The owner is the (device, inode)
    that `_claim_wal` wrote beside it; a log with no owner noted is SQLite's to judge, as ever."""
    wal, owner = _sidecar(path, "-wal"), _sidecar(path, WAL_OWNER)
    try:
        if not wal.exists() or wal.stat().st_size == 0 or not path.exists():
            return
        noted = tuple(int(n) for n in owner.read_text().split())
    except (OSError, ValueError):
        return
    if noted != _identity(path):
        raise StoreUnavailable(
            f"the write-ahead log {wal} belongs to another file than {path} (it was replaced while a studybot ran "
            f"on it), and SQLite would write it over this one: move {wal} and {_sidecar(path, '-shm')} aside if "
            f"{path} is the database you want, then start studybot again")


def _claim_wal(path: Path) -> None:
    """Note which file the write-ahead log beside `path` belongs to (see `_check_wal_owner`)."""
    identity = _identity(path)
    if identity is None:
        return
    try:
        owner = _sidecar(path, WAL_OWNER)
        touch_private(owner)
        owner.write_text(f"{identity[0]} {identity[1]}\n")
    except OSError as exc:  # the folder is writable (SQLite wrote its -wal there); a full disk shows soon enough
        log.warning("cannot note the owner of %s's write-ahead log (%s)", path, exc.strerror)


def _unwritable(target: Path) -> str | None:
    """Why a file cannot be written at `target` (None: it can)."""
    folder = target.parent
    if not folder.is_dir():
        return f"is in a folder that does not exist ({folder})"
    if target.is_dir():
        return "is a folder"
    if not os.access(folder, os.W_OK | os.X_OK) or (target.exists() and not os.access(target, os.W_OK)):
        return f"is in a folder this user cannot write ({folder})"
    return None


def restore(backup: Path, target: Path) -> None:
    """Make `target` a copy of `backup`, with the bot stopped; SetupError says what stops it.

    The backup is checked first; the target's -wal and -shm files go before the copy takes its
    place, since SQLite would otherwise replay the old write-ahead log into the restored file."""
    if not backup.is_file():
        raise SetupError(f"cannot restore {backup}: no such file; give the path of a backup made by studybot backup")
    try:
        with closing(read_only(backup, immutable=True)) as source:
            detail = _quick_check(source)
            version = source.execute("PRAGMA user_version").fetchone()[0]
            tables = {r[0] for r in source.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    except sqlite3.Error as exc:
        raise SetupError(f"cannot restore {backup}: it is not a SQLite database ({exc}); "
                         "give a backup made by studybot backup") from exc
    if detail is not None:
        raise SetupError(f"cannot restore {backup}: it is damaged too (SQLite: {' '.join(detail.split())[:120]}); "
                         "use an older backup")
    if "answers" not in tables or version > SCHEMA_VERSION:
        raise SetupError(f"cannot restore {backup}: it is not a studybot database this version can read "
                         f"(schema {version}, this studybot reads up to {SCHEMA_VERSION})")
    if problem := _unwritable(target):
        raise SetupError(f"cannot restore to {target}: it {problem}; set STUDYBOT_DB to the database to replace")
    if target.exists() and in_use(target):
        raise SetupError(f"cannot restore to {target}: a running studybot has it open; stop it first, then restore")
    staged = _sidecar(target, ".restoring")
    staged.unlink(missing_ok=True)
    try:
        touch_private(staged)  # the restored database is 0600, as a new one is
        with closing(read_only(backup, immutable=True)) as source, closing(sqlite3.connect(staged)) as copy:
            source.backup(copy)
            copy.execute("PRAGMA journal_mode = DELETE")  # a self-contained file, no -wal of its own
        with staged.open("rb+") as file:
            os.fsync(file.fileno())
        for suffix in ("-wal", "-shm", WAL_OWNER):
            _sidecar(target, suffix).unlink(missing_ok=True)
        os.replace(staged, target)
    except (OSError, sqlite3.Error) as exc:
        staged.unlink(missing_ok=True)
        raise SetupError(f"cannot restore to {target}: {exc}; check the disk and run it again") from exc
    folder = os.open(target.parent, os.O_RDONLY)
    try:
        os.fsync(folder)
    finally:
        os.close(folder)


def read_only(path: Path, immutable: bool = False) -> sqlite3.Connection:
    """A connection that writes nothing; `immutable` for a file nobody else writes (a backup):
    it leaves no -wal or -shm beside it."""
    return sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro{'&immutable=1' if immutable else ''}", uri=True)


def peek(path: Path, fn: Callable[[sqlite3.Connection], T]) -> T | None:
    """fn run on a read-only connection; None when the file or fn's tables do not exist yet."""
    if not path.exists():
        return None
    try:
        with closing(read_only(path)) as c:
            c.row_factory = sqlite3.Row
            return fn(c)
    except sqlite3.Error as exc:
        if "no such table" in str(exc):
            return None
        raise StoreUnavailable(f"cannot read the database {path} ({exc})") from exc


def examine(path: Path) -> str:
    """What `studybot check` reports of the database, read without changing it; StoreUnavailable
    when studybot could not use it."""
    if problem := path_problem(path):
        raise StoreUnavailable(problem)
    if not path.exists():
        if problem := _unwritable(path):
            raise StoreUnavailable(f"cannot create the database {path}: it {problem}; create the folder, make it "
                                   "writable by this user, or set STUDYBOT_DB")
        return f"{path} does not exist yet and will be created at start"
    _check_wal_owner(path)
    try:
        with closing(read_only(path)) as c:
            detail = _quick_check(c)
            version = c.execute("PRAGMA user_version").fetchone()[0]
    except sqlite3.Error as exc:
        raise StoreUnavailable(f"cannot read the database {path}: {exc}; set STUDYBOT_DB to a studybot "
                               "database") from exc
    if detail is not None:
        raise StoreUnavailable(damaged(path, detail))
    if version > SCHEMA_VERSION:
        raise StoreUnavailable(f"the database {path} has schema {version}, newer than this studybot's "
                               f"{SCHEMA_VERSION}; run the newer studybot, or restore a backup made by this one")
    if not os.access(path, os.W_OK) or _unwritable(path):
        raise StoreUnavailable(f"cannot write the database {path}; make it and {path.parent} writable by this user")
    try:
        rehearse(path)
    except sqlite3.Error as exc:
        raise StoreUnavailable(f"the database {path} cannot be upgraded to schema {SCHEMA_VERSION} ({exc}); "
                               "studybot run would stop here: restore a backup made by studybot, and report "
                               "this") from exc
    upgrade = f", upgraded to {SCHEMA_VERSION} at start" if version < SCHEMA_VERSION else ""
    return f"{path} (schema {version}{upgrade}, {path.stat().st_size:,} bytes)"


def in_use(path: Path) -> bool:
    """Whether another process has the database open: in WAL mode every open connection holds
    a lock that an exclusive-mode connection cannot get past."""
    try:
        with closing(sqlite3.connect(path, timeout=0, isolation_level=None)) as probe:
            probe.execute("PRAGMA locking_mode = EXCLUSIVE")
            probe.execute("BEGIN EXCLUSIVE")
            probe.execute("ROLLBACK")
    except sqlite3.OperationalError as exc:
        return "locked" in str(exc)
    except sqlite3.Error:  # a damaged file: the reason to restore, not a sign of use
        return False
    return False


# ---------------------------------------------------------------- run on the worker thread


def _quick_check(c: sqlite3.Connection) -> str | None:
    """SQLite's quick_check: None when the file is sound, else its first finding."""
    [result] = c.execute("PRAGMA quick_check(1)").fetchone()
    return None if result == "ok" else str(result)


def _prepare(c: sqlite3.Connection) -> None:
    c.execute("PRAGMA journal_mode = WAL")
    c.execute("PRAGMA synchronous = NORMAL")
    c.execute("PRAGMA foreign_keys = ON")
    c.execute("PRAGMA busy_timeout = 5000")
    migrate(c)
    c.execute("DELETE FROM processes WHERE 0")  # a read-only file fails here, at start, not at the first answer


def migrate(c: sqlite3.Connection, target: int = SCHEMA_VERSION) -> int:
    """Apply the schema steps the file lacks (schema.plan), each in its own transaction."""
    version = _version(c)
    for number in schema.plan(c, SQLITE, version, target):
        c.execute("BEGIN IMMEDIATE")
        try:
            schema.apply(c, number, SQLITE)
            if number > version:
                c.execute(f"PRAGMA user_version = {number}")
            c.execute("COMMIT")
        except BaseException:
            c.execute("ROLLBACK")
            raise
    return target


def rehearse(path: Path) -> None:
    """What `migrate` would do at start, done in one transaction and rolled back (`studybot check`
    runs what `studybot run` runs); sqlite3.Error says what would fail."""
    with closing(read_only(path)) as c:
        steps = schema.plan(c, SQLITE, _version(c), SCHEMA_VERSION)
    if not steps:
        return
    with closing(sqlite3.connect(path, isolation_level=None, timeout=5.0)) as c:
        c.execute("BEGIN IMMEDIATE")
        try:
            for number in steps:
                schema.apply(c, number, SQLITE)
        finally:
            c.execute("ROLLBACK")


def _version(c: sqlite3.Connection) -> int:
    version = int(c.execute("PRAGMA user_version").fetchone()[0])
    if version > SCHEMA_VERSION:
        raise sqlite3.DatabaseError(f"schema version {version} is newer than this studybot ({SCHEMA_VERSION})")
    return version

