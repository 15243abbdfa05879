"""The second reader's tables: each cohort's and each learner's calls per day (the daily caps hold
across processes, as they share the database), and the verified reading of each answer it read,
which `/audit disputes` shows beside a dispute. A reading goes with its learner (/forget)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date, timedelta

from bot.core.messages import Actor
from bot.store import learners
from bot.store.areas import Area
from bot.store.engine import Conn, Engine
from bot.store.model import Disputed

STEPS = {
    1: """
    CREATE TABLE reader_calls (
        day TEXT NOT NULL,
        scope TEXT NOT NULL,
        used INTEGER NOT NULL,
        PRIMARY KEY (day, scope)
    );
    CREATE TABLE reader_readings (
        source TEXT NOT NULL,
        source_id INTEGER NOT NULL,
        learner_id INTEGER NOT NULL REFERENCES learners (id) ON DELETE CASCADE,
        found TEXT NOT NULL,
        PRIMARY KEY (source, source_id)
    )
    """,
}

_COUNT = ("INSERT INTO reader_calls (day, scope, used) VALUES (?, ?, 1) ON CONFLICT (day, scope)"
          " DO UPDATE SET used = reader_calls.used + 1 RETURNING used")


@dataclass(frozen=True)
class Reading:
    """What the second reader found in one answer: (key point id, the answer's words), verified."""

    found: tuple[tuple[str, str], ...]


def read_as(reading: Reading, names: Mapping[str, str]) -> str:
    """The reading as an instructor's listing shows it, beside the rubric's verdict."""
    found = "; ".join(f"{names.get(p, p)} ('{w}')" for p, w in reading.found)
    return f"second reader (advice only): finds {found or 'no key point'}"


class Readings:
    def __init__(self, engine: Engine) -> None:
        self._engine = engine

    async def take_call(self, actor: Actor, day: str, *, per_learner: int, per_cohort: int) -> bool:
        """Count one call for the learner and their cohort on `day`, unless either has reached its cap
        (then nothing is counted): one transaction, so two processes never both take the last one."""

        def run(c: Conn) -> bool:
            c.execute("DELETE FROM reader_calls WHERE day < ?", (stale,))
            scopes = ((f"learner {actor.platform} {actor.cohort} {actor.user_id}", per_learner),
                      (f"cohort {actor.platform} {actor.cohort}", per_cohort))
            counted = [(scope, c.execute(_COUNT, (day, scope)).fetchone()[0] <= cap) for scope, cap in scopes]
            if all(ok for _, ok in counted):
                return True
            for scope, _ in counted:
                c.execute("UPDATE reader_calls SET used = used - 1 WHERE day = ? AND scope = ?", (day, scope))
            return False

        # Days gone in every time zone: cohorts' local dates differ by up to two (UTC+14 and UTC-12).
        stale = (date.fromisoformat(day) - timedelta(days=2)).isoformat()
        return await self._engine.write(run)

    async def keep(self, actor: Actor, of: Disputed, source_id: int, reading: Reading) -> None:
        """Keep the reading of one answer (or teach-back attempt) for its instructors."""
        found = json.dumps([list(pair) for pair in reading.found])

        def run(c: Conn) -> None:
            learner = learners.upsert(c, actor, now)
            c.execute("INSERT INTO reader_readings (source, source_id, learner_id, found) VALUES (?, ?, ?, ?)"
                      " ON CONFLICT (source, source_id) DO UPDATE SET found = excluded.found",
                      (str(of), source_id, learner, found))

        now = self._engine.now()
        await self._engine.write(run)

    async def of(self, of: Disputed, source_id: int) -> Reading | None:
        """The second reader's reading of an answer, if it read one."""
        rows = await self._engine.read("SELECT found FROM reader_readings WHERE source = ? AND source_id = ?",
                                       (str(of), source_id))
        return Reading(tuple((str(p), str(w)) for p, w in json.loads(rows[0]["found"]))) if rows else None


AREA = Area("reader", STEPS, Readings)
