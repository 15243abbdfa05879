"""Stored timers (a round's reveal, reminders, scheduled posts) and the posted messages that
a later reply edits; both survive a restart."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from bot.core.messages import MessageRef
from bot.store.engine import Conn, Engine, iso
from bot.store.model import GivenUp

MISSING = 0  # failures counted for a timer that no longer exists
CLAIM_AT_ONCE = 100  # timers one process claims in one tick
_HOLDS = "(CAST(? AS INTEGER) IS NULL OR claims = ?)"  # with (claim, claim): no claim named, or that one holds
# Set a timer as new (its failures and any claim on it forgotten): the new due time wins.
SET_TIMER = ("INSERT INTO timers (key, due_at) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET due_at = excluded.due_at,"
             " attempts = 0, last_error = NULL, lease_until = NULL, lease_owner = NULL")

SCHEMA = {
    1: """
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
    )
    """,
    # leaderboard timers name their cohort's platform (keys were "leaderboard:<cohort>"); no timer payloads
    3: """
    UPDATE timers SET key = 'leaderboard:'
        || (SELECT l.platform FROM learners l WHERE l.cohort = substr(timers.key, 13) LIMIT 1)
        || ':' || substr(timers.key, 13)
    WHERE key LIKE 'leaderboard:%' AND key NOT LIKE 'leaderboard:%:%'
      AND EXISTS (SELECT 1 FROM learners l WHERE l.cohort = substr(timers.key, 13));
    DELETE FROM timers WHERE key LIKE 'leaderboard:%' AND key NOT LIKE 'leaderboard:%:%';
    ALTER TABLE timers DROP COLUMN data
    """,
    # failed deliveries are retried with backoff, then given up with their reason recorded
    5: """
    ALTER TABLE timers ADD COLUMN attempts INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE timers ADD COLUMN last_error TEXT;
    CREATE TABLE failed_deliveries (
        id {serial},
        timer TEXT NOT NULL,
        reason TEXT NOT NULL,
        failed_at TEXT NOT NULL
    );
    CREATE INDEX failed_deliveries_at ON failed_deliveries (failed_at)
    """,
    # a process claims a due timer for a while (its lease); each claim counts, and fences what follows
    8: """
    ALTER TABLE timers ADD COLUMN lease_until TEXT;
    ALTER TABLE timers ADD COLUMN lease_owner TEXT;
    ALTER TABLE timers ADD COLUMN claims INTEGER NOT NULL DEFAULT 0
    """,
}


@dataclass(frozen=True)
class Claim:
    """A due timer this process holds: fire it, then settle it naming `claim`."""

    key: str
    claim: int


class Timers:
    def __init__(self, engine: Engine) -> None:
        self._engine = engine

    async def set(self, key: str, due: datetime) -> None:
        """Set a timer to `due`, as new: its failures so far are forgotten."""
        await self._engine.write(lambda c: c.execute(SET_TIMER, (key, iso(due))))

    async def due(self, now: datetime) -> list[str]:
        """The keys of the timers due (claimed or not), soonest first."""
        rows = await self._engine.read("SELECT key FROM timers WHERE due_at <= ? ORDER BY due_at", (iso(now),))
        return [r["key"] for r in rows]

    async def claim(self, now: datetime, owner: str, lease: timedelta, limit: int = CLAIM_AT_ONCE) -> list[Claim]:
        """Claim the due timers nobody holds (or whose holder's lease ran out) until `now + lease`,
        soonest first. Each claim is committed before it is fired and counted: what a holder does
        with the timer afterwards names its claim, so a holder whose lease ran out changes nothing.
        On PostgreSQL, rows another process is claiming are skipped, never waited for."""
        stamp, until = iso(now), iso(now + lease)

        def run(c: Conn) -> list[Claim]:
            rows = c.execute(
                "UPDATE timers SET lease_until = ?, lease_owner = ?, claims = claims + 1 WHERE key IN"
                " (SELECT key FROM timers WHERE due_at <= ? AND (lease_until IS NULL OR lease_until <= ?)"
                " ORDER BY due_at LIMIT ?" + self._engine.dialect.skip_locked + ") RETURNING key, due_at, claims",
                (until, owner, stamp, stamp, limit)).fetchall()
            return [Claim(r["key"], r["claims"]) for r in sorted(rows, key=lambda r: (r["due_at"], r["key"]))]

        return await self._engine.write(run)

    async def delete(self, key: str, fired_at: datetime | None = None, claim: int | None = None) -> None:
        """Delete a timer; with `fired_at`, only if it was not re-armed for later meanwhile; with
        `claim`, only while that claim holds."""
        if fired_at is None:
            await self._engine.write(lambda c: c.execute("DELETE FROM timers WHERE key = ?", (key,)))
        else:
            await self._engine.write(lambda c: c.execute(
                "DELETE FROM timers WHERE key = ? AND due_at <= ? AND " + _HOLDS, (key, iso(fired_at), claim, claim)))

    async def rearm(self, key: str, due: datetime, claim: int | None = None) -> None:
        """A repeating timer delivered: due again at `due`, its failures forgotten (while `claim` holds)."""
        await self._engine.write(lambda c: c.execute(
            "UPDATE timers SET due_at = ?, attempts = 0, last_error = NULL, lease_until = NULL, lease_owner = NULL"
            " WHERE key = ? AND " + _HOLDS, (iso(due), key, claim, claim)))

    async def arm(self, key: str, due: datetime) -> None:
        """Set a timer to `due`, unless it is already past due: that one still has to fire."""
        now = self._engine.now()
        await self._engine.write(lambda c: c.execute(
            "INSERT INTO timers (key, due_at) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET due_at = excluded.due_at,"
            " lease_until = NULL WHERE timers.due_at > ?", (key, iso(due), now)))

    async def move(self, key: str, due: datetime) -> None:
        """Move a timer to `due`, keeping its count of failures (a step that failed and repeats)."""
        await self._engine.write(lambda c: c.execute("UPDATE timers SET due_at = ?, lease_until = NULL WHERE key = ?",
                                                     (iso(due), key)))

    async def hurry(self, key: str, due: datetime) -> bool:
        """Bring a timer forward to `due` (never later); False if there is no such timer."""

        def run(c: Conn) -> bool:
            return c.execute("UPDATE timers SET due_at = CASE WHEN due_at < ? THEN due_at ELSE ? END,"
                             " lease_until = NULL WHERE key = ?", (iso(due), iso(due), key)).rowcount > 0

        return await self._engine.write(run)

    async def ensure(self, key: str, due: datetime) -> None:
        """Create a timer unless one with that key exists."""
        await self._engine.write(lambda c: c.execute(
            "INSERT INTO timers (key, due_at) VALUES (?, ?) ON CONFLICT (key) DO NOTHING", (key, iso(due))))

    async def failed(self, key: str, reason: str, claim: int | None = None) -> int:
        """Count a failed delivery of a timer and keep its reason; returns the failures in a row
        (MISSING when the timer is gone, or `claim` no longer holds)."""

        def run(c: Conn) -> int:
            row = c.execute("UPDATE timers SET attempts = attempts + 1, last_error = ? WHERE key = ? AND " + _HOLDS +
                            " RETURNING attempts", (reason, key, claim, claim)).fetchone()
            return int(row[0]) if row else MISSING

        return await self._engine.write(run)

    async def postpone(self, key: str, fired_at: datetime, due: datetime, claim: int | None = None) -> None:
        """Move a failed timer to its next try, free to claim then (unless it was re-armed for later
        meanwhile, or `claim` no longer holds)."""
        await self._engine.write(lambda c: c.execute(
            "UPDATE timers SET due_at = ?, lease_until = NULL WHERE key = ? AND due_at <= ? AND " + _HOLDS,
            (iso(due), key, iso(fired_at), claim, claim)))

    async def give_up(self, key: str, reason: str, next_due: datetime | None = None, claim: int | None = None) -> bool:
        """Record a timer as given up; delete it, or re-arm it at `next_due` when it repeats. False
        (and nothing recorded) when `claim` no longer holds."""

        def run(c: Conn) -> bool:
            if next_due is None:
                gone = c.execute("DELETE FROM timers WHERE key = ? AND " + _HOLDS, (key, claim, claim)).rowcount
            else:
                gone = c.execute("UPDATE timers SET due_at = ?, attempts = 0, last_error = NULL, lease_until = NULL"
                                 " WHERE key = ? AND " + _HOLDS, (iso(next_due), key, claim, claim)).rowcount
            if gone or claim is None:
                c.execute("INSERT INTO failed_deliveries (timer, reason, failed_at) VALUES (?, ?, ?)",
                          (key, reason, now))
            return bool(gone) or claim is None

        now = self._engine.now()
        return await self._engine.write(run)

    async def cannot_post(self, key: str, reason: str) -> None:
        """Record a configured channel that a start-up check found studybot cannot post in (in place
        of what an earlier check found)."""
        def run(c: Conn) -> None:
            c.execute("DELETE FROM failed_deliveries WHERE timer = ?", (key,))
            c.execute("INSERT INTO failed_deliveries (timer, reason, failed_at) VALUES (?, ?, ?)", (key, reason, now))

        now = self._engine.now()
        await self._engine.write(run)

    async def can_post(self, key: str) -> None:
        """A start-up check found studybot can post in a configured channel: what an earlier one found goes."""
        await self._engine.write(lambda c: c.execute("DELETE FROM failed_deliveries WHERE timer = ?", (key,)))

    async def given_up(self, since: datetime) -> list[GivenUp]:
        """The timers given up since a moment, latest first (for `studybot health`)."""
        rows = await self._engine.read("SELECT timer, reason, failed_at FROM failed_deliveries WHERE failed_at >= ?"
                                       " ORDER BY failed_at DESC, id DESC", (iso(since),))
        return [GivenUp(r["timer"], r["reason"], datetime.fromisoformat(r["failed_at"])) for r in rows]


class Messages:
    """Where tagged replies landed, so that they can be edited later."""

    def __init__(self, engine: Engine) -> None:
        self._engine = engine

    async def remember(self, tag: str, ref: MessageRef) -> None:
        await self._engine.write(lambda c: c.execute(
            "INSERT INTO messages (tag, platform, channel_id, message_id) VALUES (?,?,?,?) ON CONFLICT (tag) DO UPDATE"
            " SET platform = excluded.platform, channel_id = excluded.channel_id, message_id = excluded.message_id",
            (tag, ref.platform, ref.channel_id, ref.message_id)))

    async def get(self, tag: str) -> MessageRef | None:
        rows = await self._engine.read("SELECT * FROM messages WHERE tag = ?", (tag,))
        return MessageRef(rows[0]["platform"], rows[0]["channel_id"], rows[0]["message_id"]) if rows else None
