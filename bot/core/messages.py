"""What crosses the boundary between the core and the adapters.

Inbound events and outbound replies are frozen dataclasses. The neutral size limits
live here and are enforced when a reply is built, so no adapter can render a message a
platform would refuse.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from pathlib import Path

MAX_TEXT = 1900
MAX_CHOICES_PER_ROW = 5
MAX_CHOICES = 25
MAX_CHOICE_LABEL = 75
MAX_FORM_TITLE = 24
MAX_INPUT_LABEL = 45
MAX_FORM_TEXT = 4000
CUT_NOTE = "\n… (cut to fit the chat; the full text is in the lesson pack)"


def fit(text: str, limit: int, note: str = "…") -> str:
    """Cut text to at most `limit` characters, ending with `note` when it was cut."""
    if len(text) <= limit:
        return text
    return text[: max(0, limit - len(note))] + note


def counted(n: int, noun: str) -> str:
    """A count with its noun, singular or plural: "1 question", "2 questions"."""
    return f"{n} {noun}{'' if n == 1 else 's'}"


class Audience(StrEnum):
    PUBLIC = "public"  # the channel
    PRIVATE = "private"  # ephemeral where the platform has it, else a direct message
    DM = "dm"  # a direct message


@dataclass(frozen=True)
class Cohort:
    """A Slack workspace, a Discord server or the console: scores never mix across cohorts."""

    platform: str
    id: str

    def __str__(self) -> str:
        return f"{self.platform}:{self.id}"


@dataclass(frozen=True)
class Actor:
    """Who sent an event: the one way a learner is named across the core.

    Adapters set `is_instructor` from the settings, and `locale` from what the platform says of the
    person's language (Discord's `interaction.locale`, Slack's `users.info`, the console's `LANG`)."""

    platform: str
    cohort: str
    user_id: str
    display_name: str = ""
    is_instructor: bool = False
    locale: str | None = field(default=None, compare=False)

    @property
    def in_cohort(self) -> Cohort:
        return Cohort(self.platform, self.cohort)


@dataclass(frozen=True)
class Place:
    """Where an event happened. `channel_id` is None for a direct message."""

    platform: str
    cohort: str
    channel_id: str | None = None

    @property
    def in_cohort(self) -> Cohort:
        return Cohort(self.platform, self.cohort)


@dataclass(frozen=True)
class MessageRef:
    """A message the bot posted, so that a later reply can replace it."""

    platform: str
    channel_id: str
    message_id: str


@dataclass(frozen=True)
class Command:
    name: str
    args: str
    actor: Actor
    place: Place


@dataclass(frozen=True)
class ChoiceMade:
    token: str
    actor: Actor
    place: Place


@dataclass(frozen=True)
class TextSubmitted:
    form_token: str
    text: str
    actor: Actor
    place: Place


@dataclass(frozen=True)
class TimerKey:
    """A stored timer's key: its kind (the feature's timer it is) and the parts that say which
    one (a round and a position, a cohort). Stored as `kind:part:part`; this class is the one
    place that writes or reads that form. A part may hold a colon only if it is the last."""

    kind: str
    parts: tuple[str, ...] = ()

    @classmethod
    def of(cls, kind: str, *parts: object) -> TimerKey:
        return cls(kind, tuple(str(part) for part in parts))

    @classmethod
    def for_cohort(cls, kind: str, cohort: Cohort, *more: object) -> TimerKey:
        return cls.of(kind, cohort.platform, cohort.id, *more)

    @classmethod
    def parse(cls, text: str) -> TimerKey:
        kind, *parts = text.split(":")
        return cls(kind, tuple(parts))

    @property
    def rest(self) -> str:
        """Everything after the kind, as stored (a part that holds colons comes back whole)."""
        return ":".join(self.parts)

    @property
    def cohort(self) -> Cohort:
        """The cohort of a key made by `for_cohort` (a cohort id may hold colons)."""
        return Cohort(self.parts[0], ":".join(self.parts[1:]))

    def __str__(self) -> str:
        return ":".join((self.kind, *self.parts))


@dataclass(frozen=True)
class TimerFired:
    key: TimerKey
    at: datetime
    claim: int | None = None  # the store's count of claims when this process claimed it (None: not claimed)


Event = Command | ChoiceMade | TextSubmitted | TimerFired


@dataclass(frozen=True)
class Choice:
    label: str
    token: str

    def __post_init__(self) -> None:
        object.__setattr__(self, "label", fit(self.label, MAX_CHOICE_LABEL) or "?")


@dataclass(frozen=True)
class Form:
    """A text form: a modal on Slack and Discord, the next line on the console."""

    token: str
    title: str
    prompt: str
    label: str = "Your answer"
    max_length: int = MAX_FORM_TEXT

    def __post_init__(self) -> None:
        object.__setattr__(self, "title", fit(self.title, MAX_FORM_TITLE))
        object.__setattr__(self, "label", fit(self.label, MAX_INPUT_LABEL))
        object.__setattr__(self, "prompt", fit(self.prompt, MAX_TEXT))


@dataclass(frozen=True)
class Attachment:
    filename: str
    content: bytes
    saved_to: Path | None = None  # where the core also wrote it (the console shows this)


@dataclass(frozen=True)
class Reply:
    """One message for the adapter to render.

    `edit` replaces an earlier message instead of posting a new one. `tag` asks the
    adapter to report the posted message back (`StudyBot.message_posted`), so the core
    can edit it later. `place` and `to` address replies that have no triggering event
    (scheduled posts, reminders); otherwise the event's place and actor are used.
    """

    text: str
    audience: Audience = Audience.PRIVATE
    choices: tuple[Choice, ...] = ()
    form: Form | None = None
    file: Attachment | None = None
    edit: MessageRef | None = None
    tag: str | None = None
    place: Place | None = None
    to: Actor | None = None
    retype: bool = False  # the typed text was refused: the form that took it is still open

    def __post_init__(self) -> None:
        object.__setattr__(self, "text", fit(self.text, MAX_TEXT, CUT_NOTE))
        object.__setattr__(self, "choices", tuple(self.choices)[:MAX_CHOICES])

    def rows(self) -> list[tuple[Choice, ...]]:
        """The choices in rows of at most MAX_CHOICES_PER_ROW."""
        return [
            self.choices[i : i + MAX_CHOICES_PER_ROW]
            for i in range(0, len(self.choices), MAX_CHOICES_PER_ROW)
        ]
