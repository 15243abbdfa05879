"""What every feature is given: the store, the lesson library, the settings and the clock,
with the few helpers they all use, and what the features declared about answering: their modes
(where questions are answered, and how), offers (the buttons that may follow a verdict) and aids
(a button under an open question, such as a hint), which the pipeline in `bot.answering` reads and
nothing else; and the lines each feature adds to an instructor's `/insights`:

    MODE = Mode("review", next=next_card, dont_know=comes_back)
    OFFER = Offer("dispute", applies=lambda a: a.disputable, make=ask_choice)
    AID = Aid("hint", label=hint_label, press=show_hint, taken=hints_taken)

The context sits below the features, so that they never import the router (`bot.runtime.app`),
and the router depends on them, never the other way round."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, time, timedelta
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from fsrs import Rating, Scheduler

from bot.content.model import Lesson, Library
from bot.content.term_index import Glossary
from bot.core import i18n
from bot.core.clock import Clock, Weeks
from bot.core.config import Settings
from bot.core.errors import StudyError
from bot.core.messages import Actor, Choice, ChoiceMade, Cohort, Place, Reply, TextSubmitted
from bot.grading.reading import NO_SYNONYMS, Synonyms
from bot.questions.base import Question, Verdict
from bot.store import Store
from bot.store.engine import Conn
from bot.store.model import Disputed, Prompt

RESULTS_FILES = "results files"  # the lock held while a cohort's results files change

ChoiceHandler = Callable[["Context", ChoiceMade, Prompt, str], Awaitable[list[Reply]]]
NextItem = Callable[["Context", Actor, Place, Lesson], Awaitable[list[Reply]]]
InsightLines = Callable[["Context", Cohort, str | None, str | None], Awaitable[list[str]]]  # lesson id, week
DontKnowNote = Callable[["Context", Actor, Question], Awaitable[str]]


@dataclass(frozen=True)
class Answered:
    """One graded answer once it is stored, as an offer sees it: a question's answer or a teach-back."""

    event: ChoiceMade | TextSubmitted
    of: Disputed  # what was answered: a question (a row of answers) or a teach-back prompt
    source_id: int  # the stored answer's or attempt's id
    lesson_id: str
    item_id: str  # the question's or teach-back prompt's id
    correct: bool
    disputable: bool  # the grade says an instructor may be asked about it
    self_gradable: bool = False  # the honor system may replace the grade
    mode: str | None = None
    question: Question | None = None
    verdict: Verdict | None = None
    card_before: str | None = None  # the review card as it was, for a self-grade to rate again
    follow_ups: bool = False  # its mode lets a partly right answer be completed (`Mode.follow_ups`)
    rating: Rating | None = None  # how the answer rated its review card


@dataclass(frozen=True)
class Offered:
    """What an offer adds under a verdict: lines of text and buttons."""

    lines: tuple[str, ...] = ()
    choices: tuple[Choice, ...] = ()


@dataclass(frozen=True)
class Offer:
    """Buttons a feature offers under a verdict, when `applies` says so; offers are made in the
    order the features are listed, each on its own prompt."""

    name: str
    applies: Callable[[Answered], bool]
    make: Callable[[Context, Answered], Awaitable[Offered]]


@dataclass(frozen=True)
class Aid:
    """Help a feature offers under an open question (a hint): its button on the question, labelled for
    that question (None: no button for it), what a press says, and how much of it a learner took before
    answering, which the pipeline records with the answer (the scoring rules weigh it)."""

    name: str  # the choice suffix of its button on a question's prompt
    label: Callable[[Question], str | None]
    press: ChoiceHandler
    taken: Callable[[Conn, int, str], int]  # (connection, learner id, prompt id), read in the answer's transaction


@dataclass(frozen=True)
class Mode:
    """Where a question is answered (practice, a round, review, the question of the day…) and what
    that changes: whether the feedback shows, what "Next question" asks (None: no Next button, as
    in a round, which waits for its reveal), what "I don't know" says of the card coming back,
    more buttons on its questions (a round's Next), how the review card is rated, whether it scores."""

    name: str  # the stored value of `prompts.mode` and `answers.mode`
    next: NextItem | None = None
    feedback: bool = True  # False: "Answer recorded." only, the verdict kept for the end (an exam)
    dont_know: DontKnowNote | None = None
    buttons: Mapping[str, ChoiceHandler] = field(default_factory=dict)  # choice suffix: handler
    rate: Callable[[Verdict], Rating] | None = None  # None: the usual rating (`bot.answering.cards.rating_for`)
    scores: bool = True  # the first answer to a question scores (the scoring rules); False: never
    follow_ups: bool = True  # a partly right answer may be completed once (not while a round waits to reveal it)

    def button(self, suffix: str) -> ChoiceHandler | None:
        return self.buttons.get(suffix)


@dataclass(frozen=True)
class Declared:
    """The modes, offers, aids and insight lines every feature declared, as the router gathered them."""

    modes: Mapping[str, Mode] = field(default_factory=dict)
    offers: tuple[Offer, ...] = ()
    aids: tuple[Aid, ...] = ()
    insights: tuple[InsightLines, ...] = ()

    def mode(self, name: str | None) -> Mode:
        return self.modes.get(name or "") or Mode(name or "")

    def aid(self, suffix: str) -> Aid | None:
        for aid in self.aids:  # a loop, not a generator: every button press asks
            if aid.name == suffix:
                return aid
        return None


@dataclass
class Context:
    store: Store
    library: Library
    settings: Settings
    clock: Clock
    fsrs: Scheduler = field(default_factory=Scheduler)  # tests use Scheduler(enable_fuzzing=False)
    glossary: Glossary = field(init=False)
    declared: Declared = field(default_factory=Declared)  # the features' modes and offers (the router sets them)
    _file_locks: dict[Cohort, asyncio.Lock] = field(default_factory=dict, init=False, repr=False)
    _weeks: Weeks = field(default_factory=Weeks, init=False, repr=False)

    def __post_init__(self) -> None:
        self.glossary = Glossary(self.library.terms)

    def use(self, library: Library) -> None:
        """Serve another library (a reload); call it between events only (StudyBot.reload does)."""
        self.library = library
        self.glossary = Glossary(library.terms)

    # ------------------------------------------------------------ the reader's language

    def _(self, message: str, /, **values: object) -> str:
        """A message in the language of the learner this event is for (`bot.core.i18n`), filled in."""
        return i18n.current().gettext(message, **values)

    def ngettext(self, singular: str, plural: str, n: int, /, **values: object) -> str:
        return i18n.current().ngettext(singular, plural, n, **values)

    def pgettext(self, context: str, message: str, /, **values: object) -> str:
        return i18n.current().pgettext(context, message, **values)

    @property
    def tr(self) -> i18n.Translator:
        """The event's translator: its messages, dates and numbers (a private reply's language)."""
        return i18n.current()

    def public(self, cohort: Cohort) -> i18n.Translator:
        """The translator of a cohort's public posts (`cohorts.<id>.language`), never one learner's."""
        return i18n.translator(self.settings.cohort(cohort).language)

    @asynccontextmanager
    async def files_lock(self, cohort: Cohort) -> AsyncIterator[None]:
        """Held while a cohort's results files are written or deleted, so the two never cross: by one
        event of this process at a time, and by one process at a time (on PostgreSQL, the files
        being on storage the processes share)."""
        async with self._file_locks.setdefault(cohort, asyncio.Lock()):
            async with self.store.engine.locked(RESULTS_FILES, f"{cohort.platform}:{cohort.id}"):
                yield

    def lesson(self, name: str | None) -> Lesson:
        """A lesson by id or unique prefix (the first one when no name is given)."""
        lesson = self.library.lesson(name)
        if lesson is None and name and len(matches := self.library.lessons_named(name)) > 1:
            raise StudyError(f"'{name[:40]}' could be {', '.join(m.id for m in matches[:-1])} or {matches[-1].id}; "
                             "type more of its id.")
        if lesson is None:
            known = ", ".join(self.library.lessons) or "none"
            raise StudyError(f"No lesson '{(name or '')[:40]}'. Lessons: {known}.")
        return lesson

    def synonyms(self, lesson_id: str) -> Synonyms:
        """The lesson's synonyms table, read the same in answers and in accepted phrasings."""
        lesson = self.library.lessons.get(lesson_id)
        return lesson.synonyms if lesson else NO_SYNONYMS

    def question(self, question_id: str | None) -> Question:
        question = self.library.questions.get(question_id or "")
        if question is None:
            raise StudyError("That question was removed from the lesson. Use /quiz for a fresh one; "
                             "your earlier answers are kept.")
        return question

    def zone(self, cohort: Cohort) -> ZoneInfo:
        return self.settings.cohort(cohort).timezone

    async def learner_zone(self, actor: Actor) -> ZoneInfo:
        """Where a learner's days begin: their own time zone (/timezone), else their cohort's."""
        return self.zone_for(actor, (await self.store.learners.choices(actor)).timezone)

    def zone_for(self, actor: Actor, chosen: str | None) -> ZoneInfo:
        """The zone a learner chose (a stored name), or their cohort's when none (or one no longer known)."""
        if chosen:
            try:
                return ZoneInfo(chosen)
            except (ZoneInfoNotFoundError, ValueError):
                pass
        return self.zone(actor.in_cohort)

    def week(self, cohort: Cohort) -> str:
        """This week's ISO name (2026-W48) in the cohort's time zone."""
        return self._weeks.name(self.clock.now(), self.zone(cohort))

    def scheduler(self, cohort: Cohort) -> Scheduler:
        """FSRS as the cohort sets it: `fsrs`'s parameters at the cohort's desired retention."""
        retention = self.settings.cohort(cohort).review.desired_retention
        if retention == self.fsrs.desired_retention:
            return self.fsrs
        return Scheduler(self.fsrs.parameters, retention, self.fsrs.learning_steps, self.fsrs.relearning_steps,
                         self.fsrs.maximum_interval, self.fsrs.enable_fuzzing)

    def exam(self, cohort: Cohort, lesson_id: str) -> datetime | None:
        """The first moment (local midnight, in UTC) of the lesson's exam day in the cohort, if it has one."""
        day = self.settings.cohort(cohort).review.exam_of(lesson_id)
        return None if day is None else datetime.combine(day, time(0), self.zone(cohort)).astimezone(UTC)

    def end_of_local_day(self, cohort: Cohort) -> datetime:
        local = self.clock.now().astimezone(self.zone(cohort))
        return datetime.combine(local.date() + timedelta(days=1), time(0), self.zone(cohort))

    @staticmethod
    def require_instructor(actor: Actor, what: str) -> None:
        if not actor.is_instructor:
            raise StudyError(f"Only instructors can {what}. Ask your instructor if you need it.")
