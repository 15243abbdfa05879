"""The one SQLite file, behind one façade: `Store` gives the features an area each
(learners, prompts, answers, cards, teach-backs, boards, rounds, timers, messages, insights) on one
engine (`engine.py`: the connection, migrations and group commit). Rows come back as the
dataclasses of `model.py`; no user-facing text lives below the features."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from bot.core.clock import Clock
from bot.core.messages import Actor
from bot.store.answers import Answers
from bot.store.boards import Boards
from bot.store.cards import Cards
from bot.store.cohort_stats import Insights
from bot.store.engine import Engine
from bot.store.learners import Learners
from bot.store.prompts import Prompts
from bot.store.round_rows import Rounds
from bot.store.teachbacks import Teachbacks
from bot.store.timers import Messages, Timers

COUNTED = frozenset({"answers", "learners", "teachbacks", "prompt_uses", "weekly_scores", "cards", "timers"})


class Store:
    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.clock = engine.clock
        self.learners = Learners(engine)
        self.prompts = Prompts(engine)
        self.answers = Answers(engine)
        self.cards = Cards(engine)
        self.teachbacks = Teachbacks(engine)
        self.boards = Boards(engine)
        self.rounds = Rounds(engine, self.prompts)
        self.timers = Timers(engine)
        self.messages = Messages(engine)
        self.insights = Insights(engine)

    @classmethod
    async def open(cls, path: Path | str, clock: Clock) -> Store:
        """Open (creating or upgrading) the database; StoreUnavailable says what to fix."""
        return cls(await Engine.open(path, clock))

    async def close(self) -> None:
        await self.insights.write_lookups()
        await self.engine.close()

    async def forget(self, actor: Actor) -> bool:
        """Delete a learner and everything of theirs; False if there was nothing."""
        self.prompts.forget_cached()  # some of them were the learner's
        return await self.learners.forget(actor)

    async def backup(self, target: Path | str) -> None:
        """A consistent copy of the whole database, taken while it is in use."""
        await self.engine.backup(target)

    async def beat(self) -> None:
        """The scheduler is alive: `studybot health` reads this."""
        now = self.engine.now()
        await self.engine.write(lambda c: c.execute("INSERT OR REPLACE INTO heartbeat (id, at) VALUES (1, ?)", (now,)))

    async def last_beat(self) -> datetime | None:
        rows = await self.engine.read("SELECT at FROM heartbeat WHERE id = 1")
        return datetime.fromisoformat(rows[0]["at"]) if rows else None

    async def count(self, table: str) -> int:
        """Rows in one of the counted tables (for health checks and tests)."""
        if table not in COUNTED:
            raise ValueError(table)
        rows = await self.engine.read(f"SELECT COUNT(*) AS n FROM {table}")
        return int(rows[0]["n"])

