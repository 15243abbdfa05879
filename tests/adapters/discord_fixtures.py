"""Shared Discord test helpers: a started stand-in fixture and a bot runner.

Import the fixture into a test module to use it: ``from discord_fixtures import discord_fake``.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import discord
import pytest
import yarl
from discord_standin import DiscordStandIn


def point_discord_at(monkeypatch: pytest.MonkeyPatch, fake: DiscordStandIn) -> None:
    """Redirect discord.py's REST/webhooks and gateway to the stand-in (undone after the test)."""
    monkeypatch.setattr(discord.http.Route, "BASE", fake.api_base)
    monkeypatch.setattr(discord.gateway.DiscordWebSocket, "DEFAULT_GATEWAY", yarl.URL(fake.gateway_url))


@pytest.fixture
async def discord_fake(monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[DiscordStandIn]:
    """A running stand-in with discord.py pointed at it."""
    async with DiscordStandIn() as fake:
        point_discord_at(monkeypatch, fake)
        yield fake


@asynccontextmanager
async def running_bot(
    bot: discord.Client, fake: DiscordStandIn, *, token: str | None = None, timeout: float = 5.0
) -> AsyncIterator[discord.Client]:
    """Log ``bot`` in to the stand-in, connect the gateway, wait until ready; close on exit.

    Login errors (e.g. ``discord.LoginFailure``) and gateway failures before ready propagate.
    """
    task: asyncio.Task[None] | None = None
    try:
        await bot.login(token or fake.token)
        task = asyncio.create_task(bot.connect(reconnect=False), name="discord-bot-connect")
        ready = asyncio.create_task(bot.wait_until_ready())
        done, _ = await asyncio.wait({task, ready}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
        if ready not in done:
            ready.cancel()
            if task in done:
                task.result()  # re-raise why the gateway connection ended
            raise TimeoutError("bot did not become ready against the Discord stand-in")
        yield bot
    finally:
        await bot.close()
        if task is not None:
            await asyncio.wait_for(task, timeout)
