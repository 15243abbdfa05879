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

from bot.content.model import KeyPoint, Rubric

TYPO_TOLERANCE = 80  # rapidfuzz ratio (0-100) a word must reach to count as a typo of another

_QUOTES = str.maketrans({"‘": "'", "’": "'", "‚": "'", "“": '"', "”": '"', "„": '"', "–": "-", "—": "-"})
_NOT_WORD = re.compile(r"[^\w\s]+")


def normalise(text: str) -> str:
    """Lower case, plain quotes, '&' as 'and', punctuation dropped, single spaces."""
    text = unicodedata.normalize("NFKC", text).translate(_QUOTES).lower()
    text = text.replace("&", " and ").replace("'", "")
    return " ".join(_NOT_WORD.sub(" ", text).split())


def same_word(said: str, wanted: str) -> bool:
    """Equal, or a small typo of a longer word; short words (no, not, all) must be exact."""
    if said == wanted:
        return True
    return len(wanted) > 3 and bool(fuzz.ratio(said, wanted, score_cutoff=TYPO_TOLERANCE))


def contains_phrase(answer_words: list[str], phrase: str) -> bool:
    """Whether the answer says the phrase word for word, allowing a typo in a word and one
    extra word inside it ("splits the whole model" says "splits the model")."""
    wanted = normalise(phrase).split()
    if not wanted:
        return False
    size = len(wanted)
    for start, word in enumerate(answer_words):
        if not same_word(word, wanted[0]):
            continue
        window = answer_words[start : start + size + 1]
        if len(window) >= size and all(map(same_word, window[:size], wanted)):
            return True
        if len(window) == size + 1 and size > 1:
            for skip in range(1, size):
                if all(map(same_word, window[:skip] + window[skip + 1 :], wanted)):
                    return True
    return False


class Synonyms:
    """A lesson's table of words that mean the same (filled in by the new matcher)."""


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
