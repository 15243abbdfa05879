"""Key points and rubrics: how a short answer or a teach-back is judged (shared by the lesson
model, the content checker and the grader, so it imports none of them)."""

from __future__ import annotations

from dataclasses import dataclass, field

from bot.grading.languages import answer_language


@dataclass(frozen=True)
class KeyPoint:
    """One idea a good answer states, recognised by any of its accepted phrasings."""

    id: str
    point: str
    accept: tuple[str, ...]
    misconceptions: tuple[str, ...] = ()


@dataclass(frozen=True)
class Rubric:
    """The key points of an answer (a short answer's or a teach-back's), and how many of them make it correct. With
    `half_point`, an answer that states one fewer and half of another is partly right (three quarters of it, for a
    rubric needing one: bot.grading.matching): so a rubric that needs all its points is partly met by all but half
    of one."""

    needed: int
    points: tuple[KeyPoint, ...]
    half_point: bool = True
    language: str = field(default_factory=answer_language)  # its pack's: answers to it are read in it


@dataclass(frozen=True)
class Examples:
    """Answers an author lists with a rubric, as learners would type them, to test the rubric:
    `studybot validate` grades each and reports every one graded otherwise than listed (`partly`: partly right)."""

    correct: tuple[str, ...] = ()
    wrong: tuple[str, ...] = ()
    partly: tuple[str, ...] = ()
