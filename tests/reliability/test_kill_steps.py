"""SIGKILL at every step: a round, a self-grade and a reminder delivery are each walked by a
subprocess (steps_worker.py) that kills itself right after its Nth database commit or its Nth delivery,
for every N the whole walk has. After a restart on the same database nothing acknowledged is lost or
doubled, no round is left without a timer, and each walk can be finished."""

from __future__ import annotations

import asyncio
import os
import re
import sys
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from bot.core.clock import FixedClock
from bot.core.config import Settings
from bot.core.messages import Actor, ChoiceMade, MessageRef, Place, Reply
from bot.runtime.app import StudyBot
from bot.runtime.scheduler import fire_due
from bot.store.model import RoundState

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
PACK = REPO / "tests" / "packs" / "core"
START = "2026-11-30T08:00:00+00:00"  # a Monday, before the reminders' 09:00
PARALLEL = 4

RELIABILITY = [
    ("a process walking a public round (start, post, three answers, the timed reveal, the next post, Next, the "
     "summary) SIGKILLed right after each of its database commits and each of its deliveries, then restarted",
     "every commit and every delivery of the walk",
     "every acknowledged answer is stored exactly once; no open round is without its timer; the restarted bot "
     "finishes the round"),
    ("the same for a self-grade (a short answer, then 'I got it right')", "every commit",
     "the answer, its self-grade, its points and its card change together or not at all; the button works again "
     "if and only if the grade was not stored"),
    ("the same for the daily reminder delivery (two learners due)", "every commit and every delivery",
     "no learner's reminder is dropped and none is sent more than twice (a crash may repeat one, never lose one)"),
]


async def walk(tmp_path: Path, scenario: str, counter: str, n: int) -> tuple[str, Path]:
    folder = tmp_path / f"{scenario}-{counter}-{n}"
    folder.mkdir()
    env = {**os.environ, "PYTHONPATH": f"{REPO}{os.pathsep}{REPO / 'tests'}"}
    proc = await asyncio.create_subprocess_exec(sys.executable, str(HERE / "steps_worker.py"), scenario,
                                                str(folder / "db.sqlite"), START, counter, str(n), env=env,
                                                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out, err = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode in (0, -9), err.decode()[-2000:]
    return out.decode(), folder


async def every_kill(tmp_path: Path, scenario: str, counters: tuple[str, ...]) -> list[tuple[str, Path, str]]:
    """The full walk once (for its counts), then one walk killed after each commit (and delivery)."""
    whole, _ = await walk(tmp_path, scenario, "commit", 0)
    counts = dict(re.findall(r"(\w+)=(\d+)", whole.splitlines()[-1]))
    points = [(counter, n) for counter in counters for n in range(1, int(counts[counter]) + 1)]
    assert len(points) > 5  # the walk really has steps to cut between
    gate = asyncio.Semaphore(PARALLEL)

    async def one(counter: str, n: int) -> tuple[str, Path, str]:
        async with gate:
            out, folder = await walk(tmp_path, scenario, counter, n)
            return out, folder, f"{counter} {n}"

    return list(await asyncio.gather(*(one(c, n) for c, n in points)))


class Outbox:
    def __init__(self) -> None:
        self.sent: list[Reply] = []

    async def send(self, reply: Reply) -> MessageRef:
        self.sent.append(reply)
        return MessageRef("slack", reply.place.channel_id if reply.place and reply.place.channel_id else "D1",
                          f"after{len(self.sent)}")

    async def edit(self, ref: MessageRef, reply: Reply) -> None:
        self.sent.append(reply)


async def restart(folder: Path, at: datetime) -> StudyBot:
    return await StudyBot.start(Settings(db_path=folder / "db.sqlite", content_dir=PACK,
                                         results_dir=folder / "r"), FixedClock(at))


def acked(out: str) -> list[str]:
    return [line.split(" ", 1)[1] for line in out.splitlines() if line.startswith("ACK ")]


async def test_a_round_killed_at_any_step(tmp_path: Path) -> None:
    for out, folder, where in await every_kill(tmp_path, "round", ("commit", "send")):
        bot = await restart(folder, datetime.fromisoformat(START) + timedelta(minutes=10))
        try:
            assert await bot.store.rounds.stranded(lambda r, p: f"round:{r}:{p}") == [], where
            rows = await bot.store.engine.read("SELECT l.user_id, COUNT(*) AS n FROM answers a"
                                               " JOIN learners l ON l.id = a.learner_id GROUP BY l.user_id")
            stored = {r["user_id"]: r["n"] for r in rows}
            for what in acked(out):
                if what.startswith("answer "):
                    assert stored.get(what.split()[1]) == 1, (where, what, stored)
            assert all(n == 1 for n in stored.values()), (where, stored)
            if "round" not in acked(out) and not (await bot.store.engine.read("SELECT 1 FROM rounds")):
                continue  # killed before the round was ever opened: nothing to finish
            outbox = Outbox()
            for _ in range(20):  # the restarted bot finishes the round
                bot.ctx.clock.advance(61)  # type: ignore[attr-defined]
                await fire_due(bot, {"slack": outbox})
            [state] = await bot.store.engine.read("SELECT state FROM rounds")
            assert state["state"] == RoundState.DONE and await bot.store.count("timers") == 0, where
        finally:
            await bot.close()


async def test_a_self_grade_killed_at_any_step(tmp_path: Path) -> None:
    for out, folder, where in await every_kill(tmp_path, "selfgrade", ("commit",)):
        bot = await restart(folder, datetime.fromisoformat(START))
        try:
            [points] = await bot.store.engine.read(
                "SELECT (SELECT COALESCE(SUM(points), 0) FROM learners) AS learner,"
                " (SELECT COALESCE(SUM(points), 0) FROM weekly_scores) AS weekly,"
                " (SELECT COALESCE(SUM(points), 0) FROM answers) AS answers,"
                " (SELECT COALESCE(SUM(self_graded), 0) FROM learners) AS learner_sg,"
                " (SELECT COALESCE(SUM(points), 0) FROM answers WHERE self_graded = 1) AS answers_sg")
            assert points["learner"] == points["weekly"] == points["answers"], (where, dict(points))
            assert points["learner_sg"] == points["answers_sg"], (where, dict(points))
            answers = await bot.store.engine.read("SELECT self_graded FROM answers")
            assert len(answers) == (1 if "answer" in acked(out) else len(answers)) and len(answers) <= 1, where
            token = re.search(r"^TOKEN (\S+)$", out, re.M)
            if token is None:
                continue  # killed before the self-grade button existed
            graded = bool(answers and answers[0]["self_graded"])
            if "selfgrade" in acked(out):
                assert graded, where
            press = ChoiceMade(token.group(1), Actor("slack", "T1", "U1"), Place("slack", "T1", "C1"))
            [again] = await bot.handle(press)
            expected = "You already graded" if graded else "Recorded: self-graded"
            assert again.text.startswith(expected), (where, again.text)
        finally:
            await bot.close()


async def test_a_reminder_delivery_killed_at_any_step(tmp_path: Path) -> None:
    for out, folder, where in await every_kill(tmp_path, "reminders", ("commit", "send")):
        before = re.findall(r'^SENT reminders:\["slack", "T1", "(U\d)"', out, re.M)
        if not all(f"remind {u}" in acked(out) for u in ("U1", "U2")):
            continue  # killed before both learners had opted in
        lease = timedelta(seconds=Settings.timer_lease)  # a timer the killed process had claimed waits for it
        bot = await restart(folder, datetime.fromisoformat(START) + timedelta(hours=3) + lease)
        try:
            outbox = Outbox()
            await fire_due(bot, {"slack": outbox})
            after = [r.to.user_id for r in outbox.sent if r.to is not None]
            for user in ("U1", "U2"):
                assert 1 <= (before + after).count(user) <= 2, (where, before, after)
            await fire_due(bot, {"slack": outbox})  # and nothing more today
            assert [r.to.user_id for r in outbox.sent if r.to is not None] == after, where
        finally:
            await bot.close()


@pytest.mark.parametrize("scenario", ["round", "selfgrade", "reminders"])
async def test_each_walk_runs_to_its_end_when_not_killed(tmp_path: Path, scenario: str) -> None:
    """Guards the tests above: the whole walk, unkilled, acknowledges every step."""
    out, _ = await walk(tmp_path, scenario, "commit", 0)
    assert {"round": "done", "selfgrade": "selfgrade", "reminders": "reminded"}[scenario] in acked(out)
