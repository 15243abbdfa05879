"""Public rounds: which questions, how far along, who started them.

Each step of a round is one transaction, so a kill at any moment leaves it whole: opening stores
the round, its first question's prompt and that question's timer together; advancing closes a
question and stores the next one's prompt and timer together (or ends the round)."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from datetime import datetime

from bot.core.errors import RoundAlreadyOpen
from bot.core.messages import Actor, Place
from bot.store import learners, prompts, timers
from bot.store.engine import Conn, Engine, Row, iso
from bot.store.model import QUESTION, AnswerMode, Prompt, Round, RoundScore, RoundState

TimerKey = Callable[[int, int], str]  # (round id, position) -> the key of that question's timer

SCHEMA = {
    1: """
    CREATE TABLE rounds (
        id {serial},
        platform TEXT NOT NULL,
        cohort TEXT NOT NULL,
        channel_id TEXT NOT NULL,
        lesson_id TEXT NOT NULL,
        starter_id INTEGER REFERENCES learners (id) ON DELETE SET NULL,
        question_ids TEXT NOT NULL,
        position INTEGER NOT NULL DEFAULT 0,
        state TEXT NOT NULL DEFAULT 'open',
        started_at TEXT NOT NULL,
        ended_at TEXT
    );
    CREATE INDEX rounds_open ON rounds (platform, cohort, channel_id, state)
    """,
    6: "ALTER TABLE rounds ADD COLUMN seconds INTEGER",  # a round may set its own time per question
    # one running (or paused) round per channel, whichever process opens it
    8: "CREATE UNIQUE INDEX rounds_one_open ON rounds (platform, cohort, channel_id) WHERE state != 'done'",
}


def _question_prompt(c: Conn, round_id: int, place: Place, lesson_id: str, question_id: str,
                     position: int, at: datetime, timer_key: TimerKey, due: datetime) -> Prompt:
    """Store the prompt of a round's question and the timer that reveals it."""
    prompt = prompts.make(QUESTION, place, None, at, lesson_id=lesson_id, item_id=question_id,
                          mode=AnswerMode.ROUND, round_id=round_id, data={"position": position})
    prompts.insert(c, prompt, None)
    c.execute(timers.SET_TIMER, (timer_key(round_id, position), iso(due)))
    return prompt


class Rounds:
    def __init__(self, engine: Engine, prompt_cache: prompts.Prompts) -> None:
        self._engine = engine
        self._prompts = prompt_cache

    async def open(self, place: Place, starter: Actor, lesson_id: str, question_ids: Sequence[str],
                   timer_key: TimerKey, due: datetime, seconds: int | None = None) -> tuple[int, Prompt]:
        """A new round in a channel with its first question's prompt and timer, in one transaction;
        RoundAlreadyOpen when one is running (or paused) there."""
        now = self._engine.clock.now()

        def run(c: Conn) -> tuple[int, Prompt]:
            busy = c.execute("SELECT 1 FROM rounds WHERE platform = ? AND cohort = ? AND channel_id = ?"
                             " AND state != ?", (place.platform, place.cohort, place.channel_id, RoundState.DONE))
            if busy.fetchone():
                raise RoundAlreadyOpen()
            starter_id = learners.upsert(c, starter, iso(now))
            row = c.execute(  # the partial unique index rounds_one_open settles a race between processes
                "INSERT INTO rounds (platform, cohort, channel_id, lesson_id, starter_id, question_ids, state,"
                " started_at, seconds) VALUES (?,?,?,?,?,?,?,?,?)"
                " ON CONFLICT (platform, cohort, channel_id) WHERE state != 'done' DO NOTHING RETURNING id",
                (place.platform, place.cohort, place.channel_id, lesson_id, starter_id, json.dumps(list(question_ids)),
                 RoundState.OPEN, iso(now), seconds)).fetchone()
            if row is None:
                raise RoundAlreadyOpen()
            round_id = int(row[0])
            return round_id, _question_prompt(c, round_id, place, lesson_id, question_ids[0], 0, now, timer_key, due)

        round_id, first = await self._engine.write(run)
        self._prompts.remember(first)
        return round_id, first

    async def get(self, round_id: int) -> Round | None:
        rows = await self._engine.read(
            "SELECT r.*, l.user_id AS starter FROM rounds r LEFT JOIN learners l ON l.id = r.starter_id"
            " WHERE r.id = ?", (round_id,))
        if not rows:
            return None
        return _round(rows[0])

    async def in_channel(self, place: Place) -> Round | None:
        """The round running (or paused) in a channel, if any."""
        rows = await self._engine.read(
            "SELECT r.*, l.user_id AS starter FROM rounds r LEFT JOIN learners l ON l.id = r.starter_id"
            " WHERE r.platform = ? AND r.cohort = ? AND r.channel_id = ? AND r.state != ?",
            (place.platform, place.cohort, place.channel_id, RoundState.DONE))
        return _round(rows[0]) if rows else None

    async def stale(self, started_before: datetime) -> list[Round]:
        """Rounds still running (or paused) that were started before a moment."""
        rows = await self._engine.read(
            "SELECT r.*, l.user_id AS starter FROM rounds r LEFT JOIN learners l ON l.id = r.starter_id"
            " WHERE r.state != ? AND r.started_at < ?", (RoundState.DONE, iso(started_before)))
        return [_round(r) for r in rows]

    async def pause(self, round_: Round, prompt_id: str) -> bool:
        """Close the question at the round's position and wait there (nobody is answering)."""
        now = iso(self._engine.clock.now())

        def run(c: Conn) -> bool:
            done = c.execute("UPDATE rounds SET position = ?, state = ? WHERE id = ? AND state = ? AND position = ?",
                             (round_.position + 1, RoundState.PAUSED, round_.id, RoundState.OPEN,
                              round_.position)).rowcount
            if done:
                prompts.close(c, prompt_id, now)
            return done > 0

        paused = await self._engine.write(run)
        if paused:
            self._prompts.closed(prompt_id)
        return paused

    async def resume(self, round_: Round, timer_key: TimerKey, due: datetime) -> Prompt | None:
        """Go on with a paused round: its next question's prompt and timer, in one transaction."""
        now = self._engine.clock.now()

        def run(c: Conn) -> Prompt | None:
            done = c.execute("UPDATE rounds SET state = ? WHERE id = ? AND state = ?",
                             (RoundState.OPEN, round_.id, RoundState.PAUSED)).rowcount
            if not done:
                return None
            return _question_prompt(c, round_.id, round_.place, round_.lesson_id,
                                    round_.question_ids[round_.position], round_.position, now, timer_key, due)

        prompt = await self._engine.write(run)
        if prompt is not None:
            self._prompts.remember(prompt)
        return prompt

    async def advance(self, round_: Round, prompt_id: str, timer_key: TimerKey, due: datetime) -> bool:
        """Close the question at the round's position and move on, once, in one transaction: the next
        question's prompt and timer are stored with it (or the round ends). False if already done."""
        now = self._engine.clock.now()
        position = round_.position

        def run(c: Conn) -> Prompt | None:
            last = position + 1 >= len(round_.question_ids)
            moved = c.execute(  # conditional: of a timer and a click in two processes, one moves the round
                "UPDATE rounds SET position = ?, state = ?, ended_at = ? WHERE id = ? AND state = ? AND position = ?",
                (position + 1, RoundState.DONE if last else RoundState.OPEN, iso(now) if last else None,
                 round_.id, RoundState.OPEN, position)).rowcount
            if not moved:
                raise _AlreadyAdvanced()
            prompts.close(c, prompt_id, iso(now))
            if last:
                return None
            return _question_prompt(c, round_.id, round_.place, round_.lesson_id, round_.question_ids[position + 1],
                                    position + 1, now, timer_key, due)

        try:
            following = await self._engine.write(run)
        except _AlreadyAdvanced:
            return False
        self._prompts.closed(prompt_id)
        if following is not None:
            self._prompts.remember(following)
        return True

    async def close(self, round_id: int, timer_key: TimerKey, then: str | None = None) -> Round | None:
        """End a round where it stands, in one transaction: its open question's prompt closes, that
        question's timer goes, and the timer `then` (its summary) is set due now; None if it was not open."""
        now = iso(self._engine.clock.now())

        def run(c: Conn) -> list[str] | None:
            row = c.execute("UPDATE rounds SET state = ?, ended_at = ? WHERE id = ? AND state != ? RETURNING position",
                            (RoundState.DONE, now, round_id, RoundState.DONE)).fetchone()
            if row is None:
                return None
            c.execute("DELETE FROM timers WHERE key = ?", (timer_key(round_id, row["position"]),))
            if then is not None:
                c.execute(timers.SET_TIMER, (then, now))
            ids = [r["id"] for r in c.execute("SELECT id FROM prompts WHERE round_id = ? AND closed_at IS NULL",
                                              (round_id,))]
            for prompt_id in ids:
                prompts.close(c, prompt_id, now)
            return ids

        closed = await self._engine.write(run)
        if closed is None:
            return None
        for prompt_id in closed:
            self._prompts.closed(prompt_id)
        return await self.get(round_id)

    async def stranded(self, timer_key: TimerKey) -> list[Round]:
        """Open rounds whose current question has no timer (what a kill between steps once left)."""
        rows = await self._engine.read("SELECT id, position FROM rounds WHERE state = ?", (RoundState.OPEN,))
        found = []
        for r in rows:  # checked in one statement: a round another process moves on meanwhile is not stranded
            still = await self._engine.read(
                "SELECT 1 FROM rounds WHERE id = ? AND state = ? AND position = ?"
                " AND NOT EXISTS (SELECT 1 FROM timers WHERE key = ?)",
                (r["id"], RoundState.OPEN, r["position"], timer_key(r["id"], r["position"])))
            round_ = await self.get(r["id"]) if still else None
            if round_ is not None and round_.position == r["position"]:  # not moved on since the check
                found.append(round_)
        return found

    async def prompt_at(self, round_id: int, position: int) -> Prompt | None:
        """The prompt of the round's question at `position`, once it was stored."""
        rows = await self._engine.read("SELECT id, data FROM prompts WHERE round_id = ? AND kind = ?",
                                       (round_id, QUESTION))
        found = [r["id"] for r in rows if json.loads(r["data"]).get("position") == position]
        return await self._prompts.get(found[0]) if found else None

    async def scores(self, round_id: int) -> list[RoundScore]:
        """Per learner in a round: correct and answered, best first."""
        rows = await self._engine.read(
            "SELECT l.display_name, l.user_id, SUM(a.correct) AS n_right, COUNT(*) AS n"
            " FROM answers a JOIN prompts p ON p.id = a.prompt_id JOIN learners l ON l.id = a.learner_id"
            " WHERE p.round_id = ? GROUP BY l.id ORDER BY n_right DESC, l.display_name", (round_id,))
        return [RoundScore(r["display_name"] or r["user_id"], r["n_right"], r["n"], r["user_id"]) for r in rows]


def _round(r: Row) -> Round:
    return Round(r["id"], r["platform"], r["cohort"], r["channel_id"], r["lesson_id"], r["starter"],
                 tuple(json.loads(r["question_ids"])), r["position"], RoundState(r["state"]), r["seconds"],
                 datetime.fromisoformat(r["started_at"]))


class _AlreadyAdvanced(Exception):
    """Inside a transaction: the round had moved on already (nothing to write)."""
