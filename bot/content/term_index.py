"""The glossary index: every term of the library by name and alias, exact or with typos."""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Callable, Iterable

from rapidfuzz import fuzz, process
from rapidfuzz.distance import DamerauLevenshtein

from bot.content.model import Term
from bot.core.i18n import N_
from bot.grading.reading import normalise

SUGGESTION_CUTOFF = 60  # rapidfuzz ratio below which a term is not worth suggesting
AUTOCOMPLETE_LIMIT = 25  # Discord shows at most 25 choices
# "what is mfu?", "what's an FSDP", "define tensor parallelism", "what does MFU mean": the term asked about
_ASKED = re.compile(r"^(?:(?:what|who)\s*(?:is|are|'s|’s|does)\s+(?:an?\s+|the\s+)?|define\s+|explain\s+"
                    r"|meaning\s+of\s+)(?P<term>.+?)(?:\s+mean)?\s*\??$", re.IGNORECASE)


def asked_term(query: str) -> str:
    """The term a question is about ("what is mfu?" -> "mfu"); the query itself otherwise."""
    query = query.strip()
    found = _ASKED.match(query)
    return found.group("term") if found else query.rstrip("?").strip()


class Glossary:
    """Every term of the library, indexed by its normalised name and aliases."""

    def __init__(self, terms: Iterable[Term]) -> None:
        self.terms = sorted(terms, key=lambda t: t.term.lower())
        self._by_key: dict[str, Term] = {}
        for term in self.terms:
            for name in (term.term, *term.aliases):
                self._by_key.setdefault(normalise(name), term)
        self._keys = list(self._by_key)
        self._names = [key.split() for key in self._keys]
        # every word of every name or alias, sorted, with where it stands: words by prefix in a bisect
        self._words = sorted((word, k, at) for k, names in enumerate(self._names) for at, word in enumerate(names))
        self._word_list = [word for word, _, _ in self._words]

    def lookup(self, query: str) -> Term | None:
        return self._by_key.get(normalise(query))

    def find(self, query: str) -> tuple[Term | None, str]:
        """The term a query means, and how it was found when not by its name ("" when it was):
        its name or an alias, asked as a question or not; else the one term whose words begin
        with the query's words ("tensor"); else the one term a typo away ("fdsp")."""
        wanted = asked_term(query)
        if (term := self.lookup(wanted)) is not None:
            return term, ""
        if len(begun := self._words_begun(wanted)) == 1:
            return begun[0], N_("the only term whose words begin so")
        key = normalise(wanted)
        if len(key) >= 3:
            most = 1 if len(key) < 8 else 2
            near = {self._by_key[k] for k, _, _ in process.extract(key, self._keys, scorer=DamerauLevenshtein.distance,
                                                                      score_cutoff=most, limit=None)}
            if len(near) == 1:
                return near.pop(), N_("the closest term")
        return None, ""

    def _words_begun(self, query: str) -> list[Term]:
        """Terms with a name or alias whose words begin with each of the query's words, in order."""
        words = normalise(query).split()
        if not words or len(words[0]) < 3:
            return []
        # look up by the query word that begins the fewest words of the index, then check the others
        spans = [(self._begun_span(word), offset) for offset, word in enumerate(words)]
        (low, high), offset = min(spans, key=lambda span: span[0][1] - span[0][0])
        found: dict[str, Term] = {}
        for _, k, at in self._words[low:high]:
            names, start = self._names[k], at - offset
            if start >= 0 and len(names) - start >= len(words) \
                    and all(n.startswith(w) for w, n in zip(words, names[start:], strict=False)):
                term = self._by_key[self._keys[k]]
                found.setdefault(term.term, term)
        first = normalise(query)
        return sorted(found.values(), key=lambda t: (not normalise(t.term).startswith(first), t.term.lower()))

    def _begun_span(self, word: str) -> tuple[int, int]:
        """Where the index's words that begin with `word` stand in the sorted word list."""
        low = bisect_left(self._word_list, word)
        high = bisect_left(self._word_list, word + "\U0010ffff", low)
        return low, high

    def suggest(self, query: str, limit: int = 3, scorer: Callable[..., float] = fuzz.ratio) -> list[Term]:
        """The closest terms to a misspelt query, best first, without repeats: those whose words
        begin with the query's first."""
        found: list[Term] = self._words_begun(asked_term(query))[:limit]
        matches = process.extract(
            normalise(asked_term(query)), self._keys, scorer=scorer, limit=limit * 3, score_cutoff=SUGGESTION_CUTOFF
        )
        for key, _score, _ in matches:
            term = self._by_key[key]
            if term not in found:
                found.append(term)
        return found[:limit]

    def autocomplete(self, prefix: str, limit: int = AUTOCOMPLETE_LIMIT) -> list[str]:
        """Term names for a partly typed query: prefix matches first, then fuzzy ones."""
        wanted = normalise(prefix)
        if not wanted:
            return [t.term for t in self.terms[:limit]]
        names: list[str] = []
        for key, term in self._by_key.items():
            if key.startswith(wanted) and term.term not in names:
                names.append(term.term)
                if len(names) == limit:
                    return names
        for term in self.suggest(prefix, limit, scorer=fuzz.partial_ratio):  # a typo in a partly typed name
            if term.term not in names:
                names.append(term.term)
        return names[:limit]
