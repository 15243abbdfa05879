"""Leaderboards: points per learner and week (and how many of them were self-graded), kept up to
date with each scoring event, so a board never scans the answers; ranks are competition ranks
(`bot.grading.scoring`), over all points or over the points not self-graded, as the cohort chooses."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass

from bot.core.messages import Actor, Cohort
from bot.grading.scoring import SelfGraded, competition_rank, competition_ranks
from bot.store.engine import Conn, Engine
from bot.store.learners import LEARNER_KEY, key
from bot.store.model import Standing

SCHEMA = {
    1: """
    CREATE TABLE weekly_scores (
        learner_id INTEGER NOT NULL REFERENCES learners (id) ON DELETE CASCADE,
        week TEXT NOT NULL,
        platform TEXT NOT NULL,
        cohort TEXT NOT NULL,
        points INTEGER NOT NULL DEFAULT 0,
        PRIMARY KEY (learner_id, week)
    ){without_rowid};
    CREATE INDEX weekly_board ON weekly_scores (platform, cohort, week, points DESC)
    """,
    4: "ALTER TABLE weekly_scores ADD COLUMN self_graded INTEGER NOT NULL DEFAULT 0",
    10: "ALTER TABLE weekly_scores ADD COLUMN instructor_graded INTEGER NOT NULL DEFAULT 0",  # by accepted disputes
}


@dataclass(frozen=True)
class _Queries:
    """A board's queries, ranking by one column expression (fixed text, never user input)."""

    board_week: str  # the whole board by points, best first, in the index's order (ties in no set order)
    board_all: str
    mine_week: str
    better_week: str
    mine_all: str
    better_all: str

    @property
    def top_week(self) -> str:
        return self.board_week + ", l.display_name LIMIT ?"

    @property
    def top_all(self) -> str:
        return self.board_all + ", display_name LIMIT ?"

    @classmethod
    def ranking_by(cls, ranked: str) -> _Queries:
        return cls(
            board_week="SELECT l.user_id, l.display_name, w.self_graded, w.instructor_graded,"
                       f" w.{ranked} AS ranked FROM weekly_scores w"
                       " JOIN learners l ON l.id = w.learner_id WHERE w.platform = ? AND w.cohort = ? AND w.week = ?"
                       f" AND w.{ranked} > 0 ORDER BY w.{ranked} DESC",
            board_all=f"SELECT user_id, display_name, self_graded, instructor_graded, {ranked} AS ranked FROM learners"
                      f" WHERE platform = ? AND cohort = ? AND {ranked} > 0 ORDER BY {ranked} DESC",
            mine_week=f"SELECT w.{ranked} AS ranked, w.self_graded, w.instructor_graded FROM weekly_scores w"
                      " JOIN learners l ON l.id = w.learner_id"
                      " WHERE l.platform = ? AND l.cohort = ? AND l.user_id = ? AND w.week = ?",
            better_week=f"SELECT COUNT(*) FROM weekly_scores WHERE platform = ? AND cohort = ? AND week = ?"
                        f" AND {ranked} > ?",
            mine_all=f"SELECT {ranked} AS ranked, self_graded, instructor_graded FROM learners WHERE " + LEARNER_KEY,
            better_all=f"SELECT COUNT(*) FROM learners WHERE platform = ? AND cohort = ? AND {ranked} > ?",
        )


QUERIES = {policy: _Queries.ranking_by("points - self_graded" if policy is SelfGraded.EXCLUDE else "points")
           for policy in SelfGraded}


def add_points(c: Conn, learner: int, cohort: Cohort, week: str, points: int,
               self_graded: int = 0, instructor_graded: int = 0) -> None:
    """Add (or, negative, take back) points for a week and for all time, `self_graded` of them by
    the learner's own grade and `instructor_graded` by an instructor's (an accepted dispute); zero
    still puts the learner on the week's board."""
    c.execute(
        "INSERT INTO weekly_scores (learner_id, week, platform, cohort, points, self_graded, instructor_graded)"
        " VALUES (?,?,?,?,?,?,?)"
        " ON CONFLICT (learner_id, week) DO UPDATE SET points = weekly_scores.points + excluded.points,"
        " self_graded = weekly_scores.self_graded + excluded.self_graded,"
        " instructor_graded = weekly_scores.instructor_graded + excluded.instructor_graded",
        (learner, week, cohort.platform, cohort.id, points, self_graded, instructor_graded),
    )
    if points or self_graded or instructor_graded:
        c.execute("UPDATE learners SET points = points + ?, self_graded = self_graded + ?,"
                  " instructor_graded = instructor_graded + ? WHERE id = ?",
                  (points, self_graded, instructor_graded, learner))


class Boards:
    def __init__(self, engine: Engine) -> None:
        self._engine = engine

    async def top(self, cohort: Cohort, week: str | None, policy: SelfGraded = SelfGraded.COUNT,
                  limit: int = 10) -> list[Standing]:
        """The top of a cohort's board, for one week or (week None) all time."""
        queries = QUERIES[policy]
        if week:
            rows = await self._engine.read(queries.top_week, (cohort.platform, cohort.id, week, limit))
        else:
            rows = await self._engine.read(queries.top_all, (cohort.platform, cohort.id, limit))
        ranks = competition_ranks([r["ranked"] for r in rows])
        return [Standing(rank, r["user_id"], r["display_name"], r["ranked"], r["self_graded"],
                         r["instructor_graded"])
                for rank, r in zip(ranks, rows, strict=True)]

    async def best_of(self, cohort: Cohort, groups: Mapping[str, str], week: str | None,
                      policy: SelfGraded = SelfGraded.COUNT, most: int = 3) -> dict[str, tuple[str, int]]:
        """The `most` best-scoring learners of each group (a team; `groups` maps user ids to them), by user id
        with display name and points: the board read from the top, stopping once every group has its `most`
        (only a group with fewer learners with points reads it to the end)."""
        queries = QUERIES[policy]
        wanted = len(set(groups.values()))

        def run(c: Conn) -> dict[str, tuple[str, int]]:
            rows = (c.execute(queries.board_week, (cohort.platform, cohort.id, week)) if week
                    else c.execute(queries.board_all, (cohort.platform, cohort.id)))
            found: dict[str, tuple[str, int]] = {}
            counts: Counter[str] = Counter()
            for r in rows:
                group = groups.get(r["user_id"])
                if group is None or counts[group] == most:
                    continue
                found[r["user_id"]] = (r["display_name"], int(r["ranked"]))
                counts[group] += 1
                if counts[group] == most and sum(n == most for n in counts.values()) == wanted:
                    break
            return found

        return await self._engine.run(run) if wanted else {}

    async def standing(self, actor: Actor, week: str | None,
                       policy: SelfGraded = SelfGraded.COUNT) -> Standing | None:
        """One learner's rank (None without points): how many have more points, plus one."""
        queries = QUERIES[policy]

        def run(c: Conn) -> Standing | None:
            if week:
                row = c.execute(queries.mine_week, (*key(actor), week)).fetchone()
                if not row or row["ranked"] <= 0:
                    return None
                better = c.execute(queries.better_week, (actor.platform, actor.cohort, week, row["ranked"]))
            else:
                row = c.execute(queries.mine_all, key(actor)).fetchone()
                if not row or row["ranked"] <= 0:
                    return None
                better = c.execute(queries.better_all, (actor.platform, actor.cohort, row["ranked"]))
            return Standing(competition_rank(better.fetchone()[0]), actor.user_id, actor.display_name,
                            row["ranked"], row["self_graded"], row["instructor_graded"])

        return await self._engine.run(run)
