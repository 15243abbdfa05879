"""/insights export builds its files off the event loop: while it works, the same process goes on
answering learners (a press is recorded and acknowledged before the export ends)."""

from __future__ import annotations

import asyncio
import threading

import pytest
from readiness import until
from simulated_cohort import NOW, simulate
from support import choice_for

from bot.core.clock import FixedClock
from bot.core.messages import Actor, ChoiceMade, Command, Place
from bot.reports import cohort_csv

TEACHER = Actor("slack", "T1", "UTEACH", "Teacher", True)
PLACE = Place("slack", "T1", "C1")


@pytest.mark.both_engines
async def test_the_loop_keeps_serving_while_an_export_builds_its_files(bot, monkeypatch) -> None:
    clock: FixedClock = bot.ctx.clock
    await simulate(bot, clock, learners=24)
    clock.set(NOW)
    building, go_on = threading.Event(), threading.Event()
    encode = cohort_csv.encode

    def held(table):  # the export's CSV waits here until the learner below was answered
        building.set()
        if not go_on.wait(60):
            raise AssertionError("the export's CSV was built on the event loop: nothing else could run meanwhile")
        return encode(table)

    monkeypatch.setattr(cohort_csv, "encode", held)
    exporting = asyncio.create_task(bot.handle(Command("insights", "export", TEACHER, PLACE)))
    await until(building.is_set, "the export builds its CSV")

    turns = 0

    async def probe() -> None:  # another task of the loop, making progress meanwhile
        nonlocal turns
        while not go_on.is_set():
            turns += 1
            await asyncio.sleep(0)

    probing = asyncio.create_task(probe())
    who = Actor("slack", "T1", "ULATE", "A late learner")
    [asked] = await bot.handle(Command("quiz", "", who, PLACE))
    [feedback] = await bot.handle(ChoiceMade(choice_for(asked, 0).token, who, PLACE))
    assert feedback.text  # the press was answered, and its answer recorded
    assert await bot.store.answers.answered(who, next(iter(bot.library.lessons))) != set()
    assert not exporting.done() and turns > 0  # all of it while the export was still at work
    go_on.set()
    await probing
    replies = await exporting
    files = {r.file.filename: r.file.content for r in replies if r.file}
    assert set(files) == {"cohort_answers.csv", "cohort_report.html"}
    assert files["cohort_answers.csv"].decode("utf-8-sig").count("\n") > 24
