"""Unprompted messages: due timers become TimerFired events, and their replies go out
through each platform's Outbox. A timer is deleted only after its replies were delivered,
so a crash in between repeats a delivery (an edit is harmless to repeat) rather than lose it."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, Protocol

from bot import metrics
from bot.messages import MessageRef, Reply

if TYPE_CHECKING:
    from bot.app import StudyBot

log = logging.getLogger("studybot.scheduler")


class Outbox(Protocol):
    """How the core reaches a platform without a triggering event."""

    async def send(self, reply: Reply) -> MessageRef | None:
        """Post a reply: in `reply.place` when public, to `reply.to` when private or dm."""

    async def edit(self, ref: MessageRef, reply: Reply) -> None:
        """Replace an earlier message."""


async def deliver(bot: StudyBot, outbox: Outbox, reply: Reply) -> MessageRef | None:
    """Send or edit one reply, and report a tagged message's ref back to the core."""
    try:
        if reply.edit is not None:
            await outbox.edit(reply.edit, reply)
            return reply.edit
        ref = await outbox.send(reply)
    except Exception:
        metrics.delivery_failed(_platform(reply))
        raise
    if reply.tag and ref is not None:
        await bot.message_posted(reply.tag, ref)
    return ref


def _platform(reply: Reply) -> str | None:
    if reply.edit is not None:
        return reply.edit.platform
    if reply.place is not None:
        return reply.place.platform
    return reply.to.platform if reply.to is not None else None


async def fire_due(bot: StudyBot, outboxes: Mapping[str, Outbox]) -> int:
    """Fire every due timer once; returns how many fired."""
    events = await bot.due_timers()
    for event in events:
        for reply in await bot.handle(event):
            outbox = outboxes.get(_platform(reply) or "")
            if outbox is None:
                log.warning("no outbox for a %s reply of timer %s", _platform(reply), event.key.split(":")[0])
                continue
            await deliver(bot, outbox, reply)
        await bot.timer_done(event)
    return len(events)


async def run_scheduler(bot: StudyBot, outboxes: Mapping[str, Outbox], interval: float = 1.0) -> None:
    """Fire due timers every `interval` seconds until cancelled; a failure is logged, not fatal."""
    while True:
        try:
            await fire_due(bot, outboxes)
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("timer delivery failed; will retry")
        try:
            await bot.store.beat()
        except Exception:
            log.exception("cannot record the heartbeat")
        await asyncio.sleep(interval)
