"""Did-you-mean: the closest known word to a misspelt one, for every message that names a key."""

from __future__ import annotations

from collections.abc import Collection

from rapidfuzz import fuzz, process

CUTOFF = 70  # rapidfuzz ratio (0-100) a known word must reach to be suggested


def closest(word: str, known: Collection[str]) -> str | None:
    best = process.extractOne(word, list(known), scorer=fuzz.ratio, score_cutoff=CUTOFF)
    return None if best is None else str(best[0])


def no_such_command(name: str, known: Collection[str], here: str = "") -> str:
    """What a learner is told, on every platform, for a command that does not exist, with the closest one if
    one is close: `There is no command /quizz (did you mean /quiz?). Type /help to see the commands.`"""
    best = closest(name, known)
    guess = f" (did you mean /{best}?)" if best else ""
    return f"There is no command /{name[:40]}{here}{guess}. Type /help to see the commands."


def did_you_mean(word: str, known: Collection[str]) -> str:
    """" (did you mean 'x'?)" for the closest known word, or ""."""
    best = closest(word, known)
    return f" (did you mean '{best}'?)" if best else ""
