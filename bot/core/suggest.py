"""Did-you-mean: the closest known word to a misspelt one, for every message that names a key."""

from __future__ import annotations

from collections.abc import Collection

from rapidfuzz import fuzz, process

from bot.core import i18n

CUTOFF = 70  # rapidfuzz ratio (0-100) a known word must reach to be suggested


def closest(word: str, known: Collection[str]) -> str | None:
    best = process.extractOne(word, list(known), scorer=fuzz.ratio, score_cutoff=CUTOFF)
    return None if best is None else str(best[0])


def no_such_command(name: str, known: Collection[str], here: str = "") -> str:
    """What a learner is told, on every platform, for a command that does not exist, with the closest one if
    one is close: `There is no command /quizz (did you mean /quiz?). Type /help to see the commands.`"""
    best, tr = closest(name, known), i18n.current()
    if best:
        return tr.gettext("There is no command /{name}{here} (did you mean /{best}?). Type /help to see the commands.",
                          name=name[:40], here=here, best=best)
    return tr.gettext("There is no command /{name}{here}. Type /help to see the commands.", name=name[:40], here=here)


def did_you_mean(word: str, known: Collection[str]) -> str:
    """" (did you mean 'x'?)" for the closest known word, or ""."""
    best = closest(word, known)
    return f" (did you mean '{best}'?)" if best else ""
