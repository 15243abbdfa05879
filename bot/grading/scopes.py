"""The scope engine: an answer's tokens into words with their clause, list item, and the negation scope and
contrast aside that hold them, by the rows of bot.grading.rules.SCOPE_RULES.

Each word of a row opens, ends or undoes a scope as its row says (bot.grading.rules.Does); a scope runs forward to
the next clause break or END row. After the break that ends a contrast's scope, a relative word ("unlike DDP, where
each GPU has the full model, ...") opens an aside about the thing contrasted, which runs to the next break or END.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from bot.grading.rules import (
    AUXILIARIES,
    BREAK,
    CONNECTIVES,
    DETERMINERS,
    FILLERS,
    LIST_JOINERS,
    PLURAL_BE,
    RELATING_CONTENT,
    RELATION_WORDS,
    RELATIVES,
    SCOPE_RULES,
    SUBJECTS,
    Does,
    ScopeRule,
    When,
)
from bot.grading.words import irregular_form, is_content, lemma


@dataclass(frozen=True, slots=True)
class Word:
    """One word of an answer: where it stands, which negator's scope holds it (-1: none), and which contrast's
    aside holds it (-1: none): "unlike DDP, where each GPU has the full model, ..." is an aside about DDP."""

    text: str
    lemma: str
    clause: int
    item: int
    negated_by: int
    aside_of: int = -1


def _skipped(token: str) -> bool:
    """Whether a token is no word of the answer: a break, a determiner or a filler."""
    return token == BREAK or token in DETERMINERS or token in FILLERS


def _starts_clause(tokens: list[str], i: int) -> bool:
    """When.STARTS_CLAUSE, of the "and" at tokens[i]."""
    after = [t for t in tokens[i + 1 : i + 5] if t not in DETERMINERS and t not in FILLERS]
    if after and after[0] in SUBJECTS:
        return True
    if i + 1 >= len(tokens) or tokens[i + 1] not in DETERMINERS:
        return False
    before = sum(1 for _ in _words_back(tokens, i))  # "... our refund policy and the model might"
    for n, t in enumerate(after[:3] if before >= 3 else ()):
        if t == BREAK or t in LIST_JOINERS:
            return False
        if n and t in AUXILIARIES:
            return t not in PLURAL_BE and all(is_content(w) for w in after[:n])
    return False


def _words_back(tokens: list[str], i: int) -> list[str]:
    """The words before tokens[i] in its clause."""
    start = next((k + 1 for k in range(i - 1, -1, -1) if tokens[k] == BREAK), 0)
    return [t for t in tokens[start:i] if not _skipped(t)]


def _words_on(tokens: list[str], i: int) -> list[str]:
    """The words after tokens[i] in its clause."""
    end = next((k for k in range(i + 1, len(tokens)) if tokens[k] == BREAK), len(tokens))
    return [t for t in tokens[i + 1 : end] if not _skipped(t)]


_CONDITIONS: dict[When, Callable[[list[str], int], bool]] = {
    When.NOT_AFTER_BREAK: lambda tokens, i: i > 0 and tokens[i - 1] != BREAK,
    When.STARTS_CLAUSE: _starts_clause,
}
_ROWS: dict[str, list[ScopeRule]] = {}  # the rows of each trigger word, in table order
for _row in SCOPE_RULES:
    for _word in _row.words:
        _ROWS.setdefault(_word, []).append(_row)


def _fits(row: ScopeRule, tokens: list[str], i: int) -> bool:
    """Whether the words around tokens[i] are as the row asks."""
    if row.followed_by and (tokens[i + 1] if i + 1 < len(tokens) else "") != row.followed_by:
        return False
    if row.preceded_by and not (i and tokens[i - 1] == row.preceded_by):
        return False
    return row.when is None or _CONDITIONS[row.when](tokens, i)


# ---------------------------------------------------------------- clauses and list items


_NEW_CLAUSE_ROWS = {word: [row for row in rows if row.new_clause] for word, rows in _ROWS.items()
                    if any(row.new_clause for row in rows)}


def _starts_new_clause(tokens: list[str], i: int) -> bool:
    rows = _NEW_CLAUSE_ROWS.get(tokens[i])
    return rows is not None and any(_fits(row, tokens, i) for row in rows)


def _numbers(tokens: list[str]) -> tuple[list[int], list[int]]:
    """Each token's clause and list item: a break starts both, a new-clause row a clause, and an "and" or "or" is
    an item of its own."""
    clauses, items = [], []
    clause = item = 0
    for i, token in enumerate(tokens):
        if token == BREAK:
            clause, item = clause + 1, item + 1
        clause += _starts_new_clause(tokens, i)
        item += token in LIST_JOINERS
        clauses.append(clause)
        items.append(item)
        item += token in LIST_JOINERS
    return clauses, items


SHORT_SENTENCE = 8  # words at most of an answer that a particle or an irregular verb form makes a sentence


def _relates(tokens: list[str], items: list[int]) -> bool:
    """Whether the tokens relate words: a relation word (not a mere connective: "so", "because"), or a determiner
    after the first word of a list item; in a short answer with no separator and no connective, also a particle or an
    irregular verb form (RELATING_CONTENT)."""
    last_item = -1  # the item of the last word
    for i, token in enumerate(tokens):
        if token in DETERMINERS and items[i] == last_item:
            return True
        if not _skipped(token):
            if token not in CONNECTIVES and (token in RELATION_WORDS or lemma(token) in RELATION_WORDS):
                return True
            last_item = items[i]
    words = [t for t in tokens if not _skipped(t)]
    if len(words) > SHORT_SENTENCE or any(t in LIST_JOINERS or t in CONNECTIVES for t in tokens) or BREAK in tokens:
        return False
    return any(t in RELATING_CONTENT or irregular_form(t) for t in words)


# ---------------------------------------------------------------- scopes


@dataclass(frozen=True)
class _Scope:
    """An open scope: its row, its opener (a word number) and where that stands (a token position)."""

    row: ScopeRule
    opener: int
    at: int
    holds: int = 0  # content words an undelimited contrast still holds

    @property
    def negation(self) -> bool:
        return self.row.does is Does.NEGATE


@dataclass(frozen=True)
class _State:
    scope: _Scope | None = None
    aside: int = -1  # the contrast whose aside the words are in
    relative_at: int = -1  # the relative word at which an undelimited contrast's aside starts (a token position)

    @property
    def opener(self) -> int:
        return self.scope.opener if self.scope else -1


def _applies(row: ScopeRule, tokens: list[str], i: int, n: int, state: _State) -> bool:
    """Whether the row applies to the word tokens[i] (word number n) in the state before it."""
    if row.in_contrast and (state.scope is None or state.scope.row.does is not Does.CONTRAST):
        return False
    if row.in_negation:
        scope = state.scope
        if scope is None or not scope.negation:
            return False
        if row.within and (n - scope.opener > row.within or any(t in LIST_JOINERS for t in tokens[scope.at : i])):
            return False
    return _fits(row, tokens, i)


def _opened(row: ScopeRule, tokens: list[str], i: int, n: int, state: _State) -> _State:
    """The state after the word tokens[i] opens a scope by its row."""
    if not (row.holds and len(_words_on(tokens, i)) >= row.undelimited):
        return replace(state, scope=_Scope(row, n, i))
    relative = next((k for k in range(i + 2, min(i + 1 + row.relative_within, len(tokens)))
                     if tokens[k] in RELATIVES and BREAK not in tokens[i:k]), -1)
    return replace(state, scope=_Scope(row, n, i, row.holds), relative_at=relative)


def _held(state: _State, token: str, i: int) -> _State:
    """The state after a word that opens nothing: an undelimited contrast holds one content word fewer."""
    scope = state.scope
    if scope is None or not scope.holds or not is_content(token) or state.relative_at >= i:
        return state
    return replace(state, scope=replace(scope, holds=scope.holds - 1) if scope.holds > 1 else None)


def _step(tokens: list[str], i: int, n: int, state: _State) -> tuple[_State, tuple[int, int]]:
    """The state after the word tokens[i] (word number n), and the word's (negated_by, aside_of)."""
    candidates = _ROWS.get(tokens[i])
    if candidates is None:
        return _held(state, tokens[i], i), (state.opener, state.aside)
    rows = [row for row in candidates if _applies(row, tokens, i, n, state)]
    if i != state.relative_at and any(row.does is Does.END for row in rows):
        state = replace(state, scope=None, aside=-1)
    row = next((row for row in rows if row.does is not Does.END), None)
    opens = row is not None and row.does in (Does.NEGATE, Does.CONTRAST)
    marks = (-1 if opens or row is not None and row.does is Does.UNDO else state.opener, state.aside)
    if row is None or row.does is Does.NOTHING:
        return _held(state, tokens[i], i), marks
    if row.does is Does.UNDO:
        return replace(state, scope=None), marks
    return _opened(row, tokens, i, n, state), marks


def _scopes(tokens: list[str]) -> tuple[list[tuple[int, int]], frozenset[int]]:
    """Each word's (negated_by, aside_of), and the contrasts whose aside no comma closes."""
    marks: list[tuple[int, int]] = []
    open_asides: set[int] = set()
    state = _State()
    for i, token in enumerate(tokens):
        if i == state.relative_at:  # "unlike DDP which copies ...": the aside starts
            open_asides.add(state.opener)
            state = _State(aside=state.opener, relative_at=i)
        if token == BREAK:  # "unlike X, where ...": an aside about X
            follows = next((t for t in tokens[i + 1 :] if t != BREAK), "")
            contrast = state.scope is not None and state.scope.row.does is Does.CONTRAST
            state = replace(state, scope=None, aside=state.opener if contrast and follows in RELATIVES else -1)
        elif not _skipped(token):
            state, mark = _step(tokens, i, len(marks), state)
            marks.append(mark)
    return marks, frozenset(open_asides)


def read_words(tokens: list[str]) -> tuple[list[Word], bool, frozenset[int]]:
    """The words (determiners and fillers dropped) with clause, item, negation scope and aside; whether they are a
    bare list (no relation word, and no determiner after the first word of an item), each word an item of its own
    when there are four or more and no separator; and the contrasts whose aside no comma closes, so that it may
    run on into what the answer says of its subject."""
    clauses, items = _numbers(tokens)
    marks, open_asides = _scopes(tokens)
    positions = [i for i, token in enumerate(tokens) if not _skipped(token)]
    bare_list = bool(positions) and not _relates(tokens, items)
    each = bare_list and len(positions) >= 4 and len({items[i] for i in positions}) == 1  # no separator at all
    words = [Word(tokens[i], lemma(tokens[i]), clauses[i], n if each else items[i], *marks[n])
             for n, i in enumerate(positions)]
    return words, bare_list, open_asides
