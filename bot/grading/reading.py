"""Reading short answers and rubric phrasings: `read(text, synonyms)` turns an answer into an Answer, its
lemmatised words with clause breaks, negation scopes, asides and bare lists marked, so that bot.grading.matching
can tell what it states; `phrase` reads a rubric's phrasing the same way.

- Words compare by lemma, with small typos in longer words (bot.grading.words).
- Determiners and fillers (bot.grading.rules) are dropped on both sides.
- Short verbs are spelled out ("we'd" is "we would", "it's" and "thats" "it is" and "that is"; "n't" is "not"),
  and a possessive 's goes ("TP's" is "TP").
- Numbers are normalised: "184,320" is "184320", "16k" and "16 thousand" are "16000", "3.3M" is "3300000", "one"
  to "twelve" are digits; decimals are kept ("3.5"); "n^2" is "n2". Symbols read as words ("&" and, "+" plus,
  "<=" less than or equal to, "->" and "→" to, "w/o" without; HTML entities are decoded, "-&gt;" is "->"), "into"
  and "onto" are "in to" and "on to" (so "put into" states "put in" with one word more), "non-" and "non " join
  the next word ("nonconstant"; a "non" left alone before a function word is "none"), and an identifier splits
  into its words ("arrayName" is "array name"; "LoRA" is one word).
- Negation and contrast scopes: the rows of bot.grading.rules.SCOPE_RULES, applied by bot.grading.scopes. The
  content word a negator closely follows in its clause is what the clause denies something of ("latency is not
  important").
- Synonyms: a pack-level table rewrites words ("DP" -> "data parallelism") in answers and phrasings alike, before
  they are read.
- Bare lists: an answer without a single relation word, and without an article after the first word of an item,
  relates nothing to anything. Its items are the pieces between clause breaks and "and"/"or" (or each word, when
  it has four or more words and no separator at all). Without separators, a verb's particle or an irregular verb
  form relates too ("nodes take up more memory", "Llama 2 took 184,320 GPU hours"); a terse sentence with neither
  ("FSDP shards model parameters") cannot be told from such a list.
"""

from __future__ import annotations

import html
import re
import unicodedata
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from functools import cached_property, lru_cache

from bot.grading.languages import answer_language
from bot.grading.rules import BREAK, CONTRASTS, DETERMINERS, FILLERS, FUNCTION_WORDS, NEGATORS
from bot.grading.scopes import Word, read_words
from bot.grading.words import is_content, lemma, similar

_QUOTES = str.maketrans({"‘": "'", "’": "'", "‚": "'", "“": '"', "”": '"', "„": '"', "–": "-", "—": "-"})
_NOT_WORD = re.compile(r"[^\w\s]+")
_NUMBER = re.compile(r"(?<![\w.])(\d{1,3}(?:,\d{3})+(?!\d)|\d+)(\.\d+)?(?:\s*(thousand|million|billion)\b|([kmb])\b)?")
_SCALE = {"k": 1000, "thousand": 1000, "m": 10**6, "million": 10**6, "b": 10**9, "billion": 10**9}
_NON = re.compile(r"\bnon(-|\s+)([a-z]+)")
_TOKEN = re.compile(r"\d+\.\d+|\w+|[,;:!?\n]|\.(?=\s|$)|(?:^|(?<=\s))\(|\)(?=\s|$|[^\w\s])")
_BREAKS = frozenset(",;:!?()\n.")
_CAMEL = re.compile(r"(?<=[a-z])(?=[A-Z][a-z])")  # arrayName, bPtr: words of an identifier (not LoRA, ZeRO)
_EMPTY_PARENS = re.compile(r"\(\s*\)")
_CONTRACTIONS = {
    "dont": "do not", "doesnt": "does not", "didnt": "did not", "isnt": "is not", "arent": "are not",
    "wasnt": "was not", "werent": "were not", "hasnt": "has not", "havent": "have not", "hadnt": "had not",
    "wont": "will not", "wouldnt": "would not", "shouldnt": "should not", "couldnt": "could not",
    "cant": "can not", "cannot": "can not", "mustnt": "must not", "neednt": "need not", "aint": "is not",
    "thats": "that is", "theres": "there is",
    "into": "in to", "onto": "on to",  # "put into" is "put in" with a "to": a phrasing allows a function word more
    "non": "none",  # "non" alone is what is left of a "none" typo: see _joined_non
}
_SYMBOLS = (
    ("<=", " less than or equal to "), (">=", " greater than or equal to "), ("!=", " not equal to "),
    ("->", " to "), ("=>", " to "), ("→", " to "), ("==", " equals "), ("<", " less than "), (">", " greater than "),
    ("=", " equals "), ("&", " and "), ("+", " plus "),
)
_WITHOUT, _WITH = re.compile(r"\bw/o\b"), re.compile(r"\bw/")
_SHORT_VERB = re.compile(r"(?<=[a-z])'(d|ll|re|ve|m)\b|\b(it|that|there|here|what|who|he|she)'s\b")
_POSSESSIVE = re.compile(r"(?<=\w)'s\b")  # TP's, the model's
_SHORT_VERBS = {"d": " would", "ll": " will", "re": " are", "ve": " have", "m": " am"}
_NUMBER_WORDS = {
    w: str(n) for n, w in enumerate("zero one two three four five six seven eight nine ten eleven twelve".split())
}


def normalise(text: str) -> str:
    """Lower case, plain quotes, '&' as 'and', punctuation dropped, single spaces."""
    text = unicodedata.normalize("NFKC", text).translate(_QUOTES).lower()
    text = text.replace("&", " and ").replace("'", "")
    return " ".join(_NOT_WORD.sub(" ", text).split())


# ---------------------------------------------------------------- synonyms


@dataclass(frozen=True, init=False)
class Synonyms:
    """An immutable pack-level table of words or phrases read as another, e.g. {"DP": "data parallelism"}.

    Keys are matched as whole words (case, punctuation and contractions as in answers); the longest key wins.
    """

    rules: tuple[tuple[tuple[str, ...], tuple[str, ...]], ...]
    _table: dict[tuple[str, ...], tuple[str, ...]] = field(compare=False, repr=False)
    _longest: int = field(compare=False, repr=False)

    def __init__(self, mapping: Mapping[str, str] | Iterable[tuple[str, str]] = ()) -> None:
        pairs = mapping.items() if isinstance(mapping, Mapping) else mapping
        table = {}
        for key, value in pairs:
            said = tuple(t for t in _raw_tokens(key) if t != BREAK)
            if said:
                table[said] = tuple(t for t in _raw_tokens(value) if t != BREAK)
        object.__setattr__(self, "rules", tuple(sorted(table.items())))
        object.__setattr__(self, "_table", table)
        object.__setattr__(self, "_longest", max(map(len, table), default=0))

    def __len__(self) -> int:
        return len(self.rules)

    def rewrite(self, tokens: list[str]) -> list[str]:
        """The tokens with every key replaced by its value, the longest key first, left to right."""
        if not self._table:
            return tokens
        out: list[str] = []
        i = 0
        while i < len(tokens):
            for size in range(min(self._longest, len(tokens) - i), 0, -1):
                value = self._table.get(tuple(tokens[i : i + size]))
                if value is not None:
                    out += value
                    i += size
                    break
            else:
                out.append(tokens[i])
                i += 1
        return out


NO_SYNONYMS = Synonyms()


# ---------------------------------------------------------------- reading text


def _number(match: re.Match[str]) -> str:
    """One number in canonical digits: no thousands separators, k/M/B and words multiplied out."""
    whole, fraction, word, letter = match.groups()
    value = Decimal(whole.replace(",", "") + (fraction or "")) * _SCALE.get(word or letter or "", 1)
    return format(value.normalize(), "f")


def _joined_non(match: re.Match[str]) -> str:
    """ "non-constant" and "non constant" as "nonconstant"; "non are" (a typo of "none") stays."""
    separator, word = match.groups()
    return match[0] if separator != "-" and word in FUNCTION_WORDS else "non" + word


def _raw_tokens(text: str) -> list[str]:
    """Lower-case words and numbers, with BREAK for each clause break; contractions spelled out."""
    text = _CAMEL.sub(" ", unicodedata.normalize("NFKC", html.unescape(text))).translate(_QUOTES).lower()
    for symbol, words in _SYMBOLS:
        text = text.replace(symbol, words)
    text = _WITHOUT.sub(" without ", text)
    text = _SHORT_VERB.sub(lambda m: _SHORT_VERBS[m[1]] if m[1] else m[2] + " is", text)
    text = _POSSESSIVE.sub("", text)
    text = _WITH.sub(" with ", _EMPTY_PARENS.sub(" ", text)).replace("^", "").replace("'", "")
    text = _NON.sub(_joined_non, text)
    text = _NUMBER.sub(_number, text)
    tokens: list[str] = []
    for token in _TOKEN.findall(text):
        if token in _BREAKS:
            if tokens and tokens[-1] != BREAK:
                tokens.append(BREAK)
        else:
            tokens += _CONTRACTIONS.get(token, _NUMBER_WORDS.get(token, token)).split()
    return tokens


def _tokens(text: str, synonyms: Synonyms) -> list[str]:
    """Tokens after synonyms, without determiners and fillers."""
    return [t for t in synonyms.rewrite(_raw_tokens(text)) if t not in DETERMINERS and t not in FILLERS]


def _subjects_of_negation(words: tuple[Word, ...]) -> Iterator[int]:
    """The content words a negator follows closely in their clause, with only function words between ("latency
    is not important", "the golden set isn't needed"): what the clause denies something of."""
    for n, w in enumerate(words):
        if w.text in NEGATORS and w.negated_by < 0:
            for m in range(n - 1, max(n - 4, -1), -1):
                if words[m].clause != w.clause:
                    break
                if is_content(words[m].text):
                    yield m
                    break


def _contrasted(words: tuple[Word, ...]) -> dict[int, frozenset[str]]:
    """Each contrast with an aside, and the lemmas of the thing it contrasts ("data parallelism" in "unlike DP,
    where ...")."""
    things: dict[int, set[str]] = {w.aside_of: set() for w in words if w.aside_of >= 0}
    for w in words:
        if w.negated_by in things and is_content(w.text):
            things[w.negated_by].add(w.lemma)
    return {owner: frozenset(thing) for owner, thing in things.items() if thing}


class Answer:
    """An answer read once for matching (by `read`): its words, negation scopes and asides, and whether it is a
    bare list."""

    __slots__ = ("words", "bare_list", "open_asides", "typos", "contrasted", "denied", "_by_text", "_by_lemma",
                 "_by_letter", "_memo")

    def __init__(self, words: Iterable[Word], bare_list: bool = False, open_asides: frozenset[int] = frozenset(),
                 typos: bool = True) -> None:
        self.words, self.bare_list, self.open_asides, self.typos = tuple(words), bare_list, open_asides, typos
        self.contrasted = _contrasted(self.words)
        self.denied = frozenset(_subjects_of_negation(self.words))
        self._by_text: dict[tuple[str, str], list[int]] = {}
        self._by_lemma: dict[str, list[int]] = {}
        self._by_letter: dict[str, list[tuple[str, str]]] = {}
        for n, w in enumerate(self.words):
            self._by_text.setdefault((w.text, w.lemma), []).append(n)
            self._by_lemma.setdefault(w.lemma, []).append(n)
        for key in self._by_text:
            self._by_letter.setdefault(key[0][0], []).append(key)
        self._memo: dict[tuple[str, str], list[int]] = {}

    def positions(self, text: str, lemma_: str) -> list[int]:
        """Where a phrase word (text, lemma) stands in the answer, in order."""
        key = (text, lemma_)
        found = self._memo.get(key)
        if found is None:
            hits = set(self._by_lemma.get(lemma_, ()))
            for said in self._by_letter.get(text[0], ()) if self.typos else ():
                if similar(*said, text, lemma_):
                    hits.update(self._by_text[said])
            found = self._memo[key] = sorted(hits)
        return found

    def exact(self) -> Answer:
        """The same answer, whose words state a phrase word only by its lemma or form (no typo)."""
        return Answer(self.words, self.bare_list, self.open_asides, typos=False)

    def in_aside(self, span: list[int], counted: frozenset[int] = frozenset()) -> bool:
        """Whether a word of the span is in an aside about a thing contrasted (other than those `counted`)."""
        return any(self.words[n].aside_of >= 0 and self.words[n].aside_of not in counted for n in span)

    def asides_about(self, lemmas: set[str]) -> frozenset[int]:
        """The contrasts whose thing contrasted the lemmas name whole: every content word of it."""
        return frozenset(owner for owner, thing in self.contrasted.items() if thing <= lemmas)

    def content_between(self, first: int, last: int) -> bool:
        """Whether a content word stands between two positions."""
        return any(is_content(self.words[n].text) for n in range(first + 1, last))

    def negated(self, span: list[int]) -> bool:
        """Whether a negator outside the span holds any word from its first to its last."""
        return any(0 <= self.words[n].negated_by and self.words[n].negated_by not in span
                   for n in range(span[0], span[-1] + 1))


def read(text: str, synonyms: Synonyms = NO_SYNONYMS) -> Answer:
    """An answer as the matcher reads it: synonyms applied, then words, clauses and scopes (bot.grading.scopes)."""
    return Answer(*read_words(synonyms.rewrite(_raw_tokens(text))))


@dataclass(frozen=True)
class Phrase:
    """An accepted phrasing or misconception, read like an answer: (text, lemma) per word."""

    words: tuple[tuple[str, str], ...]
    content: int  # how many content words it has

    @cached_property
    def anchors(self) -> tuple[int, ...]:
        """The words that keep their order in an answer: content words and negators."""
        return tuple(n for n, (t, _) in enumerate(self.words) if _anchored(t))

    @cached_property
    def core(self) -> Phrase | None:
        """The phrase without its negators, when it has any (and other words), and without the "do" that
        carries a negation ("doesn't need parallelism": "need parallelism", said as "parallelism isn't needed")."""
        if not any(t in NEGATORS for t, _ in self.words):
            return None
        kept = tuple(w for w in self.words if w[0] not in NEGATORS and w[1] != "do")
        if not any(is_content(t) for t, _ in kept):
            return None  # nothing but function words without it ("nothing about")
        return Phrase(kept, sum(is_content(t) for t, _ in kept))

    @cached_property
    def floaters(self) -> tuple[int, ...]:
        """The other function words ("of", "only", "is"), which may stand anywhere inside the phrase's window."""
        return tuple(n for n, (t, _) in enumerate(self.words) if not _anchored(t))


def _anchored(word: str) -> bool:
    return is_content(word) or word in NEGATORS or word in CONTRASTS


def phrase(text: str, synonyms: Synonyms = NO_SYNONYMS) -> Phrase:
    """A phrasing read once (per language answers are read in): synonyms applied, determiners and fillers dropped,
    words lemmatised."""
    return _phrase(text, synonyms, answer_language())


@lru_cache(maxsize=20_000)
def _phrase(text: str, synonyms: Synonyms, language: str) -> Phrase:
    words = tuple((t, lemma(t)) for t in _tokens(text, synonyms) if t != BREAK)
    return Phrase(words, sum(is_content(t) for t, _ in words))


def content_words(text: str, synonyms: Synonyms | None = None) -> tuple[str, ...]:
    """The content words of a text as the matcher reads them (synonyms applied), in order."""
    return tuple(t for t in _tokens(text, synonyms or NO_SYNONYMS) if t != BREAK and is_content(t))
