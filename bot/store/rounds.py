"""Public rounds: which questions, how far along, who started them."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence

from bot.errors import RoundAlreadyOpen
from bot.messages import Actor, Place
from bot.store import learners, prompts
from bot.store.engine import Engine
from bot.store.model import Prompt, PromptKind, Round, RoundScore, RoundState


class Rounds:
    def __init__(self, engine: Engine, prompt_cache: prompts.Prompts) -> None:
        self._engine = engine
        self._prompts = prompt_cache

    async def open(self, place: Place, starter: Actor, lesson_id: str, question_ids: Sequence[str]) -> int:
        """A new round in a channel; RoundAlreadyOpen when one is running there."""

        def run(c: sqlite3.Connection) -> int:
            busy = c.execute("SELECT 1 FROM rounds WHERE platform = ? AND cohort = ? AND channel_id = ?"
                             " AND state = ?", (place.platform, place.cohort, place.channel_id, RoundState.OPEN))
            if busy.fetchone():
                raise RoundAlreadyOpen()
            starter_id = learners.upsert(c, starter, now)
            cur = c.execute(
                "INSERT INTO rounds (platform, cohort, channel_id, lesson_id, starter_id, question_ids, state,"
                " started_at) VALUES (?,?,?,?,?,?,?,?)",
                (place.platform, place.cohort, place.channel_id, lesson_id, starter_id, json.dumps(list(question_ids)),
                 RoundState.OPEN, now))
            return int(cur.lastrowid or 0)

        now = self._engine.now()
        return await self._engine.write(run)

    async def get(self, round_id: int) -> Round | None:
        rows = await self._engine.read(
            "SELECT r.*, l.user_id AS starter FROM rounds r LEFT JOIN learners l ON l.id = r.starter_id"
            " WHERE r.id = ?", (round_id,))
        if not rows:
            return None
        r = rows[0]
        return Round(r["id"], r["platform"], r["cohort"], r["channel_id"], r["lesson_id"], r["starter"],
                     tuple(json.loads(r["question_ids"])), r["position"], RoundState(r["state"]))

    async def advance(self, round_id: int, position: int, prompt_id: str) -> bool:
        """Close question `position` and move on, once: False if it was already closed."""

        def run(c: sqlite3.Connection) -> bool:
            row = c.execute("SELECT position, question_ids, state FROM rounds WHERE id = ?", (round_id,)).fetchone()
            if row is None or row["state"] != RoundState.OPEN or row["position"] != position:
                return False
            last = position + 1 >= len(json.loads(row["question_ids"]))
            c.execute("UPDATE rounds SET position = ?, state = ?, ended_at = ? WHERE id = ?",
                      (position + 1, RoundState.DONE if last else RoundState.OPEN, now if last else None, round_id))
            prompts.close(c, prompt_id, now)
            return True

        now = self._engine.now()
        advanced = await self._engine.write(run)
        self._prompts.closed(prompt_id)
        return advanced

    async def prompt_at(self, round_id: int, position: int) -> Prompt | None:
        """The prompt of the round's question at `position`, once it was posted."""
        rows = await self._engine.read(
            "SELECT id FROM prompts WHERE round_id = ? AND kind = ? AND json_extract(data, '$.position') = ?",
            (round_id, PromptKind.QUESTION, position))
        return await self._prompts.get(rows[0]["id"]) if rows else None

    async def scores(self, round_id: int) -> list[RoundScore]:
        """Per learner in a round: correct and answered, best first."""
        rows = await self._engine.read(
            "SELECT l.display_name, l.user_id, SUM(a.correct) AS right, COUNT(*) AS n"
            " FROM answers a JOIN prompts p ON p.id = a.prompt_id JOIN learners l ON l.id = a.learner_id"
            " WHERE p.round_id = ? GROUP BY a.learner_id ORDER BY right DESC, l.display_name", (round_id,))
        return [RoundScore(r["display_name"] or r["user_id"], r["right"], r["n"]) for r in rows]
