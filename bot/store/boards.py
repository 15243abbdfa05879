"""Leaderboards: points per learner and week, kept up to date with each scoring event, so a
board never scans the answers; ranks are competition ranks (`bot.scoring`)."""

from __future__ import annotations

import sqlite3

from bot.messages import Actor, Cohort
from bot.scoring import competition_rank, competition_ranks
from bot.store.engine import Engine
from bot.store.learners import LEARNER_KEY, key
from bot.store.model import Standing


def add_points(c: sqlite3.Connection, learner: int, cohort: Cohort, week: str, points: int) -> None:
    """Add (or, negative, take back) points for a week and for all time; zero still puts the
    learner on the week's board."""
    c.execute(
        "INSERT INTO weekly_scores (learner_id, week, platform, cohort, points) VALUES (?,?,?,?,?)"
        " ON CONFLICT (learner_id, week) DO UPDATE SET points = points + excluded.points",
        (learner, week, cohort.platform, cohort.id, points),
    )
    if points:
        c.execute("UPDATE learners SET points = points + ? WHERE id = ?", (points, learner))


class Boards:
    def __init__(self, engine: Engine) -> None:
        self._engine = engine

    async def top(self, cohort: Cohort, week: str | None, limit: int = 10) -> list[Standing]:
        """The top of a cohort's board, for one week or (week None) all time."""
        if week:
            sql = ("SELECT l.user_id, l.display_name, w.points FROM weekly_scores w"
                   " JOIN learners l ON l.id = w.learner_id"
                   " WHERE w.platform = ? AND w.cohort = ? AND w.week = ? AND w.points > 0"
                   " ORDER BY w.points DESC, l.display_name LIMIT ?")
            params: tuple = (cohort.platform, cohort.id, week, limit)
        else:
            sql = ("SELECT user_id, display_name, points FROM learners"
                   " WHERE platform = ? AND cohort = ? AND points > 0 ORDER BY points DESC, display_name LIMIT ?")
            params = (cohort.platform, cohort.id, limit)
        rows = await self._engine.read(sql, params)
        ranks = competition_ranks([r["points"] for r in rows])
        return [Standing(rank, r["user_id"], r["display_name"], r["points"])
                for rank, r in zip(ranks, rows, strict=True)]

    async def standing(self, actor: Actor, week: str | None) -> Standing | None:
        """One learner's rank (None without points): how many have more points, plus one."""

        def run(c: sqlite3.Connection) -> Standing | None:
            if week:
                row = c.execute(
                    "SELECT w.points FROM weekly_scores w JOIN learners l ON l.id = w.learner_id"
                    " WHERE l.platform = ? AND l.cohort = ? AND l.user_id = ? AND w.week = ?",
                    (*key(actor), week)).fetchone()
                if not row or row["points"] <= 0:
                    return None
                better = c.execute("SELECT COUNT(*) FROM weekly_scores WHERE platform = ? AND cohort = ? AND week = ?"
                                   " AND points > ?", (actor.platform, actor.cohort, week, row["points"])).fetchone()[0]
            else:
                row = c.execute("SELECT points FROM learners WHERE " + LEARNER_KEY, key(actor)).fetchone()
                if not row or row["points"] <= 0:
                    return None
                better = c.execute("SELECT COUNT(*) FROM learners WHERE platform = ? AND cohort = ? AND points > ?",
                                   (actor.platform, actor.cohort, row["points"])).fetchone()[0]
            return Standing(competition_rank(better), actor.user_id, actor.display_name, row["points"])

        return await self._engine.run(run)
