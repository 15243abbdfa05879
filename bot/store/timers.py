"""Stored timers (a round's reveal, reminders, scheduled posts) and the posted messages that
a later reply edits; both survive a restart."""

from __future__ import annotations

from datetime import datetime

from bot.messages import MessageRef
from bot.store.engine import Engine, iso


class Timers:
    def __init__(self, engine: Engine) -> None:
        self._engine = engine

    async def set(self, key: str, due: datetime) -> None:
        await self._engine.write(lambda c: c.execute("INSERT OR REPLACE INTO timers (key, due_at) VALUES (?,?)",
                                                     (key, iso(due))))

    async def due(self, now: datetime) -> list[str]:
        rows = await self._engine.read("SELECT key FROM timers WHERE due_at <= ? ORDER BY due_at", (iso(now),))
        return [r["key"] for r in rows]

    async def delete(self, key: str, fired_at: datetime | None = None) -> None:
        """Delete a timer; with `fired_at`, only if it was not re-armed for later meanwhile."""
        if fired_at is None:
            await self._engine.write(lambda c: c.execute("DELETE FROM timers WHERE key = ?", (key,)))
        else:
            await self._engine.write(lambda c: c.execute("DELETE FROM timers WHERE key = ? AND due_at <= ?",
                                                         (key, iso(fired_at))))

    async def arm(self, key: str, due: datetime) -> None:
        """Set a timer to `due`, unless it is already past due: that one still has to fire."""
        now = self._engine.now()
        await self._engine.write(lambda c: c.execute(
            "INSERT INTO timers (key, due_at) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET due_at = excluded.due_at"
            " WHERE timers.due_at > ?", (key, iso(due), now)))

    async def ensure(self, key: str, due: datetime) -> None:
        """Create a timer unless one with that key exists."""
        await self._engine.write(lambda c: c.execute("INSERT OR IGNORE INTO timers (key, due_at) VALUES (?, ?)",
                                                     (key, iso(due))))


class Messages:
    """Where tagged replies landed, so that they can be edited later."""

    def __init__(self, engine: Engine) -> None:
        self._engine = engine

    async def remember(self, tag: str, ref: MessageRef) -> None:
        await self._engine.write(lambda c: c.execute(
            "INSERT OR REPLACE INTO messages (tag, platform, channel_id, message_id) VALUES (?,?,?,?)",
            (tag, ref.platform, ref.channel_id, ref.message_id)))

    async def get(self, tag: str) -> MessageRef | None:
        rows = await self._engine.read("SELECT * FROM messages WHERE tag = ?", (tag,))
        return MessageRef(rows[0]["platform"], rows[0]["channel_id"], rows[0]["message_id"]) if rows else None
