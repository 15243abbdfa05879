"""The platforms studybot can serve: one line each."""

from __future__ import annotations

from adapters.discord_settings import DISCORD
from adapters.platform import Platform
from adapters.slack_settings import SLACK

PLATFORMS: tuple[Platform, ...] = (
    SLACK,
    DISCORD,
)
