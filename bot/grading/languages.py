"""The languages answers are read in, and what the grader needs of each besides English: its function
words (articles, pronouns, prepositions, joiners, auxiliaries, fillers), which never count as content.
English's are the grammar's own (`bot.grading.rules`); its negation, contrast and clause rules are
English's too, so a pack in another language is matched by its lemmas and content words."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

ENGLISH = "en"
GRADED = ("en", "es", "de")  # a lesson pack's `language:` is one of these

FUNCTION_WORDS = {
    "es": frozenset("""
        el la lo los las un una unos unas al del este esta estos estas ese esa esos esas aquel aquella su sus mi mis
        tu tus nuestro nuestra nuestros nuestras yo tú él ella ello nosotros vosotros ellos ellas usted ustedes me te
        se nos os le les que quien quienes cual cuales cuyo cuya donde cuando como y e o u ni pero sino aunque porque
        pues si a ante bajo con contra de desde durante en entre hacia hasta mediante para por según sin sobre tras
        ser es son era eran fue fueron sido estar está están estaba haber ha han había hay tener tiene tienen muy más
        menos también ya solo sólo bien así eso esto algo
    """.split()),
    "de": frozenset("""
        der die das den dem des ein eine einen einem einer eines dieser diese dieses diesen diesem sein seine ihr ihre
        mein meine unser unsere ich du er sie es wir ihr man sich mir mich dir dich ihm ihn uns euch ihnen welche
        welcher welches wer was wo wann wie und oder aber sondern denn weil dass ob wenn als auch noch nur schon sehr
        an auf aus bei durch für gegen hinter in mit nach neben ohne über um unter von vor während zu zum zur zwischen
        ist sind war waren wird werden wurde wurden sein hat haben hatte hatten kann können muss müssen so etwa
    """.split()),
}

_reading: ContextVar[str] = ContextVar("studybot_answer_language", default=ENGLISH)


def answer_language() -> str:
    """The language the answers (and rubrics) being read are in."""
    return _reading.get()


@contextmanager
def answers_in(language: str) -> Iterator[None]:
    """Read answers and rubrics in `language` inside (a pack's `language:`)."""
    token = _reading.set(language)
    try:
        yield
    finally:
        _reading.reset(token)
