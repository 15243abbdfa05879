"""The second reader on Slack: real slack-bolt against the Slack stand-in, the real reader client against
the OpenAI-compatible stand-in. Its opinion arrives in the same private reply as the verdict, under it and
beside "Ask my instructor"; a reader that does not answer in time leaves that reply as it would be."""

from __future__ import annotations

from pathlib import Path

import pytest
from support import CORE_PACK
from test_slack_app import (  # noqa: F401  (the fixtures)
    adapter,
    bot,
    buttons,
    clock,
    command,
    post,
    quiz,
)
from test_slack_partly_right import PARTLY, short_answer_modal, submit

from adapters.slack_app import SlackAdapter
from bot.core.config import ReaderSettings, Settings
from bot.features import reader
from standins.openai_standin import ReaderStandIn
from standins.slack_standin import SlackStandIn


@pytest.fixture
async def model():
    async with ReaderStandIn() as server:
        yield server


@pytest.fixture
def settings(tmp_path: Path, model: ReaderStandIn) -> Settings:
    return Settings(db_path=tmp_path / "bot.db", content_dir=CORE_PACK, results_dir=tmp_path / "results",
                    reader=ReaderSettings(model.url, "test-model", timeout=1.0))


async def test_the_opinion_is_under_the_verdict_beside_ask_my_instructor(
    adapter: SlackAdapter, fake: SlackStandIn, model: ReaderStandIn  # noqa: F811
) -> None:
    model.claims = {"communication": "costs communication"}
    feedback = await submit(adapter, fake, await short_answer_modal(adapter, fake), PARTLY)
    text = feedback["text"]
    assert text.startswith("◑ Partly right, no point yet")
    assert "A second reader also finds: “It pays with extra communication”, in your words 'costs communication'" in text
    assert "Ask my instructor" in [b["text"]["text"] for b in buttons(feedback["blocks"])]
    [request] = model.requests
    assert PARTLY in request.text


async def test_a_reader_out_of_time_leaves_the_reply_as_it_would_be(
    adapter: SlackAdapter, fake: SlackStandIn, model: ReaderStandIn  # noqa: F811
) -> None:
    model.behaviour = "slow"
    feedback = await submit(adapter, fake, await short_answer_modal(adapter, fake), PARTLY)
    assert feedback["text"].startswith("◑ Partly right, no point yet") and reader.QUIET in feedback["text"]
    assert "Ask my instructor" in [b["text"]["text"] for b in buttons(feedback["blocks"])]
