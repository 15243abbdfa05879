"""Learners: one row per learner and cohort, created on first use; reminders; forgetting."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime

from bot.core.messages import Actor, Cohort
from bot.store.engine import Conn, Engine, Row, iso

# The schema steps of this area, by schema version (the runner in `schema.py` orders them).
SCHEMA = {
    1: """
    CREATE TABLE learners (
        id {serial},
        platform TEXT NOT NULL,
        cohort TEXT NOT NULL,
        user_id TEXT NOT NULL,
        display_name TEXT NOT NULL DEFAULT '',
        points INTEGER NOT NULL DEFAULT 0,
        last_seen TEXT NOT NULL,
        UNIQUE (platform, cohort, user_id)
    );
    CREATE INDEX learners_board ON learners (platform, cohort, points DESC);
    CREATE INDEX learners_by_user ON learners (platform, user_id, last_seen)
    """,
    2: """
    ALTER TABLE learners ADD COLUMN remind INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE learners ADD COLUMN reminded_on TEXT
    """,
    4: "ALTER TABLE learners ADD COLUMN self_graded INTEGER NOT NULL DEFAULT 0",
    10: "ALTER TABLE learners ADD COLUMN instructor_graded INTEGER NOT NULL DEFAULT 0",  # points an instructor gave
    # a learner's own choices: their time zone (/timezone), streak hidden (/streak off), the team they joined
    12: """
    ALTER TABLE learners ADD COLUMN timezone TEXT;
    ALTER TABLE learners ADD COLUMN streak_hidden INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE learners ADD COLUMN team TEXT;
    CREATE INDEX learners_team ON learners (platform, cohort, team) WHERE team IS NOT NULL
    """,
}

CHOOSE = {  # a learner's own choices, each set by its own statement
    "timezone": "UPDATE learners SET timezone = ? WHERE id = ?",
    "streak_hidden": "UPDATE learners SET streak_hidden = ? WHERE id = ?",
    "team": "UPDATE learners SET team = ? WHERE id = ?",
}
LEARNER_KEY = "platform = ? AND cohort = ? AND user_id = ?"  # with key(actor) as its parameters
LEARNER_ID = "(SELECT id FROM learners WHERE " + LEARNER_KEY + ")"


def key(actor: Actor) -> tuple[str, str, str]:
    """The parameters of LEARNER_KEY for an actor."""
    return actor.platform, actor.cohort, actor.user_id


def upsert(c: Conn, actor: Actor, now: str) -> int:
    """The learner's row id, creating the row or refreshing its name and last use."""
    row = c.execute(
        "INSERT INTO learners (platform, cohort, user_id, display_name, last_seen) VALUES (?,?,?,?,?)"
        " ON CONFLICT (platform, cohort, user_id) DO UPDATE SET"
        " display_name = CASE WHEN excluded.display_name != '' THEN excluded.display_name"
        " ELSE learners.display_name END,"
        " last_seen = excluded.last_seen RETURNING id",
        (*key(actor), actor.display_name[:80], now),
    ).fetchone()
    return int(row[0])


@dataclass(frozen=True)
class Choices:
    """What a learner chose for themselves (all unset for a learner never seen)."""

    timezone: str | None = None  # an IANA name; None: the cohort's
    streak_hidden: bool = False
    team: str | None = None  # the team they joined (/team join); a configured team is the config's


def _actor(row: Row) -> Actor:
    return Actor(row["platform"], row["cohort"], row["user_id"], row["display_name"])


def of_cohort(c: Conn, cohort: Cohort) -> list[Actor]:
    """A cohort's learners, by user id."""
    return [_actor(r) for r in c.execute(
        "SELECT platform, cohort, user_id, display_name FROM learners WHERE platform = ? AND cohort = ?"
        " ORDER BY user_id", (cohort.platform, cohort.id))]


class Learners:
    def __init__(self, engine: Engine) -> None:
        self._engine = engine

    async def touch(self, actor: Actor) -> None:
        """Make sure the learner exists (and note this as their last use)."""
        await self._engine.write(upsert, actor, self._engine.now())

    async def last_cohort(self, platform: str, user_id: str) -> str | None:
        """The cohort a user last used on a platform (for commands sent by direct message)."""
        rows = await self._engine.read(
            "SELECT cohort FROM learners WHERE platform = ? AND user_id = ? ORDER BY last_seen DESC LIMIT 1",
            (platform, user_id),
        )
        return rows[0]["cohort"] if rows else None

    async def of_cohort(self, cohort: Cohort) -> list[Actor]:
        return await self._engine.run(of_cohort, cohort)

    async def forget(self, actor: Actor) -> bool:
        """Delete the learner and, by cascade, everything of theirs; False if there was nothing."""

        def run(c: Conn) -> bool:
            return c.execute("DELETE FROM learners WHERE " + LEARNER_KEY, key(actor)).rowcount > 0

        return await self._engine.write(run)

    async def set_remind(self, actor: Actor, on: bool) -> None:
        def run(c: Conn) -> None:
            c.execute("UPDATE learners SET remind = ? WHERE id = ?", (int(on), upsert(c, actor, now)))

        now = self._engine.now()
        await self._engine.write(run)

    async def choices(self, actor: Actor) -> Choices:
        rows = await self._engine.read("SELECT timezone, streak_hidden, team FROM learners WHERE " + LEARNER_KEY,
                                       key(actor))
        return Choices(rows[0]["timezone"], bool(rows[0]["streak_hidden"]), rows[0]["team"]) if rows else Choices()

    async def choose(self, actor: Actor, column: str, value: str | int | None) -> None:
        """Set one of the learner's own choices (timezone, streak_hidden or team), creating the learner."""
        sql = CHOOSE[column]

        def run(c: Conn) -> None:
            c.execute(sql, (value, upsert(c, actor, now)))

        now = self._engine.now()
        await self._engine.write(run)

    async def names(self, cohort: Cohort, user_ids: Iterable[str]) -> dict[str, str]:
        """The display names of those of these learners of the cohort who have one, by user id."""

        def run(c: Conn) -> dict[str, str]:
            found = {}
            for user in user_ids:
                row = c.execute("SELECT display_name FROM learners WHERE " + LEARNER_KEY,
                                (cohort.platform, cohort.id, user)).fetchone()
                if row and row[0]:
                    found[user] = row[0]
            return found

        return await self._engine.run(run)

    async def joined_teams(self, cohort: Cohort) -> dict[str, str]:
        """The team each learner of a cohort joined themselves, by user id."""
        rows = await self._engine.read("SELECT user_id, team FROM learners WHERE platform = ? AND cohort = ?"
                                       " AND team IS NOT NULL", (cohort.platform, cohort.id))
        return {r["user_id"]: r["team"] for r in rows}

    async def to_remind(self, until: datetime,
                        local_day: Callable[[Actor, str | None], str | None]) -> list[tuple[Actor, str]]:
        """Opted-in learners with cards due by `until` and no reminder yet on their local day (`local_day`
        of the learner and the time zone they chose, if any), with that day. Nothing is marked: a reminder
        counts as sent once it was delivered (`reminded`)."""
        rows = await self._engine.read(
            "SELECT l.* FROM learners l WHERE l.remind = 1"
            " AND EXISTS (SELECT 1 FROM cards WHERE learner_id = l.id AND due <= ?)", (iso(until),))
        found = []
        for r in rows:
            today = local_day(_actor(r), r["timezone"])
            if today is not None and r["reminded_on"] != today:
                found.append((_actor(r), today))
        return found

    async def reminded(self, actor: Actor, day: str) -> None:
        """A learner's reminder for their local `day` was delivered."""
        await self._engine.write(lambda c: c.execute("UPDATE learners SET reminded_on = ? WHERE " + LEARNER_KEY,
                                                     (day, *key(actor))))

