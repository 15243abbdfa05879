"""The honor system's guard: a learner grades a short answer themselves only after a real attempt.

An answer that states none of the key points and says only a few words of substance, or mostly
repeats the question, is not an attempt: it is not offered "I got it right".
"""

from __future__ import annotations

from collections.abc import Sequence

from bot.grading.reading import Synonyms, content_words

FEW_WORDS = 3  # fewer content words than this ("x", "no idea at all") is not an attempt
ECHO_SHARE = 0.8  # an answer whose content words are mostly the question's repeats it


def real_attempt(text: str, prompt: str, matched: Sequence[str], synonyms: Synonyms | None = None) -> bool:
    """Whether an answer may be graded right by its learner."""
    if matched:
        return True
    said = set(content_words(text, synonyms))
    if len(said) < FEW_WORDS:
        return False
    asked = set(content_words(prompt, synonyms))
    return len(said & asked) / len(said) < ECHO_SHARE
