"""The lesson model: what a lesson pack holds once it is loaded and checked."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from bot.grading.reading import NO_SYNONYMS, Synonyms
from bot.grading.rubric import Examples, KeyPoint, Rubric
from bot.questions.base import Question


@dataclass(frozen=True)
class Goal:
    id: str
    text: str


@dataclass(frozen=True)
class Term:
    term: str
    definition: str
    lesson_id: str
    aliases: tuple[str, ...] = ()
    related: tuple[str, ...] = ()
    sources: tuple[str, ...] = ()


@dataclass(frozen=True)
class TeachbackPrompt:
    id: str
    lesson_id: str
    prompt: str
    rubric: Rubric
    goal: str = ""
    sources: tuple[str, ...] = ()
    examples: Examples = Examples()
    needed_because: str = ""  # the author's reason for `needed`, for those who edit the rubric

    @property
    def key_points(self) -> tuple[KeyPoint, ...]:
        return self.rubric.points


@dataclass(frozen=True)
class Lesson:
    id: str
    title: str
    summary: str
    goals: tuple[Goal, ...]
    path: Path
    synonyms: Synonyms = NO_SYNONYMS  # read the same in answers and in accepted phrasings
    questions: tuple[Question, ...] = ()  # the quiz: /quiz, /results and quiz.md
    prompts: tuple[TeachbackPrompt, ...] = ()
    terms: tuple[Term, ...] = ()
    practice: tuple[Question, ...] = ()  # further questions, outside the quiz: /review and practice rounds
    sources: Mapping[str, str] = field(default_factory=dict, compare=False)  # notes.md's sources by id: title <link>
    language: str = "en"  # what its rubrics and its learners' answers are written in (`bot.grading.languages`)

    @property
    def question_ids(self) -> tuple[str, ...]:
        return tuple(q.id for q in self.questions)

    @property
    def review_questions(self) -> tuple[Question, ...]:
        """What /review draws on: the quiz, then the practice set."""
        return self.questions + self.practice

    @property
    def review_question_ids(self) -> tuple[str, ...]:
        return tuple(q.id for q in self.review_questions)


@dataclass
class Library:
    """Every lesson, and every question (quiz and practice), prompt and term by id across lessons."""

    lessons: dict[str, Lesson] = field(default_factory=dict)
    questions: dict[str, Question] = field(default_factory=dict)
    prompts: dict[str, TeachbackPrompt] = field(default_factory=dict)
    terms: list[Term] = field(default_factory=list)

    def add(self, lesson: Lesson) -> None:
        self.lessons[lesson.id] = lesson
        self.questions.update((q.id, q) for q in lesson.review_questions)
        self.prompts.update((p.id, p) for p in lesson.prompts)
        self.terms.extend(lesson.terms)

    def lesson(self, name: str | None) -> Lesson | None:
        """A lesson by id, or by a prefix of exactly one id; with no name, the first lesson."""
        if not self.lessons:
            return None
        if not name:
            return next(iter(self.lessons.values()))
        matches = self.lessons_named(name)
        return matches[0] if len(matches) == 1 else None

    def lessons_named(self, name: str) -> list[Lesson]:
        """The lesson with this id, else every lesson whose id starts with it."""
        name = name.lower()
        if name in self.lessons:
            return [self.lessons[name]]
        return [lesson for key, lesson in self.lessons.items() if key.startswith(name)]
