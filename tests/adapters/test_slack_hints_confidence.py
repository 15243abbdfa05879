"""Hints and confidence on Slack: real slack-bolt against the stand-in, a real SQLite file, asserting on
the traffic the stand-in recorded. A question with hints shows a Hint button; each press answers privately
with the next hint, another Hint button until the last; a hinted right answer earns no point. In a cohort
that asks, "How sure were you?" follows the verdict as two buttons, and the tap is kept with the answer."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from support import HINTED, HINTS, hinted_pack
from test_slack_app import (  # noqa: F401  (the fixtures)
    adapter,
    bot,
    buttons,
    clock,
    correct_button,
    quiz,
)
from test_slack_disputes import labelled, press

from adapters.slack_app import SlackAdapter
from bot.core.config import Instructors, Settings
from standins.slack_standin import SlackStandIn


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    """The core pack with hints, in a team whose cohort asks how sure each answer was."""
    return Settings(db_path=tmp_path / "bot.db", content_dir=hinted_pack(tmp_path), results_dir=tmp_path / "results",
                    instructors=Instructors()).with_config({"cohorts": {"T0001": {"platform": "slack",
                                                                                  "confidence": True}}})


def stored(settings: Settings, sql: str) -> list[tuple]:
    with sqlite3.connect(settings.db_path) as db:
        return db.execute(sql).fetchall()


def labels(blocks: list[dict]) -> list[str]:
    return [b["text"]["text"] for b in buttons(blocks)]


async def test_hints_one_at_a_time_then_a_hinted_answer_earns_no_point(
    adapter: SlackAdapter, fake: SlackStandIn, bot, settings: Settings  # noqa: F811
) -> None:
    blocks = (await quiz(adapter, fake))["blocks"]
    assert "💡 Hint" in labels(blocks)
    first = await press(adapter, fake, labelled(blocks, "💡 Hint"), "U0001")
    assert first["text"].startswith(f"💡 Hint 1 of 2: {HINTS['core-q1'][0]}")
    assert labels(first["blocks"])[-2:] == ["I don't know", "💡 Another hint"]  # the question again, its buttons
    second = await press(adapter, fake, labelled(first["blocks"], "💡 Another hint"), "U0001")
    assert second["text"].startswith(f"💡 Hint 2 of 2: {HINTS['core-q1'][1]}")
    assert labels(second["blocks"])[-1] == "I don't know"  # after the last, the hint button goes

    feedback = await press(adapter, fake, correct_button(bot, second["blocks"]), "U0001")  # answered from the hint
    assert feedback["text"].startswith("✅")
    assert stored(settings, HINTED) == [(1, 0, 2)]
    assert not fake.calls_to("chat.postMessage")  # every hint and verdict was private


async def test_how_sure_after_an_answer_is_one_tap_kept_with_it(
    adapter: SlackAdapter, fake: SlackStandIn, bot, settings: Settings  # noqa: F811
) -> None:
    blocks = (await quiz(adapter, fake))["blocks"]
    wrong = next(b for b in buttons(blocks) if b["value"].endswith(".0"))  # core-q1's choice 0 is wrong
    feedback = await press(adapter, fake, wrong, "U0001")
    assert "How sure were you?" in feedback["text"]
    assert labels(feedback["blocks"])[:2] == ["Sure", "Unsure"]
    noted = await press(adapter, fake, labelled(feedback["blocks"], "Sure"), "U0001")
    assert noted["text"].startswith("Noted: sure.")
    assert stored(settings, "SELECT s.sure, a.correct FROM confidence s JOIN answers a ON a.id = s.answer_id") == [
        (1, 0)]
    again = await press(adapter, fake, labelled(feedback["blocks"], "Unsure"), "U0001")
    assert again["text"] == "You already said how sure you were of this answer."
