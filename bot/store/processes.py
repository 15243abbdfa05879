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
    11: """
    ALTER TABLE processes ADD COLUMN shards TEXT NOT NULL DEFAULT '';
    ALTER TABLE processes ADD COLUMN waiting TEXT NOT NULL DEFAULT ''
    """,
}
FORGET_AFTER = timedelta(days=1)  # a process silent this long is dropped from the table
# A process whose last beat is older is not running (killed, or hung): the scheduler beats every second, and
# so does a process still connecting its platforms; a busy database delays a beat by seconds, not a minute.
ALIVE_WITHIN = timedelta(seconds=60)


@dataclass(frozen=True)
class Process:
    id: str
    host: str
    pid: int
    platforms: str
    started_at: datetime
    beat_at: datetime
    shards: str = ""  # the Discord shards it runs, like 0,1/4 ('' when unsharded)
    waiting: str = ""  # the platforms it is still connecting (retrying), comma-separated


def new_id() -> str:
    """This process's id: the host and pid for people to read, and a random part for uniqueness."""
    return f"{socket.gethostname()[:40]}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


class Processes:
    def __init__(self, engine: Engine) -> None:
        self._engine = engine
        self.me = new_id()
        self.host = socket.gethostname()  # how `health` names this process's machine (or STUDYBOT_PROCESS_NAME)
        self.platforms = ""  # what this process serves, set by the runner
        self.shards = ""  # its Discord shards (STUDYBOT_DISCORD_SHARDS), set by the runner
        self.waiting = ""  # the platforms it is still connecting, set by the runner
        self._started = engine.now()
        self._listed = False  # whether this process has beat: it has a row to delete when it leaves
        self._left = False

    def connected(self, platform: str) -> None:
        """`platform` is connected: no longer waited for (the next beat says so)."""
        self.waiting = ", ".join(p for p in self.waiting.split(", ") if p and p != platform)

    async def beat(self) -> None:
        """This process is alive (the scheduler beats once a tick); long-silent processes are forgotten.
        A process that left does not come back."""
        if self._left:
            return
        now = self._engine.now()
        forget = iso(self._engine.clock.now() - FORGET_AFTER)
        host, pid = self.host[:80], os.getpid()

        def run(c: Conn) -> None:
            c.execute("INSERT INTO processes (id, host, pid, platforms, shards, waiting, started_at, beat_at)"
                      " VALUES (?,?,?,?,?,?,?,?) ON CONFLICT (id) DO UPDATE SET beat_at = excluded.beat_at,"
                      " platforms = excluded.platforms, shards = excluded.shards, waiting = excluded.waiting",
                      (self.me, host, pid, self.platforms, self.shards, self.waiting, self._started, now))
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
        return await self._engine.run(read_processes)

    async def last_beat(self) -> datetime | None:
        rows = await self._engine.read("SELECT MAX(beat_at) AS at FROM processes")
        return datetime.fromisoformat(rows[0]["at"]) if rows and rows[0]["at"] else None


def read_processes(c: Conn) -> list[Process]:
    """Every process listed, the latest beat first (also on a read-only connection, for `studybot check`)."""
    rows = c.execute("SELECT * FROM processes ORDER BY beat_at DESC, id").fetchall()
    return [Process(r["id"], r["host"], r["pid"], r["platforms"], datetime.fromisoformat(r["started_at"]),
                    datetime.fromisoformat(r["beat_at"]), *((r["shards"], r["waiting"]) if "shards" in r.keys()
                                                           else ()))  # older schemas lack them
            for r in rows]


def shard_problems(running: list[Process], mine: str = "") -> list[str]:
    """What is wrong with the Discord shards of the running processes (and `mine`, a process about to
    start): totals that disagree, a shard run twice, shards no process runs. [] when all is well."""
    claims = [(f"process {p.host} pid {p.pid}", p.shards) for p in running if p.shards]
    if mine:
        claims.append(("this process (STUDYBOT_DISCORD_SHARDS)", mine))
    if not claims:
        return []
    parsed = [(who, *_shards(text)) for who, text in claims]
    totals = sorted({total for _, _, total in parsed})
    if len(totals) > 1:
        said = "; ".join(f"{who} runs {text}" for who, text in claims)
        return [f"discord shards: the processes disagree on the total ({', '.join(map(str, totals))}): {said}; give "
                "every process the same total in STUDYBOT_DISCORD_SHARDS"]
    problems = []
    owners: dict[int, list[str]] = {}
    for who, ids, _ in parsed:
        for shard in ids:
            owners.setdefault(shard, []).append(who)
    for shard, holders in sorted(owners.items()):
        if len(holders) > 1:
            problems.append(f"discord shards: shard {shard} runs in {len(holders)} processes "
                            f"({', '.join(holders)}), so its servers are answered twice; give each shard id to one "
                            "process")
    if gap := [n for n in range(totals[0]) if n not in owners]:
        problems.append(f"discord shards: no process runs shard(s) {', '.join(map(str, gap))} of {totals[0]}, so "
                        "their servers get no answer; start a process with STUDYBOT_DISCORD_SHARDS naming them")
    return problems


def _shards(text: str) -> tuple[list[int], int]:
    ids, _, total = text.partition("/")
    return [int(n) for n in ids.split(",") if n.isdecimal()], int(total) if total.isdecimal() else 0
