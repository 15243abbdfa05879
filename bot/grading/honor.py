"""What counts as a real attempt at a typed answer.

- Too short to grade: an answer with no letters, or one that states no key point (nor a misconception) in fewer
  than FEW_WORDS words of substance ("x", "ok"), is no answer at all: it is not recorded, and the learner is asked
  for a sentence or "I don't know".
- The honor system's guard: a learner grades a short answer themselves only when the rubric graded it wrong
  (a right one needs no grade of theirs), and only after a real attempt. An answer that states none of the key
  points and says only a few words of substance, or mostly repeats the question, is not an attempt: it is not
  offered "I got it right".
"""

from __future__ import annotations

from collections.abc import Sequence

from bot.grading.lists import lists_terms
from bot.grading.reading import NO_SYNONYMS, Synonyms, content_words, read

FEW_WORDS = 3  # fewer content words than this ("x", "no idea at all") is not an attempt
ECHO_SHARE = 0.8  # an answer whose content words are mostly the question's repeats it


def too_short(text: str, stated: Sequence[str], synonyms: Synonyms | None = None) -> bool:
    """Whether a typed answer is too short to grade: no letters, or fewer than FEW_WORDS content words and none of
    the key points (or misconceptions) `stated`."""
    if not any(c.isalpha() for c in text):
        return True
    return not stated and len(set(content_words(text, synonyms))) < FEW_WORDS


TOO_SHORT = "That is too short to grade, so it is not recorded and the question is still open: write your answer " \
            "in a sentence, or \"I don't know\"."


def real_attempt(text: str, prompt: str, matched: Sequence[str], synonyms: Synonyms | None = None) -> bool:
    """Whether an answer may be graded right by its learner: a real attempt, and no list of terms."""
    if lists_terms(text, read(text, synonyms or NO_SYNONYMS)):
        return False
    if matched:
        return True
    said = set(content_words(text, synonyms))
    if len(said) < FEW_WORDS:
        return False
    asked = set(content_words(prompt, synonyms))
    return len(said & asked) / len(said) < ECHO_SHARE
