"""The tracks feature's own tables: when each learner's track starts (their local day 0, from their
first use in the cohort or set by an instructor) and which steps reached them. Each step waits in
the core's `timers` table (`track:<learner row>:<step id>`), so that one process claims it and a
killed process's claim is taken over after its lease; a step is recorded here once the platform
acknowledged it, and a step recorded is never sent again."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime

from bot.core.messages import Actor, Cohort
from bot.store import learners
from bot.store.areas import Area
from bot.store.engine import Conn, Engine, iso

STEP = "track"  # the kind of a step's timer

STEPS = {
    1: """
    CREATE TABLE tracks (
        learner_id INTEGER PRIMARY KEY REFERENCES learners (id) ON DELETE CASCADE,
        starts_on TEXT NOT NULL,
        set_by TEXT
    );
    CREATE TABLE track_steps (
        learner_id INTEGER NOT NULL REFERENCES learners (id) ON DELETE CASCADE,
        step TEXT NOT NULL,
        delivered_at TEXT NOT NULL,
        PRIMARY KEY (learner_id, step)
    )
    """,
}

_ARM = "INSERT INTO timers (key, due_at) VALUES (?, ?) ON CONFLICT (key) DO NOTHING"


def step_key(learner_id: int, step: str) -> str:
    """The timer of one learner's step."""
    return f"{STEP}:{learner_id}:{step}"


@dataclass(frozen=True)
class Newcomer:
    """A learner of a cohort whose track has not started: their row and who they are."""

    learner_id: int
    actor: Actor


@dataclass(frozen=True)
class Track:
    """A learner's track: its local day 0, who set it (None: their first use) and the steps delivered."""

    learner_id: int
    actor: Actor
    starts_on: date
    set_by: str | None
    delivered: frozenset[str]
    waiting: frozenset[str] = frozenset()  # steps with a timer: those not delivered nor waiting are never sent


Planned = Sequence[tuple[str, datetime]]  # (step id, when it is due), for one learner


def _arm(c: Conn, learner_id: int, steps: Planned) -> None:
    if steps:
        c.executemany(_ARM, [(step_key(learner_id, step), iso(due)) for step, due in steps])


def _begin(c: Conn, learner_id: int, starts_on: date, steps: Planned) -> bool:
    """Start a learner's track with its steps' timers, unless it started before."""
    if c.execute("INSERT INTO tracks (learner_id, starts_on) VALUES (?, ?) ON CONFLICT (learner_id) DO NOTHING",
                 (learner_id, starts_on.isoformat())).rowcount != 1:
        return False
    # Any step still waiting under this row is a forgotten learner's (SQLite gives a deleted row's id again).
    c.execute("DELETE FROM timers WHERE key LIKE ?", (step_key(learner_id, "%"),))
    _arm(c, learner_id, steps)
    return True


class Tracks:
    def __init__(self, engine: Engine) -> None:
        self._engine = engine

    async def newcomers(self, cohort: Cohort) -> list[Newcomer]:
        """The cohort's learners whose track has not started yet."""
        rows = await self._engine.read(
            "SELECT l.id, l.user_id, l.display_name FROM learners l WHERE l.platform = ? AND l.cohort = ?"
            " AND NOT EXISTS (SELECT 1 FROM tracks t WHERE t.learner_id = l.id) ORDER BY l.id",
            (cohort.platform, cohort.id))
        return [Newcomer(int(r["id"]), Actor(cohort.platform, cohort.id, r["user_id"], r["display_name"]))
                for r in rows]

    async def begin(self, started: Sequence[tuple[int, date, Planned]]) -> int:
        """Start the tracks of learners (row, local day 0, their steps) whose track has not started,
        each with its steps' timers, in one transaction; returns how many started (a track started
        meanwhile, by an instructor or another process, is left as it is)."""

        return await self._engine.write(lambda c: sum(_begin(c, *each) for each in started))

    async def begin_now(self, actor: Actor, starts_on: date, steps: Planned) -> None:
        """A learner's first use: their track starts (unless it had), with its steps' timers."""
        now = self._engine.now()
        await self._engine.write(lambda c: _begin(c, learners.upsert(c, actor, now), starts_on, steps))

    async def set_start(self, actor: Actor, starts_on: date, set_by: str,
                        steps: Planned) -> frozenset[str]:
        """An instructor sets a learner's day 0: the steps not yet delivered are re-timed from it (those
        in `steps`), in one transaction. Returns the steps already delivered (they are not sent again)."""

        def run(c: Conn) -> frozenset[str]:
            learner_id = learners.upsert(c, actor, now)
            c.execute("INSERT INTO tracks (learner_id, starts_on, set_by) VALUES (?, ?, ?) ON CONFLICT (learner_id)"
                      " DO UPDATE SET starts_on = excluded.starts_on, set_by = excluded.set_by",
                      (learner_id, starts_on.isoformat(), set_by))
            c.execute("DELETE FROM timers WHERE key LIKE ?", (step_key(learner_id, "%"),))
            done = frozenset(r[0] for r in c.execute("SELECT step FROM track_steps WHERE learner_id = ?",
                                                     (learner_id,)).fetchall())
            _arm(c, learner_id, [(step, due) for step, due in steps if step not in done])
            return done

        now = self._engine.now()
        return await self._engine.write(run)

    async def of(self, actor: Actor) -> Track | None:
        """A learner's track, if it started."""
        rows = await self._engine.read("SELECT id FROM learners WHERE " + learners.LEARNER_KEY, learners.key(actor))
        return await self.get(int(rows[0]["id"])) if rows else None

    async def get(self, learner_id: int) -> Track | None:
        """A learner's track by their row, if it started."""

        def run(c: Conn) -> Track | None:
            row = c.execute("SELECT l.platform, l.cohort, l.user_id, l.display_name, t.starts_on, t.set_by"
                            " FROM tracks t JOIN learners l ON l.id = t.learner_id WHERE t.learner_id = ?",
                            (learner_id,)).fetchone()
            if row is None:
                return None
            done = c.execute("SELECT step FROM track_steps WHERE learner_id = ?", (learner_id,)).fetchall()
            timers = c.execute("SELECT key FROM timers WHERE key LIKE ?", (step_key(learner_id, "%"),)).fetchall()
            return Track(learner_id, Actor(row["platform"], row["cohort"], row["user_id"], row["display_name"]),
                         date.fromisoformat(row["starts_on"]), row["set_by"], frozenset(r[0] for r in done),
                         frozenset(r[0].rsplit(":", 1)[1] for r in timers))

        return await self._engine.run(run)

    async def of_cohort(self, cohort: Cohort) -> list[Track]:
        """The tracks started in a cohort."""

        def run(c: Conn) -> list[Track]:
            rows = c.execute("SELECT l.id, l.user_id, l.display_name, t.starts_on, t.set_by FROM tracks t"
                             " JOIN learners l ON l.id = t.learner_id WHERE l.platform = ? AND l.cohort = ?",
                             (cohort.platform, cohort.id)).fetchall()
            done: dict[int, set[str]] = {}
            for r in c.execute("SELECT s.learner_id, s.step FROM track_steps s JOIN learners l ON l.id = s.learner_id"
                               " WHERE l.platform = ? AND l.cohort = ?", (cohort.platform, cohort.id)).fetchall():
                done.setdefault(int(r[0]), set()).add(r[1])
            return [Track(int(r["id"]), Actor(cohort.platform, cohort.id, r["user_id"], r["display_name"]),
                          date.fromisoformat(r["starts_on"]), r["set_by"], frozenset(done.get(int(r["id"]), ())))
                    for r in rows]

        return await self._engine.run(run)

    async def arm(self, planned: Sequence[tuple[int, Planned]]) -> None:
        """Each learner's (row) steps get their timer, unless they have one."""

        def run(c: Conn) -> None:
            for learner_id, steps in planned:
                _arm(c, learner_id, steps)

        await self._engine.write(run)

    async def delivered(self, learner_id: int, step: str) -> None:
        """The platform acknowledged a step: it is never sent again."""
        now = self._engine.now()
        await self._engine.write(lambda c: c.execute(
            "INSERT INTO track_steps (learner_id, step, delivered_at) VALUES (?, ?, ?)"
            " ON CONFLICT (learner_id, step) DO NOTHING", (learner_id, step, now)))

    async def count_delivered(self) -> int:
        """Steps delivered, in every cohort (for tests and health checks)."""
        rows = await self._engine.read("SELECT COUNT(*) AS n FROM track_steps")
        return int(rows[0]["n"])


AREA = Area("tracks", STEPS, Tracks)
