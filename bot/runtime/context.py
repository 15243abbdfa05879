"""What every feature is given: the store, the lesson library, the settings and the clock,
with the few helpers they all use. It sits below the features, so that they never import
the router (`bot.runtime.app`), and the router depends on them, never the other way round."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import datetime, time, timedelta
from zoneinfo import ZoneInfo

from fsrs import Scheduler

from bot.content.model import Lesson, Library
from bot.content.term_index import Glossary
from bot.core.clock import Clock, iso_week
from bot.core.config import Settings
from bot.core.errors import StudyError
from bot.core.messages import Actor, Cohort
from bot.grading.reading import NO_SYNONYMS, Synonyms
from bot.questions.base import Question
from bot.store import Store

RESULTS_FILES = "results files"  # the lock held while a cohort's results files change


@dataclass
class Context:
    store: Store
    library: Library
    settings: Settings
    clock: Clock
    fsrs: Scheduler = field(default_factory=Scheduler)  # tests use Scheduler(enable_fuzzing=False)
    glossary: Glossary = field(init=False)
    _file_locks: dict[Cohort, asyncio.Lock] = field(default_factory=dict, init=False, repr=False)

    def __post_init__(self) -> None:
        self.glossary = Glossary(self.library.terms)

    def use(self, library: Library) -> None:
        """Serve another library (a reload); call it between events only (StudyBot.reload does)."""
        self.library = library
        self.glossary = Glossary(library.terms)

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

    def week(self, cohort: Cohort) -> str:
        """This week's ISO name (2026-W48) in the cohort's time zone."""
        return iso_week(self.clock.now(), self.zone(cohort))

    def end_of_local_day(self, cohort: Cohort) -> datetime:
        local = self.clock.now().astimezone(self.zone(cohort))
        return datetime.combine(local.date() + timedelta(days=1), time(0), self.zone(cohort))

    @staticmethod
    def require_instructor(actor: Actor, what: str) -> None:
        if not actor.is_instructor:
            raise StudyError(f"Only instructors can {what}. Ask your instructor if you need it.")
