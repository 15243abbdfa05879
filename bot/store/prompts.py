"""Prompts: the tokens behind buttons and forms, each spent at most once per learner.

Tokens resolve on every click, so prompts this process made or read stay in memory; a
prompt never changes but for being closed, which is mirrored in memory. Another process may close
it meanwhile: where that matters, `is_closed` reads the database (an answer's own transaction
checks it too).
"""

from __future__ import annotations

import json
import secrets
from dataclasses import replace
from datetime import datetime
from typing import Any

from bot.core.messages import Actor, Cohort, Place
from bot.store import learners
from bot.store.engine import Conn, Engine, Row, iso
from bot.store.model import AnswerMode, Outcome, Prompt, PromptKind

PROMPT_MEMORY = 100_000  # prompts kept in memory (about 20 MB at most)

SCHEMA = {
    1: """
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
    ){without_rowid}
    """,
}


def new_token() -> str:
    """A short opaque id: fits Slack action ids and Discord custom_ids with room to spare."""
    return secrets.token_urlsafe(9)


def spend(c: Conn, prompt_id: str, learner: int, now: str) -> bool:
    """Mark a prompt used by a learner; False when they already had."""
    return c.execute("INSERT INTO prompt_uses (prompt_id, learner_id, used_at) VALUES (?,?,?) ON CONFLICT DO NOTHING",
                     (prompt_id, learner, now)).rowcount == 1


def spend_open(c: Conn, prompt_id: str, learner: int, now: str) -> bool:
    """Mark a prompt used by a learner if it is open, in one statement; False when it is closed (or gone) or
    they already had (`not_spent` says which)."""
    return c.execute("INSERT INTO prompt_uses (prompt_id, learner_id, used_at) SELECT id, ?, ? FROM prompts"
                     " WHERE id = ? AND closed_at IS NULL ON CONFLICT DO NOTHING",
                     (learner, now, prompt_id)).rowcount == 1


def not_spent(c: Conn, prompt_id: str) -> Outcome:
    """Why `spend_open` spent nothing: the prompt is closed or gone, or the learner had spent it."""
    row = c.execute("SELECT closed_at FROM prompts WHERE id = ?", (prompt_id,)).fetchone()
    return Outcome.CLOSED if row is None or row["closed_at"] is not None else Outcome.ALREADY


def make(kind: PromptKind, place: Place, owner: Actor | None, created_at: datetime, *, lesson_id: str | None = None,
         item_id: str | None = None, mode: str | None = None, round_id: int | None = None,
         data: dict[str, Any] | None = None) -> Prompt:
    """A new prompt with a fresh token, not yet stored."""
    return Prompt(new_token(), kind, place.platform, place.cohort, owner.user_id if owner else None, lesson_id,
                  item_id, mode, round_id, data or {}, False, created_at)


def insert(c: Conn, prompt: Prompt, owner: Actor | None) -> None:
    """Store a prompt (inside the caller's transaction)."""
    stamp = iso(prompt.created_at)
    owner_id = learners.upsert(c, owner, stamp) if owner else None
    c.execute("INSERT INTO prompts (id, kind, platform, cohort, owner_id, lesson_id, item_id, mode, round_id, data,"
              " created_at) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
              (prompt.id, prompt.kind, prompt.platform, prompt.cohort, owner_id, prompt.lesson_id, prompt.item_id,
               prompt.mode, prompt.round_id, json.dumps(prompt.data), stamp))


def close(c: Conn, prompt_id: str, now: str) -> None:
    c.execute("UPDATE prompts SET closed_at = ? WHERE id = ? AND closed_at IS NULL", (now, prompt_id))


def _prompt(r: Row) -> Prompt:
    return Prompt(r["id"], r["kind"], r["platform"], r["cohort"], r["owner"], r["lesson_id"],
                  r["item_id"], r["mode"] or None, r["round_id"], json.loads(r["data"]),
                  r["closed_at"] is not None, datetime.fromisoformat(r["created_at"]))


class Prompts:
    def __init__(self, engine: Engine) -> None:
        self._engine = engine
        self._known: dict[str, Prompt] = {}

    async def new(self, kind: PromptKind, place: Place, owner: Actor | None = None, *, lesson_id: str | None = None,
                  item_id: str | None = None, mode: str | None = None, round_id: int | None = None,
                  data: dict[str, Any] | None = None) -> Prompt:
        """A fresh prompt; with an owner, only that learner may use it."""
        prompt = make(kind, place, owner, self._engine.clock.now(), lesson_id=lesson_id, item_id=item_id, mode=mode,
                      round_id=round_id, data=data)
        await self._engine.write(insert, prompt, owner)
        self.remember(prompt)
        return prompt

    async def get(self, prompt_id: str) -> Prompt | None:
        """What a token refers to, from memory when this process made or read it before."""
        if (known := self._known.get(prompt_id)) is not None:
            return known
        row = await self._engine.write(lambda c: c.execute(  # rides the group transaction under load: one hop
            "SELECT p.*, l.user_id AS owner FROM prompts p LEFT JOIN learners l ON l.id = p.owner_id"
            " WHERE p.id = ?", (prompt_id,)).fetchone())
        if row is None:
            return None
        self.remember(prompt := _prompt(row))
        return prompt

    async def is_closed(self, prompt_id: str) -> bool:
        """Whether a prompt is closed now, read from the database: another process may have closed
        it since this one held it in memory."""
        row = await self._engine.write(lambda c: c.execute(  # rides the group transaction, as `get` does
            "SELECT closed_at FROM prompts WHERE id = ?", (prompt_id,)).fetchone())
        if row is None or row[0] is not None:
            self.closed(prompt_id)
            return True
        return False

    async def daily(self, cohort: Cohort) -> list[Prompt]:
        """A cohort's questions of the day, oldest first."""
        rows = await self._engine.read(
            "SELECT p.*, NULL AS owner FROM prompts p WHERE p.platform = ? AND p.cohort = ? AND p.mode = ?"
             " ORDER BY p.created_at, p.id", (cohort.platform, cohort.id, AnswerMode.DAILY))
        found = [_prompt(r) for r in rows]
        for prompt in found:
            self.remember(prompt)
        return found

    async def close(self, prompt_id: str) -> None:
        """Close a prompt to answers (once)."""
        now = self._engine.now()
        await self._engine.write(lambda c: close(c, prompt_id, now))
        self.closed(prompt_id)

    async def spend(self, prompt_id: str, actor: Actor) -> bool:
        """Spend a prompt for a learner; False when they already had."""
        now = self._engine.now()
        return await self._engine.write(lambda c: spend(c, prompt_id, learners.upsert(c, actor, now), now))

    def closed(self, prompt_id: str) -> None:
        """Mirror a prompt closed in the database."""
        if (known := self._known.get(prompt_id)) is not None:
            self._known[prompt_id] = replace(known, closed=True)

    def forget_cached(self) -> None:
        """Drop what is held in memory (after a learner's rows were deleted)."""
        self._known.clear()

    def remember(self, prompt: Prompt) -> None:
        """Hold a prompt this process stored, so that its token resolves without a read."""
        self._known[prompt.id] = prompt
        if len(self._known) > PROMPT_MEMORY:
            del self._known[next(iter(self._known))]  # the oldest
