"""Short-answer grading: pure functions over text and a rubric.

A key point is matched when one of its accepted phrasings appears in the answer,
tolerating case, punctuation and small typos; a listed misconception voids it.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass

from rapidfuzz import fuzz

from bot.content import KeyPoint, Rubric

TYPO_TOLERANCE = 85  # rapidfuzz ratio (0-100) a window of words must reach to match a phrase

_QUOTES = str.maketrans({"‘": "'", "’": "'", "‚": "'", "“": '"', "”": '"', "„": '"', "–": "-", "—": "-"})
_NOT_WORD = re.compile(r"[^\w\s]+")


def normalise(text: str) -> str:
    """Lower case, plain quotes, '&' as 'and', punctuation dropped, single spaces."""
    text = unicodedata.normalize("NFKC", text).translate(_QUOTES).lower()
    text = text.replace("&", " and ").replace("'", "")
    return " ".join(_NOT_WORD.sub(" ", text).split())


def contains_phrase(answer_words: list[str], phrase: str) -> bool:
    """Whether a run of words in the answer reads as the phrase, small typos allowed."""
    wanted = normalise(phrase)
    if not wanted:
        return False
    if f" {wanted} " in f" {' '.join(answer_words)} ":
        return True
    size = len(wanted.split())
    for width in {max(1, size - 1), size, size + 1}:
        for start in range(0, max(1, len(answer_words) - width + 1)):
            window = " ".join(answer_words[start : start + width])
            if fuzz.ratio(window, wanted, score_cutoff=TYPO_TOLERANCE):
                return True
    return False


@dataclass(frozen=True)
class Coverage:
    """Which key points an answer states; `voided` ones were stated with a misconception."""

    matched: tuple[str, ...]
    missed: tuple[str, ...]
    voided: tuple[str, ...]


@dataclass(frozen=True)
class Grade(Coverage):
    correct: bool = False


def cover(points: Iterable[KeyPoint], text: str) -> Coverage:
    words = normalise(text).split()
    matched, missed, voided = [], [], []
    for point in points:
        if any(contains_phrase(words, m) for m in point.misconceptions):
            voided.append(point.id)
            missed.append(point.id)
        elif any(contains_phrase(words, a) for a in point.accept):
            matched.append(point.id)
        else:
            missed.append(point.id)
    return Coverage(tuple(matched), tuple(missed), tuple(voided))


def grade(rubric: Rubric, text: str) -> Grade:
    """Correct when at least `rubric.needed` key points are stated (voided ones do not count)."""
    found = cover(rubric.points, text)
    correct = len(found.matched) >= rubric.needed
    return Grade(found.matched, found.missed, found.voided, correct)
