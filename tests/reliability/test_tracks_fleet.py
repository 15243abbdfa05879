"""Tracks across a fleet: three `studybot run` processes (Slack HTTP mode, real slack-bolt) on one
PostgreSQL database send a three-step track to 1,000 learners who join in five waves over two days,
counted at the Slack stand-in; the process holding steps it claimed is SIGKILLed mid-track, before it
sent them. Every step reaches every learner exactly once (one direct message each at the stand-in, one
record in the database), the killed process's steps too, sent by the others after its lease.

The processes share a clock the test moves (fleet_worker.py's FLEET_CLOCK): it jumps to each moment
something is due and waits there until every step due was sent, so that two days pass in seconds and
no lease runs out under a delivery still under way."""

from __future__ import annotations

import asyncio
import os
import signal
from collections import Counter
from datetime import datetime
from pathlib import Path

import pytest
from test_fleet import Worker, database, environment, fake, until  # noqa: F401  (the fixtures)

from bot.core.clock import FixedClock
from bot.core.messages import Actor
from bot.features.tracks.storage import AREA, STEP
from bot.runtime.app import feature_areas
from bot.store import Store
from bot.store.engine import iso
from standins.slack_standin import SlackStandIn

pytestmark = pytest.mark.postgres

COHORT = "T0001"
PROCESSES, LEARNERS, WAVES = 3, 1000, 5
TRACK = """cohorts:
  T0001:
    platform: slack
    timezone: Europe/Berlin
    track:
      - {day: 0, time: "09:00", quiz: core-basics}
      - {day: 1, time: "09:00", message: "Day one done: keep going."}
      - {day: 2, time: "18:00", teachback: core-tb1}
"""
STEPS = 3
START = "2026-11-30T04:00:00+00:00"  # Monday, 05:00 in Berlin
JOINS = {  # a wave of 200 learners joins at each of these moments (UTC; Berlin is an hour ahead)
    "2026-11-30T05:00:00+00:00": 0, "2026-11-30T12:00:00+00:00": 1, "2026-11-30T21:00:00+00:00": 2,
    "2026-12-01T06:00:00+00:00": 3, "2026-12-01T14:00:00+00:00": 4}
MOMENTS = sorted({*JOINS, "2026-11-30T08:00:00+00:00", "2026-12-01T08:00:00+00:00", "2026-12-02T08:00:00+00:00",
                  "2026-12-02T17:00:00+00:00", "2026-12-03T17:00:00+00:00"})
STALL_AT = "2026-12-01T08:00:00+00:00"  # mid-track: 600 steps sent, 800 due at this moment
TEXTS = ("Your track · day 0: the quiz of Core basics.", "Your track · day 1: Day one done: keep going.",
         "Your track · day 2: a teach-back.")

RELIABILITY = [
    ("three `studybot run` processes (Slack HTTP mode) on one PostgreSQL database send a three-step track to "
     "1,000 learners joining in five waves; the process holding claimed steps is SIGKILLed mid-track",
     f"{LEARNERS} learners × {STEPS} steps, {PROCESSES} processes, a shared clock the test moves",
     "each step reaches each learner exactly once at the Slack stand-in, the killed process's steps too"),
]


def move_clock(path: Path, moment: str) -> None:
    """Set the fleet's clock (written whole, then renamed: a process reads the old time or the new one)."""
    part = path.with_suffix(".part")
    part.write_text(moment)
    os.replace(part, path)


async def test_a_thousand_learners_tracks_survive_the_sigkill_of_a_process(
        database: str, fake: SlackStandIn, tmp_path: Path) -> None:  # noqa: F811
    config, stall, clock_file = tmp_path / "studybot.yaml", tmp_path / "stall", tmp_path / "clock"
    config.write_text(TRACK)
    move_clock(clock_file, START)
    clock = FixedClock(START)
    store = await Store.open(database, clock, feature_areas())
    env = environment(tmp_path, database, fake, STUDYBOT_CONFIG=str(config), FLEET_CLOCK=str(clock_file))
    fleet = await asyncio.gather(*(Worker.start("run", {**env, **({"FLEET_STALL": str(stall)} if n == 0 else {})},
                                                tmp_path / f"p{n}") for n in range(PROCESSES)))
    victim, killed, held = fleet[0], False, []
    try:
        await asyncio.gather(*(w.serving() for w in fleet))
        for moment in MOMENTS:
            clock.set(moment)
            if moment in JOINS:  # their first use (an answer, a /quiz): the sweep after the jump starts them
                wave = range(JOINS[moment] * LEARNERS // WAVES, (JOINS[moment] + 1) * LEARNERS // WAVES)
                await asyncio.gather(*(store.learners.touch(Actor("slack", COHORT, f"U{n:04d}", f"learner {n}"))
                                       for n in wave))
            if moment == STALL_AT:
                stall.touch()  # the victim's next delivery waits, its claims held, having sent nothing
            move_clock(clock_file, moment)
            if stall.exists():  # the victim holds steps, or the others sent them all (then: the next moment)

                async def stalled_or_sent(moment: str = moment) -> bool:
                    return await _said(victim, "QUIET") or await _waiting(store, moment, None) == 0

                await until(stalled_or_sent, "the victim to hold steps it claimed", 60, fleet)
            if "QUIET" in victim.lines and not killed:
                held = await _held_by(store, victim)
                victim.proc.kill()
                assert await victim.proc.wait() == -signal.SIGKILL
                stall.unlink()
                killed = True

            async def sent_what_is_due(moment: str = moment, dead: Worker | None = victim if killed else None) -> bool:
                return await _waiting(store, moment, dead) == 0

            await until(sent_what_is_due, f"the steps due at {moment}", 60, fleet)
        await until(lambda: _all_sent(fake), "every step to reach the stand-in", 60, fleet)
    finally:
        codes = [await w.stop() for w in fleet if w.proc.returncode is None]
        recorded = await store.area(AREA).count_delivered()
        await store.close()
    assert codes == [0] * (PROCESSES - 1), [w.log()[-1000:] for w in fleet]
    assert killed and held, "the victim was killed holding claimed steps"
    posts = Counter((c.params["channel"], c.params["text"].split(":")[0]) for c in fake.calls_to("chat.postMessage"))
    assert {key: n for key, n in posts.items() if n > 1} == {}  # none twice
    assert set(posts) == {(f"DU{n:04d}", f"Your track · day {day}") for n in range(LEARNERS) for day in range(STEPS)}
    assert all(c.params["text"].startswith(TEXTS) for c in fake.calls_to("chat.postMessage"))
    assert recorded == LEARNERS * STEPS
    assert all(w.delivered() for w in fleet[1:])  # both survivors took part


async def _said(worker: Worker, word: str) -> bool:
    if worker.proc.returncode is not None:
        pytest.fail("the victim ended before it was killed:\n" + worker.log()[-2000:])
    return word in worker.lines


async def _held_by(store: Store, worker: Worker) -> list[str]:
    rows = await store.engine.read("SELECT key FROM timers WHERE key LIKE ? AND lease_owner LIKE ?",
                                   (f"{STEP}:%", f"%:{worker.proc.pid}:%"))
    return [r["key"] for r in rows]


async def _waiting(store: Store, moment: str, dead: Worker | None) -> int:
    """Learners whose track has not started, and steps due at `moment` not yet sent (but those a killed
    process holds: they wait for its lease to end, at the next moment)."""
    rows = await store.engine.read(
        "SELECT (SELECT COUNT(*) FROM learners l WHERE NOT EXISTS (SELECT 1 FROM tracks t WHERE t.learner_id = l.id))"
        " + (SELECT COUNT(*) FROM timers WHERE key LIKE ? AND due_at <= ?"
        " AND (lease_owner IS NULL OR lease_owner NOT LIKE ?)) AS n",
        (f"{STEP}:%", iso(datetime.fromisoformat(moment)), f"%:{dead.proc.pid if dead else 0}:%"))
    return int(rows[0]["n"])


async def _all_sent(standin: SlackStandIn) -> bool:
    return len(standin.calls_to("chat.postMessage")) >= LEARNERS * STEPS
