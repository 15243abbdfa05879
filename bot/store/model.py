"""What the store hands back: enums for what is stored as words, dataclasses for rows."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any, NamedTuple

from bot.core.messages import Place

HintsTaken = Callable[[Any, int], int]  # (connection, learner id): the hints a learner took before answering
CardReview = Callable[[str | None], tuple[str, datetime]]  # a card's state (None: new) -> (new state, due)


PromptKind = str  # what a button or form token refers to: each feature declares its own kinds
QUESTION: PromptKind = "question"  # a question's prompt, in any mode (the store opens a round's itself)


class AnswerMode(StrEnum):
    """Where an answer was given, for the modes the store itself reads (a feature may declare
    another: a prompt's `mode` is any mode's name)."""

    PRACTICE = "practice"
    ROUND = "round"
    REVIEW = "review"
    DAILY = "daily"  # the question of the day


class Disputed(StrEnum):
    """What a dispute is of: a short answer (a row of `answers`) or a teach-back attempt."""

    ANSWER = "answer"
    TEACHBACK = "teachback"


class RoundState(StrEnum):
    OPEN = "open"
    PAUSED = "paused"  # nobody answered twice in a row: waits for /quiz round resume
    DONE = "done"


class ChoiceCount(NamedTuple):
    """Answers to one posted question with one choice (None: typed) and one grade."""

    choice: int | None
    correct: bool
    n: int


class Outcome(StrEnum):
    """What became of a submitted answer."""

    RECORDED = "recorded"
    ALREADY = "already"  # this learner already used that prompt
    CLOSED = "closed"  # the prompt's question has ended
    SETTLED = "settled"  # an instructor graded it (an accepted dispute): their grade stands


@dataclass(frozen=True)
class Prompt:
    """A posted question, button set or form, named by its token.

    `owner` is the user id of the learner it was issued to (None: anyone in the cohort)."""

    id: str
    kind: PromptKind
    platform: str
    cohort: str
    owner: str | None
    lesson_id: str | None
    item_id: str | None
    mode: str | None  # the mode it was asked in (an `AnswerMode`, or one a feature declares)
    round_id: int | None
    data: dict[str, Any]
    closed: bool
    created_at: datetime


@dataclass(frozen=True)
class Recorded:
    """The outcome of an answer. `card_before` is the review card's state before this answer
    rated it (None: a new card)."""

    outcome: Outcome
    answer_id: int | None = None
    scored: bool = False
    card_before: str | None = None


@dataclass(frozen=True)
class Round:
    id: int
    platform: str
    cohort: str
    channel_id: str
    lesson_id: str
    starter: str | None  # the starter's user id; None once they asked to be forgotten
    question_ids: tuple[str, ...]
    position: int
    state: RoundState
    seconds: int | None = None  # its own time per question; None: the configured one
    started_at: datetime | None = None

    @property
    def place(self) -> Place:
        return Place(self.platform, self.cohort, self.channel_id)


@dataclass(frozen=True)
class RoundScore:
    display_name: str
    correct: int
    answered: int
    user_id: str = ""


@dataclass(frozen=True)
class Standing:
    """A place on a board; `points` are those ranked (all, or those not self-graded)."""

    rank: int
    user_id: str
    display_name: str
    points: int
    self_graded: int = 0
    instructor_graded: int = 0


@dataclass(frozen=True)
class Typed:
    """What a typed answer said, and which key points the rubric found in it."""

    text: str
    matched: tuple[str, ...] = ()
    missed: tuple[str, ...] = ()
    verdict: str | None = None  # the rubric's: correct, partly (right, no point yet) or not_yet


@dataclass(frozen=True)
class SelfGradedAnswer:
    """An answer its learner graded themselves, beside the rubric's own verdict."""

    user_id: str
    display_name: str
    question_id: str
    text: str
    correct: bool  # the learner's grade
    rubric_correct: bool
    matched: tuple[str, ...]
    missed: tuple[str, ...]
    answered_at: datetime


@dataclass(frozen=True)
class ScoredAnswer:
    """A learner's first (scoring) answer to a question."""

    question_id: str
    correct: bool
    self_graded: bool
    instructor_graded: bool = False
    verdict: str | None = None  # a typed answer's rubric verdict (partly: right in part, no point)
    points: int = 0  # what it earned (a hinted right answer may earn less than the point)


@dataclass(frozen=True)
class Card:
    """A learner's spaced-repetition card for one question."""

    question_id: str
    lesson_id: str
    state: str
    due: datetime


@dataclass(frozen=True)
class Attempt:
    """A recorded teach-back attempt and the points it earned."""

    id: int
    points: int


@dataclass(frozen=True)
class TeachbackCount:
    attempts: int = 0
    points: int = 0
    instructor_graded: int = 0  # of the points, those an instructor gave by accepting a dispute



@dataclass(frozen=True)
class GivenUp:
    """A timer whose delivery failed until it was given up, and why."""

    timer: str
    reason: str
    at: datetime
