"""An answer costs few round trips to the database: one transaction with no savepoint (a batch of one),
the prompt's check folded into its spending and the first-answer test into the answer's insert; on
PostgreSQL the statements whose results are not read yet go out together (pipeline mode)."""

from __future__ import annotations

from collections import Counter
from collections.abc import AsyncIterator

import psycopg
import pytest
from support import channel, learner

from bot.store import Store
from bot.store.model import QUESTION, AnswerMode

pytestmark = pytest.mark.both_engines


@pytest.fixture
async def store(settings, clock) -> AsyncIterator[Store]:
    opened = await Store.open(settings.database, clock)
    yield opened
    await opened.close()


async def test_an_answer_is_one_transaction_of_few_statements_and_round_trips(store, tmp_path) -> None:
    who = learner("U1")
    prompt = await store.prompts.new(QUESTION, channel(), None, lesson_id="l", item_id="q1", mode=AnswerMode.PRACTICE)
    statements: list[str] = []
    trace = tmp_path / "libpq.trace"

    out = trace.open("w")

    def on(c) -> None:
        if hasattr(c, "conn"):  # PostgreSQL: libpq's own trace of the protocol's messages
            c.conn.pgconn.trace(out.fileno())
            c.conn.pgconn.set_trace_flags(psycopg.pq.Trace.SUPPRESS_TIMESTAMPS)
        else:
            c.set_trace_callback(statements.append)

    def off(c) -> None:
        if hasattr(c, "conn"):
            c.conn.pgconn.untrace()
        else:
            c.set_trace_callback(None)

    await store.engine.run(on)
    recorded = await store.answers.record(prompt.id, who, lesson_id="l", question_id="q1", mode=AnswerMode.PRACTICE,
                                          correct=True, week="2026-W49")
    await store.engine.run(off)
    out.close()
    assert recorded.scored and await store.count("answers") == 1
    if not statements:
        sent = Counter(line.split("\t")[2] for line in trace.read_text().splitlines() if line.startswith("F\t"))
        assert sent["Execute"] >= 5  # the trace saw the answer's statements
        waits = sent["Sync"] + sent["Flush"] + sent["Query"]  # each one a wait for the server's answer
        assert waits <= 5, sent  # 11 before: BEGIN, SAVEPOINT, 7 statements one by one, RELEASE, COMMIT
    else:
        assert [s.split()[0] for s in statements] == ["BEGIN", "INSERT", "INSERT", "INSERT", "INSERT", "UPDATE",
                                                      "COMMIT"]  # no savepoint, no separate SELECTs


async def test_a_closed_prompt_and_a_spent_one_are_still_told_apart(store) -> None:
    who = learner("U1")
    prompt = await store.prompts.new(QUESTION, channel(), None, lesson_id="l", item_id="q1", mode=AnswerMode.PRACTICE)
    record = dict(lesson_id="l", question_id="q1", mode=AnswerMode.PRACTICE, correct=True, week="2026-W49")
    assert (await store.answers.record(prompt.id, who, **record)).outcome == "recorded"
    assert (await store.answers.record(prompt.id, who, **record)).outcome == "already"
    await store.prompts.close(prompt.id)
    assert (await store.answers.record(prompt.id, learner("U2"), **record)).outcome == "closed"
    assert (await store.answers.record("no-such-token", who, **record)).outcome == "closed"
    assert await store.count("answers") == 1
