"""Processes: each running studybot beats here (host, pid, platforms, when it started and last beat),
so `studybot health` sees every process on every machine. A process that stops cleanly leaves (its row
is deleted); one that was killed stays, silent, until it is forgotten a day later."""

from __future__ import annotations

import os
import socket
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta

from bot.store.engine import Conn, Engine, iso

SCHEMA = {
    2: "CREATE TABLE heartbeat (id INTEGER PRIMARY KEY CHECK (id = 1), at TEXT NOT NULL)",
    8: """
    CREATE TABLE processes (
        id TEXT PRIMARY KEY,
        host TEXT NOT NULL,
        pid INTEGER NOT NULL,
        platforms TEXT NOT NULL DEFAULT '',
        started_at TEXT NOT NULL,
        beat_at TEXT NOT NULL
    );
    DROP TABLE heartbeat
    """,
}
FORGET_AFTER = timedelta(days=1)  # a process silent this long is dropped from the table


@dataclass(frozen=True)
class Process:
    id: str
    host: str
    pid: int
    platforms: str
    started_at: datetime
    beat_at: datetime


def new_id() -> str:
    """This process's id: the host and pid for people to read, and a random part for uniqueness."""
    return f"{socket.gethostname()[:40]}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


class Processes:
    def __init__(self, engine: Engine) -> None:
        self._engine = engine
        self.me = new_id()
        self.platforms = ""  # what this process serves, set by the runner
        self._started = engine.now()
        self._listed = False  # whether this process has beat: it has a row to delete when it leaves
        self._left = False

    async def beat(self) -> None:
        """This process is alive (the scheduler beats once a tick); long-silent processes are forgotten.
        A process that left does not come back."""
        if self._left:
            return
        now = self._engine.now()
        forget = iso(self._engine.clock.now() - FORGET_AFTER)
        host, pid = socket.gethostname()[:80], os.getpid()

        def run(c: Conn) -> None:
            c.execute("INSERT INTO processes (id, host, pid, platforms, started_at, beat_at) VALUES (?,?,?,?,?,?)"
                      " ON CONFLICT (id) DO UPDATE SET beat_at = excluded.beat_at, platforms = excluded.platforms",
                      (self.me, host, pid, self.platforms, self._started, now))
            c.execute("DELETE FROM processes WHERE beat_at < ?", (forget,))

        self._listed = True  # before the write: a leave queued meanwhile is committed after it
        await self._engine.write(run)

    async def leave(self) -> None:
        """This process stops (a clean shutdown): it is no longer listed, and beats no more."""
        self._left = True
        if self._listed:
            await self._engine.write(lambda c: c.execute("DELETE FROM processes WHERE id = ?", (self.me,)))

    async def listed(self) -> list[Process]:
        """Every process listed (those that beat in the last day, and any left by a killed process with
        no other beating since), the latest beat first."""
        rows = await self._engine.read("SELECT * FROM processes ORDER BY beat_at DESC, id")
        return [Process(r["id"], r["host"], r["pid"], r["platforms"], datetime.fromisoformat(r["started_at"]),
                        datetime.fromisoformat(r["beat_at"])) for r in rows]

    async def last_beat(self) -> datetime | None:
        rows = await self._engine.read("SELECT MAX(beat_at) AS at FROM processes")
        return datetime.fromisoformat(rows[0]["at"]) if rows and rows[0]["at"] else None
