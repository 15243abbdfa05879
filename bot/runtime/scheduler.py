"""Unprompted messages: due timers become TimerFired events, and their replies go out through
each platform's Outbox (`bot.runtime.delivery`).

Each due timer fires in a task of its own, so one slow or failing channel never delays another.
The route is two calls into the bot: `fire` for the replies, and, once they were delivered or
failed, `settle`, which applies the timer's declared rules (`bot.kit.feature.TimerSpec`): done
(deleted, or re-armed when it repeats) only after delivery, so a crash in between repeats a delivery
(an edit is harmless to repeat) rather than lose it; a failure retried with backoff, then given up
with its reason recorded, and the notices its feature gives delivered here.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING

from bot.core.errors import DeliveryFailed, reference_id
from bot.core.messages import Reply, TimerFired, TimerKey
from bot.runtime.delivery import Outbox, deliver, platform_of

if TYPE_CHECKING:
    from bot.runtime.app import StudyBot

log = logging.getLogger("studybot.scheduler")

DELIVERY_TIMEOUT = 30.0  # seconds one timer's deliveries may take before they count as failed
PURGE_EVERY = 3600.0  # seconds between looks for uninstalled workspaces past their retention
TICK = 1.0  # seconds between the scheduler's ticks; each tick beats (`studybot health` reads the beats)


class Scheduler:
    """Fires due timers, each in a task of its own, and keeps track of the ones in flight."""

    def __init__(self, bot: StudyBot, outboxes: Mapping[str, Outbox]) -> None:
        self.bot = bot
        self.outboxes = outboxes
        self.in_flight: dict[TimerKey, asyncio.Task[None]] = {}

    async def tick(self) -> list[asyncio.Task[None]]:
        """Start every due timer that is not already firing; returns the tasks started."""
        started = []
        for event in await self.bot.due_timers():
            if event.key not in self.in_flight:
                task = asyncio.create_task(self._fire(event), name=f"timer {event.key.kind}")
                self.in_flight[event.key] = task
                started.append(task)
        return started

    async def finish(self, timeout: float = DELIVERY_TIMEOUT) -> None:
        """Let the deliveries in flight end (at shutdown), within `timeout`."""
        if self.in_flight:
            await asyncio.wait(list(self.in_flight.values()), timeout=timeout)

    async def _fire(self, event: TimerFired) -> None:
        try:
            try:
                replies = await self.bot.fire(event)
                async with asyncio.timeout(DELIVERY_TIMEOUT):
                    failures = [exc for reply in replies if (exc := await self._deliver(reply)) is not None]
                if failures:  # each reply was tried: one learner's closed DMs do not stop the others
                    raise failures[0]
            except Exception as exc:
                await self._failed(event, exc)
            else:
                await self.bot.settle(event)
        finally:
            self.in_flight.pop(event.key, None)

    async def _deliver(self, reply: Reply) -> Exception | None:
        """Deliver one reply; the failure, if it failed."""
        try:
            await deliver(self.bot, self._outbox(reply), reply)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            return exc
        return None

    def _outbox(self, reply: Reply) -> Outbox:
        platform = platform_of(reply)
        outbox = self.outboxes.get(platform or "")
        if outbox is None:
            raise DeliveryFailed(f"no {platform or 'platform'} connection serves this post", permanent=True)
        return outbox

    async def _failed(self, event: TimerFired, exc: Exception) -> None:
        kind = event.key.kind
        permanent = isinstance(exc, DeliveryFailed) and exc.permanent
        reason = str(exc)[:200] if isinstance(exc, DeliveryFailed) else f"{type(exc).__name__}: {str(exc)[:160]}"
        try:
            settled = await self.bot.settle(event, reason, permanent=permanent)
            if settled.retry_at is not None:
                log.warning("timer %s failed (attempt %d, %s); retrying at %s", kind, settled.attempts, reason,
                            settled.retry_at.isoformat(timespec="seconds"))
                return
            log.error("timer %s given up after %d attempt(s): %s", kind, settled.attempts, reason)
            for notice in settled.notices:
                try:
                    await deliver(self.bot, self._outbox(notice), notice)
                except Exception:
                    log.warning("could not deliver the note that timer %s was given up", kind)
        except Exception:
            ref = reference_id()
            log.exception("bug ref=%s while recording the failure of timer %s", ref, kind)


async def fire_due(bot: StudyBot, outboxes: Mapping[str, Outbox]) -> int:
    """Fire every due timer once and wait for them; returns how many fired."""
    tasks = await Scheduler(bot, outboxes).tick()
    await asyncio.gather(*tasks)
    return len(tasks)


async def run_scheduler(bot: StudyBot, outboxes: Mapping[str, Outbox], interval: float = TICK) -> None:
    """Fire due timers every `interval` seconds until cancelled; the heartbeat says it is alive."""
    scheduler = Scheduler(bot, outboxes)
    purged = asyncio.get_running_loop().time()  # StudyBot.start purged
    try:
        while True:
            if asyncio.get_running_loop().time() - purged >= PURGE_EVERY:
                purged = asyncio.get_running_loop().time()
                try:
                    await bot.purge_uninstalled()
                except Exception:
                    log.exception("cannot delete the scores of long-uninstalled workspaces; will try again")
            try:
                await scheduler.tick()
            except Exception:
                log.exception("cannot read the due timers; will try again")
            try:
                await bot.store.beat()
            except Exception:
                log.exception("cannot record the heartbeat")
            await asyncio.sleep(interval)
    finally:
        await scheduler.finish(timeout=5.0)
