"""Prometheus metrics, in studybot's own registry (never the process-wide default one).

Labels name platforms, commands and outcomes only: never a learner, a cohort, a channel or
any text a user typed (an unknown command is counted as "other"). Counters and the latency
histogram are updated as events are handled; the database figures are read when scraped.
"""

from __future__ import annotations

from collections.abc import Collection
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Gauge, Histogram, generate_latest

from bot.core.messages import ChoiceMade, Command, Event, TextSubmitted, TimerFired
from bot.features.reader import metrics as reader
from bot.store.engine import iso

if TYPE_CHECKING:
    from bot.store import Store

CONTENT_TYPE = CONTENT_TYPE_LATEST
OVERDUE_AFTER = timedelta(minutes=1)  # the scheduler ticks every second: a timer this late is stuck

REGISTRY = CollectorRegistry()
EVENTS = Counter("studybot_events", "Events handled, by platform, command and outcome",
                 ("platform", "command", "outcome"), registry=REGISTRY)
LATENCY = Histogram("studybot_handling_seconds", "Time to handle one event, its commit included", ("platform",),
                    buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5), registry=REGISTRY)
DELIVERY_FAILURES = Counter("studybot_delivery_failures", "Replies a platform did not take (send or edit failed)",
                            ("platform",), registry=REGISTRY)
ANSWERS = Gauge("studybot_answers_recorded", "Answers recorded in the database", registry=REGISTRY)
TIMERS_DUE = Gauge("studybot_timers_due", "Stored timers (reveals, reminders, posts) that are due", registry=REGISTRY)
TIMERS_OVERDUE = Gauge("studybot_timers_overdue", "Due timers that are over a minute late", registry=REGISTRY)
DATABASE_BYTES = Gauge("studybot_database_bytes", "Size of the database file and its WAL", registry=REGISTRY)
for _collector in reader.COLLECTORS:  # the second reader's calls, failures, tokens and time
    REGISTRY.register(_collector)


_counted: dict[tuple[str, str, str], Any] = {}  # the metrics' children, each resolved by `labels` once
_timed: dict[str, Any] = {}


def handled(event: Event, outcome: str, seconds: float, commands: Collection[str]) -> None:
    """Count one handled event; `commands` are the known names (anything else is "other")."""
    if isinstance(event, TimerFired):
        platform, command = "scheduler", "timer"
    else:
        platform = event.actor.platform
        if isinstance(event, Command):
            name = event.name.lstrip("/").lower()
            command = name if name in commands else "other"
        else:
            command = "button" if isinstance(event, ChoiceMade) else "form" if isinstance(event, TextSubmitted) else ""
    if (counter := _counted.get((platform, command, outcome))) is None:
        counter = _counted[platform, command, outcome] = EVENTS.labels(platform, command, outcome)
    counter.inc()
    if (latency := _timed.get(platform)) is None:
        latency = _timed[platform] = LATENCY.labels(platform)
    latency.observe(seconds)


def delivery_failed(platform: str | None) -> None:
    DELIVERY_FAILURES.labels(platform or "unknown").inc()


async def exposition(store: Store) -> bytes:
    """The metrics in Prometheus' text format, with the database figures read now."""
    now = store.clock.now()
    [row] = await store.engine.read(
        "SELECT (SELECT COUNT(*) FROM answers) AS answers, (SELECT COUNT(*) FROM timers WHERE due_at <= ?) AS due,"
        " (SELECT COUNT(*) FROM timers WHERE due_at <= ?) AS overdue", (iso(now), iso(now - OVERDUE_AFTER)))
    ANSWERS.set(row["answers"])
    TIMERS_DUE.set(row["due"])
    TIMERS_OVERDUE.set(row["overdue"])
    DATABASE_BYTES.set(store.engine.size())
    return generate_latest(REGISTRY)
