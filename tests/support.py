"""Helpers shared by the tests (importable as `support`)."""

from __future__ import annotations

from pathlib import Path

from bot.messages import Actor, Place

REPO = Path(__file__).resolve().parents[1]
CONTENT = REPO / "content"


def learner(user: str = "U1", *, cohort: str = "T1", platform: str = "slack", teacher: bool = False) -> Actor:
    return Actor(platform, cohort, user, f"name-{user}", teacher)


def channel(cohort: str = "T1", channel_id: str | None = "C1", platform: str = "slack") -> Place:
    return Place(platform, cohort, channel_id)
