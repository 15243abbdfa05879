"""The store on both engines: group commit, a failing write undoing only itself, the schema steps;
and on PostgreSQL, what SQLite's single writer did for us, done by rows and constraints instead:
two engines (two processes' worth) on one database racing the read-then-write steps."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from datetime import timedelta

import psycopg
import pytest
from pg import PgServer, with_database
from support import channel, learner

from bot.core.clock import FixedClock
from bot.core.errors import RoundAlreadyOpen, StoreUnavailable
from bot.store import Store
from bot.store.model import QUESTION, AnswerMode, RoundState
from bot.store.schema import SCHEMA_VERSION

pytestmark = pytest.mark.both_engines


@pytest.fixture
async def store(settings, clock) -> AsyncIterator[Store]:
    opened = await Store.open(settings.database, clock)
    yield opened
    await opened.close()


async def test_writes_that_arrive_together_commit_together_and_a_failing_one_undoes_only_itself(store) -> None:
    def boom(c) -> None:
        c.execute("INSERT INTO messages (tag, platform, channel_id, message_id) VALUES ('t', 'slack', 'C', 'm')")
        c.execute("INSERT INTO no_such_table VALUES (1)")

    touches = [store.learners.touch(learner(f"U{n}")) for n in range(20)]
    results = await asyncio.gather(*touches[:10], store.engine.write(boom), *touches[10:], return_exceptions=True)
    assert [r for r in results if isinstance(r, Exception)] and len(results) == 21
    assert await store.count("learners") == 20
    assert await store.messages.get("t") is None  # the failing write left nothing


async def test_every_schema_step_is_applied(store) -> None:
    rows = await store.engine.read("SELECT key, due_at, attempts, last_error, lease_until, lease_owner, claims"
                                   " FROM timers")
    assert rows == []
    if store.engine.dialect.name == "postgresql":
        [row] = await store.engine.read("SELECT MAX(version) AS v FROM schema_version")
    else:
        [row] = await store.engine.read("PRAGMA user_version")
    assert row[0] == SCHEMA_VERSION


async def test_the_portable_sql_reads_the_same(store, clock) -> None:
    """The statements that once were SQLite's own: upserts, json_each, typed NULL tests, RETURNING."""
    who = learner("U1")
    prompt = await store.prompts.new(QUESTION, channel(), who, lesson_id="l", item_id="q1",
                                     mode=AnswerMode.PRACTICE)
    recorded = await store.answers.record(prompt.id, who, lesson_id="l", question_id="q1", mode=AnswerMode.PRACTICE,
                                          correct=True, week="2026-W49", choice=2)
    assert recorded.answer_id is not None and recorded.scored
    assert await store.answers.counts(prompt.id) == [(2, True, 1)]
    assert (await store.insights.questions(who.in_cohort))[0].answered == 1
    assert (await store.insights.weeks(who.in_cohort))[0].points > 0
    await store.timers.set("t:1", clock.now() + timedelta(hours=1))
    assert await store.timers.hurry("t:1", clock.now())
    assert await store.timers.due(clock.now()) == ["t:1"]
    store.insights.looked_up(who.in_cohort, "2026-W49", "gpu", True)
    store.insights.looked_up(who.in_cohort, "2026-W49", "gpu", True)
    assert await store.insights.lookups(who.in_cohort, True) == [("gpu", 2)]


# ---------------------------------------------------------------- two processes on one PostgreSQL database


@pytest.fixture
async def two(pg_server: PgServer) -> AsyncIterator[tuple[Store, Store]]:
    """Two stores on one PostgreSQL database, as two processes hold them."""
    url = pg_server.new_database()
    clock = FixedClock("2026-11-30T09:00:00+00:00")
    a, b = await Store.open(url, clock), await Store.open(url, clock)
    yield a, b
    await a.close()
    await b.close()
    pg_server.drop(url)


@pytest.mark.postgres
async def test_one_learner_answering_in_two_processes_scores_once(two) -> None:
    a, b = two
    who = learner("U1")
    prompts = [await a.prompts.new(QUESTION, channel(), None, lesson_id="l", item_id="q1",
                                   mode=AnswerMode.ROUND) for _ in range(40)]
    results = await asyncio.gather(*(
        (a if n % 2 else b).answers.record(p.id, who, lesson_id="l", question_id="q1", mode=AnswerMode.ROUND,
                                           correct=True, week="2026-W49") for n, p in enumerate(prompts)))
    assert sum(r.scored for r in results) == 1
    rows = await a.engine.read("SELECT COUNT(*) AS n, SUM(scored) AS s FROM answers")
    assert (rows[0]["n"], rows[0]["s"]) == (40, 1)


@pytest.mark.postgres
async def test_one_button_pressed_in_two_processes_is_spent_once(two) -> None:
    a, b = two
    prompt = await a.prompts.new(QUESTION, channel(), None, lesson_id="l", item_id="q1",
                                 mode=AnswerMode.ROUND)
    spent = await asyncio.gather(*((a if n % 2 else b).prompts.spend(prompt.id, learner("U1")) for n in range(20)))
    assert spent.count(True) == 1


@pytest.mark.postgres
async def test_two_processes_open_one_round_per_channel(two) -> None:
    a, b = two
    clock = a.clock

    async def start(store: Store, n: int) -> int | None:
        try:
            round_id, _ = await store.rounds.open(channel(), learner(f"U{n}"), "l", ["q1", "q2"],
                                                  lambda r, p: f"round:{r}:{p}", clock.now())
        except RoundAlreadyOpen:
            return None
        return round_id

    opened = await asyncio.gather(*(start(a if n % 2 else b, n) for n in range(20)))
    assert len([r for r in opened if r is not None]) == 1
    rows = await a.engine.read("SELECT COUNT(*) AS n FROM rounds WHERE state != 'done'")
    assert rows[0]["n"] == 1


@pytest.mark.postgres
async def test_a_timer_and_a_click_in_two_processes_advance_a_round_once(two) -> None:
    a, b = two
    clock = a.clock
    key = lambda r, p: f"round:{r}:{p}"  # noqa: E731
    round_id, first = await a.rounds.open(channel(), learner("U1"), "l", ["q1", "q2", "q3"], key, clock.now())
    round_ = await a.rounds.get(round_id)
    assert round_ is not None
    moved = await asyncio.gather(*((a if n % 2 else b).rounds.advance(round_, first.id, key, clock.now())
                                   for n in range(10)))
    assert moved.count(True) == 1
    after = await b.rounds.get(round_id)
    assert after is not None and after.position == 1 and after.state is RoundState.OPEN
    assert len([r for r in await a.engine.read("SELECT id FROM prompts WHERE round_id = ?", (round_id,))]) == 2


@pytest.mark.postgres
async def test_processes_starting_together_apply_each_schema_step_once(pg_server: PgServer) -> None:
    url = pg_server.empty_database()
    try:
        stores = await asyncio.gather(*(Store.open(url, FixedClock()) for _ in range(3)))
        rows = await stores[0].engine.read("SELECT version FROM schema_version ORDER BY version")
        assert [r["version"] for r in rows] == list(range(1, SCHEMA_VERSION + 1))
        for opened in stores:
            await opened.close()
        with psycopg.connect(url, autocommit=True) as c:
            c.execute("INSERT INTO schema_version (version) VALUES (%s)", (SCHEMA_VERSION + 1,))
        with pytest.raises(StoreUnavailable, match="newer than this studybot"):
            await Store.open(url, FixedClock())
    finally:
        pg_server.drop(url)


@pytest.mark.postgres
@pytest.mark.parametrize("where, says", [
    ("postgresql://postgres@127.0.0.1:1/postgres", "cannot reach PostgreSQL at postgresql://postgres@127.0.0.1:1/"),
    ("no_such_db_here", "the database 'no_such_db_here' does not exist"),
])
async def test_a_database_studybot_cannot_use_is_one_clear_line(request, where: str, says: str) -> None:
    url = where if "://" in where else with_database(request.getfixturevalue("pg_server").url, where)
    with pytest.raises(StoreUnavailable) as caught:
        await Store.open(url, FixedClock())
    assert says in str(caught.value) and "\n" not in str(caught.value)


# ---------------------------------------------------------------- timers: claims, leases, fencing


async def test_a_claimed_timer_is_held_until_its_lease_ends_and_a_former_holder_changes_nothing(store, clock) -> None:
    lease = timedelta(seconds=90)
    await store.timers.set("round:1:0", clock.now())
    [first] = await store.timers.claim(clock.now(), "a", lease)
    assert await store.timers.claim(clock.now(), "b", lease) == []  # held by a
    clock.advance(91)  # a died (or hangs): its lease ran out
    [second] = await store.timers.claim(clock.now(), "b", lease)
    assert (first.key, second.key, second.claim) == ("round:1:0", "round:1:0", first.claim + 1)
    assert await store.timers.failed("round:1:0", "late", first.claim) == 0
    await store.timers.postpone("round:1:0", clock.now(), clock.now(), first.claim)
    assert not await store.timers.give_up("round:1:0", "late", None, first.claim)
    await store.timers.delete("round:1:0", clock.now(), first.claim)
    assert await store.timers.due(clock.now()) == ["round:1:0"]  # a's settling changed nothing
    await store.timers.delete("round:1:0", clock.now(), second.claim)
    assert await store.timers.due(clock.now()) == []


@pytest.mark.postgres
async def test_two_processes_claim_each_due_timer_once(two) -> None:
    a, b = two
    now = a.clock.now()
    await a.engine.write(lambda c: c.executemany("INSERT INTO timers (key, due_at) VALUES (?, ?)",
                                                 [(f"t:{n}", a.engine.now()) for n in range(1000)]))
    claimed: list[str] = []

    async def drain(store: Store, me: str) -> None:
        while found := await store.timers.claim(now, me, timedelta(seconds=90), limit=50):
            claimed.extend(c.key for c in found)

    await asyncio.gather(drain(a, "a"), drain(b, "b"))
    assert len(claimed) == 1000 and len(set(claimed)) == 1000


@contextlib.contextmanager
def another_process_after_read(store: Store, n: int, action: Callable[[], Awaitable[object]]) -> Iterator[None]:
    """The store's real engine, with `action` (another process's write) run once, right after its n-th read."""
    real_read = store.engine.read
    reads = 0

    async def read(sql: str, params=()):
        nonlocal reads
        rows = await real_read(sql, params)
        reads += 1
        if reads == n:
            await action()
        return rows

    store.engine.read = read  # type: ignore[method-assign]
    try:
        yield
    finally:
        store.engine.read = real_read  # type: ignore[method-assign]


async def test_a_round_moved_on_while_stranded_rounds_are_looked_for_is_not_stranded(store, clock) -> None:
    """A starting process looks for open rounds whose question lost its timer; one that another process
    stops between that look and its check keeps its own timers, not a mended one."""
    key = lambda r, p: f"round:{r}:{p}"  # noqa: E731
    round_id, _ = await store.rounds.open(channel(), learner("U1"), "l", ["q1", "q2"], key, clock.now())
    with another_process_after_read(store, 1, lambda: store.rounds.close(round_id, key, then=f"roundend:{round_id}")):
        assert await store.rounds.stranded(key) == []


async def test_a_round_moved_on_just_after_its_check_is_not_stranded_either(store, clock) -> None:
    """Between the one-statement check and reading the round back, another process moves it on: the round
    read back is at its next question, whose timer must not be taken for the lost one."""
    key = lambda r, p: f"round:{r}:{p}"  # noqa: E731
    round_id, first = await store.rounds.open(channel(), learner("U1"), "l", ["q1", "q2"], key, clock.now())
    await store.engine.write(lambda c: c.execute("DELETE FROM timers WHERE key = ?", (key(round_id, 0),)))

    async def move_on() -> None:
        round_ = await store.rounds.get(round_id)
        assert round_ is not None and await store.rounds.advance(round_, first.id, key, clock.now())

    with another_process_after_read(store, 2, move_on):
        assert await store.rounds.stranded(key) == []
