"""What keeps a grader from trusting a key point the answer states: the reasons an answer that states enough is
partly right rather than correct (bot.grading.verdict.Doubt), each a pure function over a read answer.

- Denied: the answer states one of the point's phrasings (one without a negator of its own) and says it under a
  negation elsewhere ("it splits the model ... it does not split the model").
- A misconception's words: the answer says every word of one of the point's misconceptions (up to its negator, if
  it has one) in one clause, outside negation and asides and apart from the words that state its points, but not as
  the misconception: out of order or too far apart, within NEAR times its length ("the whole model is what every GPU
  holds" for "every GPU holds the whole model"), one of them at least a word the point does not use.
- A typo: the point is stated only through a dictionary word one edit from the word it needs ("casual mask" for
  "causal mask"); a word no dictionary knows ("causl") is a plain typo, and is trusted.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache

import simplemma

from bot.grading.finding import placed, said_under_negation
from bot.grading.reading import Answer, Phrase, Synonyms, content_words, phrase
from bot.grading.rubric import KeyPoint
from bot.grading.rules import NEGATORS
from bot.grading.words import derived, is_content, lemma


def denied(point: KeyPoint, answer: Answer, table: Synonyms) -> bool:
    """Whether the answer states one of the point's phrasings and also says it under a negation."""
    if not any(w.text in NEGATORS for w in answer.words):
        return False
    return any(said_under_negation(answer, phrase(a, table)) for a in point.accept)


NEAR = 2  # a misconception's words said within so many times its length: beside each other, not across the clause


def _asserted(wrong: Phrase) -> list[str]:
    """The lemmas of a misconception's words that stand before any negator: what it asserts."""
    out = []
    for text, lemma_ in wrong.words:
        if text in NEGATORS:
            break
        out.append(lemma_)
    return out


@lru_cache(maxsize=4_096)
def _lemmas(point: KeyPoint, table: Synonyms) -> frozenset[str]:
    """The lemmas of the point's content words: its label's and its phrasings'."""
    return frozenset(lemma(w) for text in (point.point, *point.accept) for w in content_words(text, table))


def misconception_words(point: KeyPoint, answer: Answer, table: Synonyms, taken: Iterable[int]) -> tuple[str, ...]:
    """The answer's words that say one of the point's misconceptions in other words (see the module), or ()."""
    own = _lemmas(point, table)
    free = [n for n, w in enumerate(answer.words) if n not in set(taken) and w.negated_by < 0 and w.aside_of < 0]
    for wrong in (phrase(m, table) for m in point.misconceptions):
        asserted = set(_asserted(wrong))
        if len([w for w in asserted if is_content(w)]) < 2 or not {w for w in asserted if is_content(w)} - own:
            continue
        by_clause: dict[int, dict[str, int]] = {}
        for n in free:
            word = answer.words[n]
            if word.lemma in asserted:
                by_clause.setdefault(word.clause, {}).setdefault(word.lemma, n)
        for said in by_clause.values():
            if set(said) == asserted and max(said.values()) - min(said.values()) < NEAR * len(asserted):
                return tuple(answer.words[n].text for n in sorted(said.values()) if is_content(answer.words[n].text))
    return ()


def typo_words(accepted: Phrase, answer: Answer, span: Iterable[int]) -> tuple[str, ...]:
    """The dictionary words of the span that state a word of the phrase only as a typo of it (not a word of its family:
    bot.grading.words.derived)."""
    wanted = {w for pair in accepted.words for w in pair}
    return tuple(answer.words[n].text for n in span
                 if answer.words[n].text not in wanted and answer.words[n].lemma not in wanted
                 and not any(derived(answer.words[n].lemma, w) for w in wanted)
                 and simplemma.is_known(answer.words[n].text, lang="en"))


def trusted_only_by_typo(point: KeyPoint, answer: Answer, table: Synonyms, asides: frozenset[int]) -> tuple[str, ...]:
    """The dictionary words through which alone the answer states the point (each of its placements needs one), or
    ()."""
    words: list[str] = []
    for accepted in (phrase(a, table) for a in point.accept):
        for span in placed(answer, accepted, asides):
            found = typo_words(accepted, answer, span)
            if not found:
                return ()
            words += found
    return tuple(dict.fromkeys(words))
