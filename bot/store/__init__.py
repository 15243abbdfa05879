"""The database, behind one façade: `Store` gives the features an area each (learners, prompts,
answers, cards, teach-backs, boards, rounds, timers, messages, insights, processes,
installs) on one engine (`engine.py`: group commit; `sqlite_engine.py`, the embedded default, or
`postgres_engine.py` for many processes; `schema.py` orders each area's schema steps). Rows come
back as the dataclasses of `model.py`; no user-facing text lives below the features."""

from __future__ import annotations

import os
from collections.abc import Sequence
from datetime import timedelta
from pathlib import Path
from typing import Any, TypeVar, cast

from bot.core.clock import Clock
from bot.core.config import Secret, secret_keys
from bot.core.messages import Actor, Cohort
from bot.store.answers import Answers
from bot.store.areas import LOCK, Area, bring_up_to_date
from bot.store.boards import Boards
from bot.store.cards import Cards
from bot.store.cohort_stats import Insights
from bot.store.engine import Engine, is_postgres_url
from bot.store.installs import Installs
from bot.store.learners import Learners
from bot.store.postgres_engine import PostgresEngine
from bot.store.processes import Processes
from bot.store.prompts import Prompts
from bot.store.round_rows import Rounds
from bot.store.sealing import Sealer
from bot.store.sqlite_engine import SqliteEngine
from bot.store.teachbacks import Teachbacks
from bot.store.timers import Messages, Timers

A = TypeVar("A")
COUNTED = frozenset({"answers", "learners", "teachbacks", "disputes", "prompt_uses", "weekly_scores", "cards",
                     "timers"})


class Store:
    def __init__(self, engine: Engine, areas: Sequence[Area[Any]] = (), sealer: Sealer | None = None) -> None:
        self.engine = engine
        self.clock = engine.clock
        self._areas = {area.name: area.make(engine) for area in areas}  # the features' own
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
        self.processes = Processes(engine)
        self.installs = Installs(engine, sealer)

    @classmethod
    async def open(cls, where: Path | str, clock: Clock, areas: Sequence[Area[Any]] = (),
                   keys: Sequence[Secret] | None = None) -> Store:
        """Open (creating or upgrading) the database, a SQLite file or a `postgresql://` URL, with the
        features' own areas brought up to date too; StoreUnavailable says what to fix. Stored tokens are
        encrypted with `keys` (default: STUDYBOT_SECRET_KEY from the environment)."""
        sealer = Sealer(secret_keys(os.environ.get("STUDYBOT_SECRET_KEY")) if keys is None else keys)
        engine: Engine = (await PostgresEngine.open(str(where), clock) if is_postgres_url(where)
                          else await SqliteEngine.open(Path(where), clock))
        if areas:
            try:
                async with engine.locked(LOCK):  # processes starting together apply each step once
                    await engine.run(bring_up_to_date, engine.dialect, areas)
            except BaseException:
                await engine.close()
                raise
        return cls(engine, areas, sealer)

    def area(self, area: Area[A]) -> A:
        """A feature's own area (declared in its `storage`)."""
        return cast(A, self._areas[area.name])

    async def close(self) -> None:
        await self.insights.write_lookups()
        await self.engine.close()

    async def forget(self, actor: Actor) -> bool:
        """Delete a learner and everything of theirs; False if there was nothing."""
        self.prompts.forget_cached()  # some of them were the learner's
        return await self.learners.forget(actor)

    async def purge_uninstalled(self, kept: timedelta) -> list[Cohort]:
        """Delete the cohorts uninstalled longer than `kept` ago, scores and all."""
        gone = await self.installs.purge_uninstalled(kept)
        if gone:
            self.prompts.forget_cached()
        return gone

    async def backup(self, target: Path | str) -> None:
        """A consistent copy of the whole database, taken while it is in use."""
        await self.engine.backup(target)

    async def beat(self) -> None:
        """This process's scheduler is alive: `studybot health` reads this."""
        await self.processes.beat()

    async def count(self, table: str) -> int:
        """Rows in one of the counted tables (for health checks and tests)."""
        if table not in COUNTED:
            raise ValueError(table)
        rows = await self.engine.read(f"SELECT COUNT(*) AS n FROM {table}")
        return int(rows[0]["n"])

