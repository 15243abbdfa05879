"""Hints and confidence on Discord: the real discord.py against the stand-in, a real SQLite file,
asserting on the interactions the stand-in recorded. A question with hints shows a Hint button; each
press answers ephemerally with the next hint, another Hint button until the last; a hinted right answer
earns no point. In a server whose cohort asks, "How sure were you?" follows the verdict as two buttons,
and the tap is kept with the answer."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from support import HINTED, HINTS, hinted_pack
from test_discord_app import (  # noqa: F401  (the fixtures)
    button,
    buttons,
    choice,
    discord_only,
    fixed_clock,
    right,
    running,
)

from bot.core.config import Settings
from standins.discord_standin import DiscordStandIn

EPHEMERAL = 64


@pytest.fixture
def discord_settings(tmp_path: Path, discord_fake: DiscordStandIn) -> Settings:
    """The core pack with hints, in a server whose cohort asks how sure each answer was."""
    return Settings(db_path=tmp_path / "bot.db", content_dir=hinted_pack(tmp_path), results_dir=tmp_path / "results",
                    round_seconds=60).with_config({"cohorts": {discord_fake.guild_id: {"platform": "discord",
                                                                                       "confidence": True}}})


def stored(settings: Settings, sql: str) -> list[tuple]:
    with sqlite3.connect(settings.db_path) as db:
        return db.execute(sql).fetchall()


def labels(message: dict) -> list[str]:
    return [b["label"] for b in buttons(message)] if message.get("components") else []


async def test_hints_one_at_a_time_then_a_hinted_answer_earns_no_point(
    running, discord_fake: DiscordStandIn, discord_settings: Settings  # noqa: F811
) -> None:
    studybot, _ = running
    fake = discord_fake
    message = (await fake.interact(fake.slash("quiz"))).message
    assert "💡 Hint" in labels(message)
    first = await fake.interact(fake.component(button(message, "💡 Hint"), message))
    assert first.data["flags"] == EPHEMERAL
    assert first.data["content"].startswith(f"💡 Hint 1 of 2: {HINTS['core-q1'][0]}")
    assert labels(first.data)[-2:] == ["I don't know", "💡 Another hint"]  # the question again, its buttons
    second = await fake.interact(fake.component(button(first.message, "💡 Another hint"), first.message))
    assert second.data["content"].startswith(f"💡 Hint 2 of 2: {HINTS['core-q1'][1]}")
    assert labels(second.data)[-1] == "I don't know"  # after the last, the hint button goes

    graded = await fake.interact(fake.component(right(studybot, second.message), second.message))  # from the hint
    assert graded.data["content"].startswith("✅")
    assert stored(discord_settings, HINTED) == [(1, 0, 2)]


async def test_how_sure_after_an_answer_is_one_tap_kept_with_it(
    running, discord_fake: DiscordStandIn, discord_settings: Settings  # noqa: F811
) -> None:
    studybot, _ = running
    fake = discord_fake
    message = (await fake.interact(fake.slash("quiz"))).message
    graded = await fake.interact(fake.component(right(studybot, message, right=False), message))
    assert "How sure were you?" in graded.data["content"]
    assert labels(graded.data)[:2] == ["Sure", "Unsure"]
    noted = await fake.interact(fake.component(button(graded.message, "Sure"), graded.message))
    assert noted.data["flags"] == EPHEMERAL and noted.data["content"].startswith("Noted: sure.")
    assert stored(discord_settings, "SELECT s.sure, a.correct FROM confidence s JOIN answers a ON a.id = s.answer_id"
                  ) == [(1, 0)]
    again = await fake.interact(fake.component(button(graded.message, "Unsure"), graded.message))
    assert again.data["content"] == "You already said how sure you were of this answer."
