"""The review feature's own table: the new (never-seen) cards each learner was shown in /review on each
local day, so that a cohort's `new_cards_per_day` is never exceeded. Declared as the feature's store
area (`AREA`): the store creates the table."""

from __future__ import annotations

from bot.core.messages import Actor
from bot.store import learners
from bot.store.areas import Area
from bot.store.engine import Conn, Engine

STEPS = {
    1: """
    CREATE TABLE IF NOT EXISTS review_new_cards (
        learner_id INTEGER NOT NULL REFERENCES learners (id) ON DELETE CASCADE,
        day TEXT NOT NULL,
        question_id TEXT NOT NULL,
        PRIMARY KEY (learner_id, day, question_id)
    ){without_rowid}
    """,
}

LOCK = "review new cards"  # one learner's day is counted by one process at a time


class NewCards:
    def __init__(self, engine: Engine) -> None:
        self._engine = engine

    async def take(self, actor: Actor, day: str, question_id: str, per_day: int) -> bool:
        """Count `question_id` among the learner's new cards of their local `day` if fewer than `per_day`
        are (a card already counted that day is shown again for free); False when the day's are used up."""

        def take(c: Conn) -> bool:
            learner = learners.upsert(c, actor, self._engine.now())
            if c.execute("SELECT 1 FROM review_new_cards WHERE learner_id = ? AND day = ? AND question_id = ?",
                         (learner, day, question_id)).fetchone():
                return True
            shown = c.execute("SELECT COUNT(*) FROM review_new_cards WHERE learner_id = ? AND day = ?",
                              (learner, day)).fetchone()[0]
            if shown >= per_day:
                return False
            c.execute("INSERT INTO review_new_cards (learner_id, day, question_id) VALUES (?, ?, ?)",
                      (learner, day, question_id))
            return True

        async with self._engine.locked(LOCK, f"{actor.platform}:{actor.cohort}:{actor.user_id}"):
            return await self._engine.write(take)


AREA = Area("review", STEPS, NewCards)
