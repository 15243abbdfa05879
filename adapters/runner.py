"""`studybot run`: every configured platform in one event loop, on one store, with one
scheduler delivering timers through each platform's Outbox. SIGTERM and Ctrl-C stop it
cleanly: adapters finish the work in flight, then the store closes."""

from __future__ import annotations

import asyncio
import logging
import signal
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from adapters.platform import Platform
from bot.app import StudyBot
from bot.scheduler import Outbox, run_scheduler

log = logging.getLogger("studybot.runner")


class Adapter(Outbox, Protocol):
    platform: str

    async def start(self) -> None: ...

    async def close(self) -> None: ...


def make_adapters(bot: StudyBot, configured: Mapping[Platform, Any]) -> list[Adapter]:
    """One adapter per configured platform, given that platform's settings."""
    return [platform.adapter_class()(bot, settings) for platform, settings in configured.items()]


async def run_platforms(bot: StudyBot, configured: Mapping[Platform, Any], stop: asyncio.Event | None = None) -> None:
    stop = stop or asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    adapters: Sequence[Adapter] = make_adapters(bot, configured)
    started: list[Adapter] = []
    ticker = None
    try:
        for adapter in adapters:
            await adapter.start()
            started.append(adapter)
            log.info("%s connected", adapter.platform)
        ticker = asyncio.create_task(run_scheduler(bot, {a.platform: a for a in started}))
        log.info("studybot is running on %s", ", ".join(a.platform for a in started))
        await stop.wait()
        log.info("stopping")
    finally:
        if ticker:
            ticker.cancel()
        for adapter in reversed(started):
            await adapter.close()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.remove_signal_handler(sig)
