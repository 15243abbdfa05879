"""Comparing words: by lemma (simplemma, in the language answers are read in: `bot.grading.languages`), and with
a small typo in a longer word (rapidfuzz).

Words of one family are the same word: a lemma and a derivative that names the act, state or manner of it
("declaration" and "declare", "execution" and "execute", "recursion" and "recurse": `derived`).

A word longer than three letters may carry a typo: one edit (a letter added, dropped, changed or two swapped; two
edits from eight letters on, Damerau-Levenshtein) with the same first letter, so "nonconstant" is no typo of
"constant". Two real words are never typos of each other when short ("case", "cause") and at most one edit apart
otherwise ("section" is not "selection"), and a word is no typo of a derivative outside its family ("point",
"pointer"). Words of three letters or fewer must be exact, and so must a short abbreviation (four letters or fewer,
no dictionary word: "FIFO" is no typo of "FILO").
"""

from __future__ import annotations

from functools import lru_cache

import simplemma
from rapidfuzz.distance import DamerauLevenshtein

from bot.grading import languages
from bot.grading.languages import ENGLISH, answer_language
from bot.grading.rules import FUNCTION_WORDS


def lemma(word: str) -> str:
    """The lemma of a lower-case word in the language answers are read in; an unknown English plural ("gpus")
    loses its s; numbers stay."""
    return _lemma(word, answer_language())


@lru_cache(maxsize=100_000)
def _lemma(word: str, lang: str) -> str:
    if word[0].isdigit():
        return word
    found = simplemma.lemmatize(word, lang=lang)
    if (lang == ENGLISH and found == word and len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "is"))
            and not simplemma.is_known(word, lang=lang)):
        return word[:-1]
    return found


def is_content(word: str) -> bool:
    """Whether a word carries meaning of its own (not an article, filler, joiner or relation word)."""
    function_words = languages.FUNCTION_WORDS.get(answer_language(), FUNCTION_WORDS)
    return word not in function_words and lemma(word) not in function_words


def similar(said: str, said_lemma: str, wanted: str, wanted_lemma: str) -> bool:
    """Whether a word of the answer is the wanted word: the same lemma or form, or a typo of it."""
    return _similar(said, said_lemma, wanted, wanted_lemma, answer_language())


@lru_cache(maxsize=200_000)
def _similar(said: str, said_lemma: str, wanted: str, wanted_lemma: str, lang: str) -> bool:
    if said_lemma == wanted_lemma or said == wanted:
        return True
    if derived(said_lemma, wanted_lemma):
        return True
    if len(wanted) <= 3 or said[0] != wanted[0] or said[0].isdigit() or wanted[0].isdigit():
        return False
    if _abbreviation(wanted, lang):
        return False
    short, long = sorted((said_lemma, wanted_lemma), key=len)
    if len(long) - len(short) >= 2 and long.startswith(short) and simplemma.is_known(short, lang=lang):
        return False  # a word and a derivative outside its family (point, pointer) are not typos of each other
    if simplemma.is_known(said, lang=lang) and simplemma.is_known(wanted, lang=lang):
        return len(wanted) > 5 and _typo(said, wanted, 1)  # two real words
    return _typo(said_lemma, wanted_lemma) or _typo(said, wanted)


ABBREVIATION = 4  # letters at most: a shorter word that no dictionary knows (FIFO, LIFO, FSDP) must be exact


def _abbreviation(word: str, lang: str) -> bool:
    return len(word) <= ABBREVIATION and not simplemma.is_known(word, lang=lang)


def _typo(said: str, wanted: str, allowed: int = 0) -> bool:
    """At most one edit (two for words of eight letters or more): a letter added, dropped, changed or swapped."""
    allowed = allowed or (1 if len(wanted) < 8 else 2)
    return DamerauLevenshtein.distance(said, wanted, score_cutoff=allowed) <= allowed


def irregular_form(word: str) -> bool:
    """Whether a word is an irregular inflection, not a plural ("took" of "take", "kept" of "keep"): a verb in a
    sentence, never a listed term."""
    found = lemma(word)
    return (found != word and word.isalpha() and not word.endswith("s") and len(found) > 1
            and not word.startswith(found[:-1]))


def same_word(said: str, wanted: str) -> bool:
    """Same lemma, or a small typo of a longer word; short words (no, not, all) must be exact."""
    return similar(said, lemma(said), wanted, lemma(wanted))


# Derivational suffixes that keep a word's meaning (the act, the state, the manner of it): "repetition" is "repetit",
# as "repetitive" is not (-ive, -able, -ment and -er/-or make words of their own: "relative", "variable", "statement",
# "pointer"). A word keeps at least STEM_MIN letters before its suffix, and a family's stem has STEM letters or more.
DERIVATIONS = ("ations", "ation", "itions", "ition", "ions", "ion", "ities", "ity", "ness", "ally", "ly", "ing", "ed")
STEM, STEM_MIN = 5, 4


@lru_cache(maxsize=100_000)
def stem(word: str) -> str:
    """A lemma without one DERIVATIONS suffix or a final e: "declaration" and "declare" are "declar"."""
    for suffix in DERIVATIONS:
        if word.endswith(suffix) and len(word) - len(suffix) >= STEM_MIN:
            return word[: -len(suffix)].rstrip("e")
    return word.rstrip("e")


def derived(one: str, other: str) -> bool:
    """Whether two lemmas are one word family: the same stem of STEM letters or more ("execution" and "execute",
    "recursion" and "recurse", "locally" and "local"; not "point" and "pointer", nor "state" and "statement").
    English suffixes: in another language only the lemma and typos tell words apart."""
    if answer_language() != ENGLISH:
        return False
    found = stem(one)
    return len(found) >= STEM and found == stem(other)
