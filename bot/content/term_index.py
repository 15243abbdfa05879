"""The glossary index: every term of the library by name and alias, exact or with typos."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from rapidfuzz import fuzz, process

from bot.content.model import Term
from bot.grading.reading import normalise

SUGGESTION_CUTOFF = 60  # rapidfuzz ratio below which a term is not worth suggesting
AUTOCOMPLETE_LIMIT = 25  # Discord shows at most 25 choices


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

    def suggest(self, query: str, limit: int = 3, scorer: Callable[..., float] = fuzz.ratio) -> list[Term]:
        """The closest terms to a misspelt query, best first, without repeats."""
        found: list[Term] = []
        matches = process.extract(
            normalise(query), self._keys, scorer=scorer, limit=limit * 3, score_cutoff=SUGGESTION_CUTOFF
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
