"""Spaced-repetition cards: one per learner and question, its FSRS state and when it is due."""

from __future__ import annotations

import json
from collections.abc import Collection
from datetime import datetime
from typing import Any

from bot.core.messages import Actor
from bot.store import learners
from bot.store.engine import Conn, Engine, iso
from bot.store.learners import LEARNER_ID, key
from bot.store.model import Card, CardReview

SCHEMA = {
    2: """
    CREATE TABLE cards (
        learner_id INTEGER NOT NULL REFERENCES learners (id) ON DELETE CASCADE,
        question_id TEXT NOT NULL,
        lesson_id TEXT NOT NULL,
        state TEXT NOT NULL,
        due TEXT NOT NULL,
        PRIMARY KEY (learner_id, question_id)
    ){without_rowid};
    CREATE INDEX cards_due ON cards (learner_id, due)
    """,
}

_OWN_CARDS = "learner_id = " + LEARNER_ID
_OF_LESSON = " AND lesson_id = ? AND question_id IN (SELECT value FROM json_each(?))"  # its questions as they are


def stored(c: Conn, learner: int, question_id: str) -> Any:
    """The query of a learner's card, its row read later by `review` (sent early: on PostgreSQL it shares a
    round trip with the statements before that read)."""
    return c.execute("SELECT state FROM cards WHERE learner_id = ? AND question_id = ?", (learner, question_id))


def review(c: Conn, learner: int, question_id: str, lesson_id: str, rate: CardReview,
           base: str | None = None, asked: Any = None) -> str | None:
    """Apply `rate` to a learner's card; returns the state before it. With `base`, rate that
    state instead of the stored one ('' for a new card); `asked`: the card's `stored` query, sent already."""
    row = (asked or stored(c, learner, question_id)).fetchone()
    previous = row["state"] if row else None
    state, due = rate((base or None) if base is not None else previous)
    c.execute("INSERT INTO cards (learner_id, question_id, lesson_id, state, due) VALUES (?,?,?,?,?)"
              " ON CONFLICT (learner_id, question_id) DO UPDATE SET state = excluded.state, due = excluded.due",
              (learner, question_id, lesson_id, state, iso(due)))
    return previous


class Cards:
    def __init__(self, engine: Engine) -> None:
        self._engine = engine

    async def review(self, actor: Actor, question_id: str, lesson_id: str, rate: CardReview,
                     base: str | None = None) -> str | None:
        """Rate a learner's card in one transaction; returns the state before it."""
        now = self._engine.now()
        return await self._engine.write(
            lambda c: review(c, learners.upsert(c, actor, now), question_id, lesson_id, rate, base))

    async def due(self, actor: Actor, until: datetime, lesson_id: str, questions: Collection[str],
                  limit: int = 1) -> list[str]:
        """Question ids of the learner's cards of a lesson due by `until`, most overdue first: one indexed
        range. Only the lesson's questions as they are now count (a card of a removed one waits unseen)."""
        rows = await self._engine.read("SELECT question_id FROM cards WHERE " + _OWN_CARDS + _OF_LESSON
                                       + " AND due <= ? ORDER BY due LIMIT ?",
                                       (*key(actor), lesson_id, json.dumps(list(questions)), iso(until), limit))
        return [r["question_id"] for r in rows]

    async def count_due(self, actor: Actor, now: datetime, day_ends: datetime, lesson_id: str,
                        questions: Collection[str]) -> tuple[int, int]:
        """How many of the learner's cards of a lesson are due by `now` (what /review asks before any new
        card), and how many more come due later, before `day_ends`."""
        rows = await self._engine.read("SELECT COALESCE(SUM(CASE WHEN due <= ? THEN 1 ELSE 0 END), 0) AS due_now,"
                                       " COUNT(*) AS due_today FROM cards WHERE " + _OWN_CARDS + _OF_LESSON
                                       + " AND due < ?", (iso(now), *key(actor), lesson_id,
                                                          json.dumps(list(questions)), iso(day_ends)))
        due_now = int(rows[0]["due_now"])
        return due_now, int(rows[0]["due_today"]) - due_now

    async def next_due(self, actor: Actor, lesson_id: str, questions: Collection[str]) -> datetime | None:
        rows = await self._engine.read("SELECT MIN(due) AS due FROM cards WHERE " + _OWN_CARDS + _OF_LESSON,
                                       (*key(actor), lesson_id, json.dumps(list(questions))))
        return datetime.fromisoformat(rows[0]["due"]) if rows and rows[0]["due"] else None

    async def of_lesson(self, actor: Actor, lesson_id: str, questions: Collection[str]) -> list[Card]:
        """The learner's cards of a lesson (its questions as they are now)."""
        rows = await self._engine.read("SELECT question_id, lesson_id, state, due FROM cards WHERE " + _OWN_CARDS
                                       + _OF_LESSON, (*key(actor), lesson_id, json.dumps(list(questions))))
        return [Card(r["question_id"], r["lesson_id"], r["state"], datetime.fromisoformat(r["due"])) for r in rows]

    async def of(self, actor: Actor) -> list[Card]:
        rows = await self._engine.read("SELECT question_id, lesson_id, state, due FROM cards WHERE " + _OWN_CARDS,
                                       key(actor))
        return [Card(r["question_id"], r["lesson_id"], r["state"], datetime.fromisoformat(r["due"])) for r in rows]
