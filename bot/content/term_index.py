"""The glossary index: every term of the library by name and alias, exact or with typos."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

from rapidfuzz import fuzz, process
from rapidfuzz.distance import DamerauLevenshtein

from bot.content.model import Term
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
            return begun[0], "the only term whose words begin so"
        key = normalise(wanted)
        if len(key) >= 3:
            most = 1 if len(key) < 8 else 2
            near = {self._by_key[k] for k in self._keys if DamerauLevenshtein.distance(key, k) <= most}
            if len(near) == 1:
                return near.pop(), "the closest term"
        return None, ""

    def _words_begun(self, query: str) -> list[Term]:
        """Terms with a name or alias whose words begin with each of the query's words, in order."""
        words = normalise(query).split()
        found: list[Term] = []
        if not words or len(words[0]) < 3:
            return found
        for key, term in self._by_key.items():
            names = key.split()
            if term not in found and any(all(n.startswith(w) for w, n in zip(words, names[i:], strict=False))
                                         and len(names) - i >= len(words) for i in range(len(names))):
                found.append(term)
        first = normalise(query)
        return sorted(found, key=lambda t: not normalise(t.term).startswith(first))  # by its name first

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
