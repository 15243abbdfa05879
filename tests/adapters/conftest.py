"""Fixtures shared by the Slack adapter tests: the stand-in, and settings that point the adapter at it."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from adapters.slack_settings import SlackSettings
from bot.core.config import Secret
from standins.slack_standin import SlackStandIn


@pytest.fixture
async def fake() -> AsyncIterator[SlackStandIn]:
    """A running Slack stand-in on 127.0.0.1."""
    async with SlackStandIn() as fake:
        yield fake


@pytest.fixture
def slack(fake: SlackStandIn) -> SlackSettings:
    """HTTP-mode Slack settings whose Web API is the stand-in, on a free port."""
    return SlackSettings(bot_token=Secret(fake.bot_token), signing_secret=Secret(fake.signing_secret),
                         api_url=fake.api_url, http_host="127.0.0.1", http_port=0)
