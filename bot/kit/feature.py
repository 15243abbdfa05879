"""What a feature declares about itself; the router reads these declarations and nothing else.

Each module of `bot.features` ends with one `FEATURE = Feature(...)`: its commands (and forms of
another's, `CommandForm`), the handlers of its buttons and forms (per prompt kind: the kinds it
owns), its answering modes and offers (`bot.kit.context`), and its timers, each with its rules:

    FEATURE = Feature(
        "leaderboard",
        commands=(leaderboard,),
        timers=(TimerSpec(SCHEDULE, on_schedule, repeat=next_post, schedule=weekly_posts),),
    )

A timer fires `fire(ctx, key)`; its replies are delivered by the scheduler, and then it is
settled: done (deleted, or re-armed at `repeat` when it repeats), retried with backoff after a
failed delivery, or given up after `attempts` failures (`on_given_up` says what to tell whom).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from bot.content.model import Library
from bot.core.config import Settings
from bot.core.messages import Place, Reply, TextSubmitted, TimerKey
from bot.kit.commands import CommandForm, CommandSpec
from bot.kit.context import Aid, ChoiceHandler, Context, InsightLines, Mode, Offer
from bot.store.areas import Area
from bot.store.model import Prompt, PromptKind

TextHandler = Callable[[Context, TextSubmitted, Prompt], Awaitable[list[Reply]]]
Fire = Callable[[Context, TimerKey], Awaitable[list[Reply]]]
Repeat = Callable[[Context, TimerKey], datetime]
GiveUp = Callable[[Context, TimerKey, str], Awaitable[list[Reply]]]
Delivered = Callable[[Context, TimerKey], Awaitable[None]]
Start = Callable[[Context], Awaitable[None]]
Check = Callable[[Settings, Library], list[tuple[str, str]]]

FIRST_RETRY = timedelta(seconds=10)  # then doubling
LONGEST_RETRY = timedelta(minutes=5)
MAX_ATTEMPTS = 6  # about ten minutes of retries, then the timer is given up


def retry_at(now: datetime, attempts: int, max_attempts: int = MAX_ATTEMPTS) -> datetime | None:
    """When to try a failed timer again after `attempts` failures; None: give it up."""
    if attempts >= max_attempts:
        return None
    return now + min(FIRST_RETRY * 2 ** (attempts - 1), LONGEST_RETRY)


@dataclass(frozen=True)
class Scheduled:
    """A timer the settings ask for (a cohort's weekly post): armed at start-up, and checked
    there, with the config key that set it, for whether studybot may post in its channel."""

    key: TimerKey
    setting: str  # the config key of its channel: cohorts.<id>.leaderboard.channel
    place: Place


@dataclass(frozen=True)
class TimerSpec:
    """One kind of stored timer and its rules."""

    kind: str  # the first part of its keys
    fire: Fire  # its replies when it is due
    repeat: Repeat | None = None  # when it is due again after a delivery; None: it fires once
    on_given_up: GiveUp | None = None  # what to tell whom when its delivery is given up
    on_delivered: Delivered | None = None  # a reply tagged with this kind was delivered (else its ref is kept)
    schedule: Callable[[Settings], Iterable[Scheduled]] | None = None  # the timers the settings ask for
    attempts: int = MAX_ATTEMPTS  # failed deliveries before it is given up

    def retry_at(self, now: datetime, attempts: int) -> datetime | None:
        return retry_at(now, attempts, self.attempts)


@dataclass(frozen=True)
class Feature:
    """Everything the router knows of one feature."""

    name: str
    commands: tuple[CommandSpec, ...] = ()
    choices: Mapping[PromptKind, ChoiceHandler] = field(default_factory=dict)  # a button of a prompt of that kind
    forms: Mapping[PromptKind, TextHandler] = field(default_factory=dict)  # a submitted form of that kind
    timers: tuple[TimerSpec, ...] = ()
    on_start: Start | None = None  # once the store is open (repairs what a crash left half done)
    check: Check | None = None  # (config key, message) for each setting the lesson packs cannot serve
    command_forms: tuple[CommandForm, ...] = ()  # forms of another feature's command it serves (/quiz round)
    modes: tuple[Mode, ...] = ()  # where questions are answered, and how (`bot.answering` reads them)
    offers: tuple[Offer, ...] = ()  # buttons under a verdict, each with when it applies
    aids: tuple[Aid, ...] = ()  # buttons under an open question (a hint), weighed by the scoring rules
    insights: tuple[InsightLines, ...] = ()  # lines it adds to an instructor's /insights
    storage: tuple[Area[Any], ...] = ()  # its own tables (`bot.store.areas`): ctx.store.area(AREA)

    @property
    def prompt_kinds(self) -> set[PromptKind]:
        """The kinds of prompt this feature owns: those of its buttons and forms."""
        return {*self.choices, *self.forms}
