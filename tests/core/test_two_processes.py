"""Two studybot processes on one database (two bots, each with its own engine and its own memory):
what one process holds in memory stays right when the other writes, and the work one process does
for all (checking the configured channels, writing a cohort's results files) is done by one at a time."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import replace
from datetime import time

import pytest
from support import channel, learner

from adapters.runner import check_channels
from bot.core.clock import FixedClock
from bot.core.config import CohortSettings, DailyQuestion, Settings
from bot.core.messages import ChoiceMade, Cohort, Command, Place
from bot.kit.context import RESULTS_FILES
from bot.questions.base import OPEN_FORM
from bot.runtime.app import StudyBot
from bot.store.model import QUESTION, AnswerMode

pytestmark = pytest.mark.both_engines


@pytest.fixture
async def pair(settings: Settings, clock: FixedClock) -> AsyncIterator[tuple[StudyBot, StudyBot]]:
    """Two bots on one database: PostgreSQL's, or one SQLite file opened twice."""
    a = await StudyBot.start(settings, clock)
    b = await StudyBot.start(settings, clock)
    yield a, b
    await a.close()
    await b.close()


async def test_a_question_another_process_closed_opens_no_answer_form(pair) -> None:
    a, b = pair
    short = next(q for q in a.library.questions.values() if q.kind == "short")
    prompt = await a.store.prompts.new(QUESTION, channel(), None, lesson_id=short.lesson_id,
                                       item_id=short.id, mode=AnswerMode.ROUND)
    [form] = await b.handle(ChoiceMade(f"{prompt.id}.{OPEN_FORM}", learner("U1"), channel()))
    assert form.form is not None  # b now holds the prompt in memory, open
    await a.store.prompts.close(prompt.id)  # the round moved on in the other process
    [reply] = await b.handle(ChoiceMade(f"{prompt.id}.{OPEN_FORM}", learner("U2"), channel()))
    assert reply.form is None and reply.text == "That question has ended. Watch for the next one."


async def test_glossary_lookups_counted_in_two_processes_add_up(pair) -> None:
    a, b = pair
    term = a.library.terms[0].term
    place = channel()
    await asyncio.gather(*(bot.handle(Command("glossary", query, learner(f"U{n}"), place))
                           for n in range(30) for bot in (a, b) for query in (term, "no such word")))
    cohort = Cohort("slack", "T1")
    await a.store.insights.write_lookups()  # each process writes its counts behind its replies
    assert await b.store.insights.lookups(cohort, found=True) == [(term, 60)]
    assert await b.store.insights.lookups(cohort, found=False) == [("no such word", 60)]


@pytest.mark.postgres  # a SQLite file is one process's
async def test_one_process_checks_the_configured_channels_while_the_other_skips(pair) -> None:
    a, b = pair
    cohorts = {Cohort("fake", "F1"): CohortSettings(daily=DailyQuestion("GONE1", time(9)))}
    for bot in pair:
        bot.ctx.settings = replace(bot.ctx.settings, cohorts=cohorts)
    release = asyncio.Event()
    checked: list[str] = []

    class Adapter:
        platform = "fake"

        async def channel_problem(self, place: Place) -> str | None:
            checked.append(place.channel_id or "")
            await release.wait()
            return "no such channel"

    first = asyncio.create_task(check_channels(a, [Adapter()]))  # type: ignore[list-item]
    while not checked:
        await asyncio.sleep(0.01)
    assert await check_channels(b, [Adapter()]) == 0  # type: ignore[list-item]
    release.set()
    assert await first == 1
    assert checked == ["GONE1"]
    assert [g.timer for g in await b.store.timers.given_up(a.ctx.clock.now().replace(year=2000))] == \
        ["cohorts.F1.daily.channel"]
    assert await check_channels(b, [Adapter()]) == 1  # once the first is done, the next start-up checks again  # type: ignore[list-item]


@pytest.mark.postgres  # a SQLite file is one process's
async def test_a_cohorts_results_files_are_written_by_one_process_at_a_time(pair) -> None:
    a, b = pair
    cohort = Cohort("slack", "T1")
    async with a.ctx.files_lock(cohort):
        assert not await b.store.engine.try_lock(RESULTS_FILES, "slack:T1")
        assert await b.store.engine.try_lock(RESULTS_FILES, "slack:T2")  # another cohort's files are free
        await b.store.engine.unlock(RESULTS_FILES, "slack:T2")
        results = asyncio.create_task(b.handle(Command("results", "", learner("U1"), channel())))
        await asyncio.sleep(0.3)  # b tries the lock meanwhile, and waits
        assert not results.done()
        assert not (b.settings.results_dir).exists()
    [sent, _] = await asyncio.wait_for(results, 5)
    assert sent.file is not None and sent.file.saved_to is not None and sent.file.saved_to.exists()
