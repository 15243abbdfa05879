"""Reading short answers and rubric phrasings: text into lemmatised words, with clause breaks, negation
scopes, asides and bare lists marked, so that bot.grading.matching can tell what an answer states.

- Words are compared by lemma (simplemma, English), so "shards the parameters" states "sharding
  parameter". A word longer than three letters may carry a typo: one edit (a letter added, dropped,
  changed or two swapped; two edits from eight letters on, rapidfuzz Damerau-Levenshtein) with the
  same first letter, so "nonconstant" is no typo of "constant". Two real words are never typos of
  each other when short ("case", "cause") and at most one edit apart otherwise ("section" is not
  "selection"), and a word is no typo of its derivative ("insert", "insertion"). Words of three
  letters or fewer must be exact.
- Articles, possessive and demonstrative determiners ("the", "its", "this") and fillers
  ("basically") are dropped on both sides. Clause breaks are a comma, semicolon, colon, ! ?, a full
  stop, or an aside in parentheses.
- Short verbs are spelled out ("we'd" is "we would", "they're" "they are", "it's" and "thats" "it
  is" and "that is"; "n't" is "not"), and a possessive 's goes ("TP's" is "TP").
- Numbers are normalised: "184,320" is "184320", "16k" and "16 thousand" are "16000", "3.3M" is
  "3300000", "one" to "twelve" are digits; decimals are kept ("3.5"); "n^2" is "n2". Symbols read
  as words ("&" and, "+" plus, "<=" less than or equal to, "->" to, "w/o" without), "non-"
  and "non " join the next word ("nonconstant"; a "non" left alone before a function word is
  "none"), and an identifier splits into its words ("arrayName" is "array name"; "LoRA" is one word).
- Negation: a negator ("no", "not", "n't", "cannot", "never", "without", "unlike", "instead of",
  "rather than", "unless", ...; but not "not only" or "whether or not") opens a scope that runs to
  the end of its clause: the next clause break, a conjunction such as "but", "while", "whereas",
  "because", "if", "when" or "unless", a "where", or an "and" that starts a new clause with a
  pronoun or a verb of its own, or, after a clause of three words or more, with an article, a short
  noun and a singular verb ("... and it splits each layer", "... and is judged on latency", "... and
  the model might have memorized it", but not "... the weights and the gradients are sharded"; a new
  clause for phrases too). Inside a scope, a "without" within three words closes it ("never
  ship without an eval gate" states "eval gate"), and so does an "unless" ("we won't ship unless it
  passes the eval gate" states "passes the eval gate"). The content word a negator closely follows
  in its clause is what the clause denies something of ("latency is not important").
- Contrasts ("unlike", "vs"): a relative clause after a contrast ("unlike DDP, where each GPU has
  the full model, ...") is an aside about the thing contrasted (bot.grading.matching says what it states). A
  contrast followed by UNDELIMITED_CONTRAST words or more with no clause break holds only the thing
  contrasted: its next CONTRAST_HOLDS content words ("unlike DP TP splits each layer", "unlike full
  pretraining LoRA fits on one GPU"), or the words up to a relative word a few words on, which opens
  an aside that no comma closes ("unlike plain DDP training which copies the model, ..."). "Instead
  of" and "rather than" hold what follows them to the break.
- Synonyms: a pack-level table rewrites words ("DP" -> "data parallelism") in answers and
  phrasings alike, before they are read.
- Bare lists: an answer without a single function word ("of", "is", "it", "which", ...), and
  without an article after the first word of an item, relates nothing to anything. Its items are
  the pieces between clause breaks and "and"/"or" (or each word, when it has four or more words
  and no separator at all). A terse sentence with no function word at all ("FSDP shards model
  parameters") cannot be told from such a list.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from functools import cached_property, lru_cache

import simplemma
from rapidfuzz.distance import DamerauLevenshtein

UNDELIMITED_CONTRAST = 4  # words after "unlike" with no break: it holds only the thing contrasted,
CONTRAST_HOLDS = 2  # its next two content words ("unlike DP, TP ..." typed as "unlike DP TP ...")
BREAK = ","  # the token that stands for any clause break

# Articles, possessives and demonstratives: ignored on both sides, like fillers.
DETERMINERS = frozenset({"a", "an", "the", "its", "their", "his", "her", "my", "our", "your", "this", "these", "those"})
FILLERS = frozenset({
    "basically", "actually", "really", "simply", "very", "quite", "essentially", "literally", "certainly",
    "definitely", "truly", "um", "umm", "uh", "uhm", "er", "erm", "hmm", "ok", "okay",
})
NEGATORS = frozenset({
    "no", "not", "never", "without", "none", "nothing", "nobody", "nowhere", "neither", "nor", "unless",
})
CONTRASTS = frozenset({"unlike", "vs", "versus"})  # also "instead of", "rather than", "as opposed to": see _negator
CLAUSE_WORDS = frozenset({
    "but", "while", "whereas", "although", "though", "however", "yet", "because", "since", "so", "unlike",
    "vs", "versus", "instead", "rather", "if", "when", "unless",
})
RELATIVES = frozenset({"where", "which", "who", "whose", "that"})
# After "and": a new clause, with a subject of its own ("and it splits") or the same one ("and is judged on").
AUXILIARIES = frozenset({
    "is", "are", "was", "were", "has", "have", "had", "can", "could", "will", "would", "should", "may", "might",
    "must", "does", "did",
})
PLURAL_BE = frozenset({"are", "were"})  # "X and Y are ...": one subject of two
SUBJECTS = AUXILIARIES | {"it", "they", "we", "you", "i", "he", "she", "there", "that", "this"}
LIST_JOINERS = frozenset({"and", "or"})
# Words that relate other words: an answer with none of them is a bare list.
RELATION_WORDS = NEGATORS | CLAUSE_WORDS | RELATIVES | frozenset({
    "of", "to", "in", "on", "at", "by", "for", "with", "from", "into", "onto", "over", "under", "between",
    "among", "through", "across", "within", "per", "about", "than", "as", "after", "before", "during",
    "via", "upon", "inside", "outside", "until", "against", "toward", "towards", "around", "along", "like",
    "it", "its", "they", "them", "their", "he", "she", "his", "her", "we", "our", "us", "you", "your", "i",
    "me", "my", "this", "these", "those", "what", "when", "how", "why", "each", "every", "all", "both",
    "either", "some", "any", "other", "another", "itself", "themselves", "there", "here",
    "be", "is", "are", "was", "were", "been", "being", "am", "have", "has", "had", "do", "does", "did",
    "can", "could", "will", "would", "shall", "should", "may", "might", "must",
    "if", "unless", "whether", "then", "only", "also", "just", "even", "still", "always",
    "plus", "minus", "times", "equals", "less", "greater",
})
FUNCTION_WORDS = RELATION_WORDS | DETERMINERS | FILLERS | LIST_JOINERS

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
    "non": "none",  # "non" alone is what is left of a "none" typo: see _joined_non
}
_SYMBOLS = (
    ("<=", " less than or equal to "), (">=", " greater than or equal to "), ("!=", " not equal to "),
    ("->", " to "), ("=>", " to "), ("==", " equals "), ("<", " less than "), (">", " greater than "),
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
    text = _CAMEL.sub(" ", unicodedata.normalize("NFKC", text)).translate(_QUOTES).lower()
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


@lru_cache(maxsize=100_000)
def lemma(word: str) -> str:
    """The English lemma of a lower-case word; an unknown plural ("gpus") loses its s; numbers stay."""
    if word[0].isdigit():
        return word
    found = simplemma.lemmatize(word, lang="en")
    if (found == word and len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "is"))
            and not simplemma.is_known(word, lang="en")):
        return word[:-1]
    return found


def is_content(word: str) -> bool:
    """Whether a word carries meaning of its own (not an article, filler, joiner or relation word)."""
    return word not in FUNCTION_WORDS and lemma(word) not in FUNCTION_WORDS


@lru_cache(maxsize=200_000)
def _similar(said: str, said_lemma: str, wanted: str, wanted_lemma: str) -> bool:
    """Whether a word of the answer is the wanted word: the same lemma or form, or a typo of it."""
    if said_lemma == wanted_lemma or said == wanted:
        return True
    if len(wanted) <= 3 or said[0] != wanted[0] or said[0].isdigit() or wanted[0].isdigit():
        return False
    short, long = sorted((said_lemma, wanted_lemma), key=len)
    if len(long) - len(short) >= 2 and long.startswith(short) and simplemma.is_known(short, lang="en"):
        return False  # a word and its derivative (insert, insertion; point, pointer) are not typos of each other
    if simplemma.is_known(said, lang="en") and simplemma.is_known(wanted, lang="en"):
        # two real words: one edit apart at most, and never short ones (case, cause; section, selection)
        return len(wanted) > 5 and _typo(said, wanted, 1)
    return _typo(said_lemma, wanted_lemma) or _typo(said, wanted)


def _typo(said: str, wanted: str, allowed: int = 0) -> bool:
    """At most one edit (two for words of eight letters or more): a letter added, dropped, changed or swapped."""
    allowed = allowed or (1 if len(wanted) < 8 else 2)
    return DamerauLevenshtein.distance(said, wanted, score_cutoff=allowed) <= allowed


def same_word(said: str, wanted: str) -> bool:
    """Same lemma, or a small typo of a longer word; short words (no, not, all) must be exact."""
    return _similar(said, lemma(said), wanted, lemma(wanted))


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


def _negator(tokens: list[str], i: int) -> bool:
    """Whether tokens[i] opens a negation scope ("not only" and "whether or not" do not; "instead of" does)."""
    word, after = tokens[i], tokens[i + 1] if i + 1 < len(tokens) else ""
    if word in NEGATORS:
        return not ((word == "not" and after == "only") or (word == "not" and i and tokens[i - 1] == "or"))
    return (word in CONTRASTS or (word == "instead" and after == "of") or (word == "rather" and after == "than")
            or (word == "opposed" and after == "to"))


def _next_word(tokens: list[str], i: int) -> str:
    return next((t for t in tokens[i + 1 :] if t != BREAK), "")


def _starts_clause(tokens: list[str], i: int) -> bool:
    """Whether the words after tokens[i] (an "and") start a clause: a pronoun or a verb ("and it splits", "and is
    judged"), or an article, a short noun and a singular verb ("and the model might have memorized it"; not
    "the weights and the gradients are", a subject of two)."""
    after = [t for t in tokens[i + 1 : i + 5] if t not in DETERMINERS and t not in FILLERS]
    if after and after[0] in SUBJECTS:
        return True
    if i + 1 >= len(tokens) or tokens[i + 1] not in DETERMINERS:
        return False
    before = 0  # the clause before the "and" has words of its own: "... our refund policy and the model might"
    for t in reversed(tokens[:i]):
        if t == BREAK:
            break
        before += t not in DETERMINERS and t not in FILLERS
    for n, t in enumerate(after[:3] if before >= 3 else ()):
        if t == BREAK or t in LIST_JOINERS:
            return False
        if n and t in AUXILIARIES:
            return t not in PLURAL_BE and all(is_content(w) for w in after[:n])
    return False


def _clause_length(tokens: list[str], i: int) -> int:
    """How many words (determiners and fillers aside) follow tokens[i] before the next clause break."""
    length = 0
    for token in tokens[i + 1 :]:
        if token == BREAK:
            break
        length += token not in DETERMINERS and token not in FILLERS
    return length


def _read(tokens: list[str]) -> tuple[list[Word], bool, frozenset[int]]:
    """The words (determiners and fillers dropped) with clause, item and negation scope; and whether
    the tokens are a bare list: no relation word, and no determiner after the first word of an item; and the
    contrasts whose aside no comma closes, so that it may run on into what the answer says of its subject."""
    words: list[Word] = []
    clause = item = 0
    owner, contrast, related = -1, False, False
    held = 0  # content words an undelimited contrast still holds ("unlike full pretraining LoRA fits ...")
    aside = -1  # the contrast whose aside the words are in
    aside_from = -1  # where an undelimited contrast's relative clause starts: "unlike DDP which copies ..."
    open_asides: set[int] = set()
    for i, token in enumerate(tokens):
        if i == aside_from:
            open_asides.add(owner)
            owner, contrast, held, aside = -1, False, 0, owner
        if token == BREAK:
            clause, item = clause + 1, item + 1
            aside = owner if contrast and _next_word(tokens, i) in RELATIVES else -1  # "unlike X, where ...": on X
            owner, contrast = -1, False
            continue
        if token in FILLERS or token in DETERMINERS:
            related = related or (token in DETERMINERS and bool(words) and words[-1].item == item)
            continue
        was_negated = owner >= 0 and not contrast
        new_clause = token in LIST_JOINERS and _starts_clause(tokens, i)  # "... and it splits"
        if (token in CLAUSE_WORDS or (token == "where" and i and tokens[i - 1] != BREAK and i != aside_from)
                or new_clause):
            owner, contrast, aside = -1, False, -1  # ("unlike X, where" goes on: see above)
            clause += new_clause
        item += token in LIST_JOINERS
        negator = _negator(tokens, i) and not (token == "unless" and was_negated)  # "won't ship unless it passes"
        words.append(Word(token, lemma(token), clause, item, -1 if negator else owner, aside))
        item += token in LIST_JOINERS
        related = related or token in RELATION_WORDS or words[-1].lemma in RELATION_WORDS
        if (negator and owner >= 0 and not contrast and token == "without" and len(words) - owner <= 5
                and not any(w.text in LIST_JOINERS for w in words[owner:])):
            owner = -1  # a negation inside a negation: "never ship without an eval" requires the eval
        elif negator:
            owner, contrast = len(words) - 1, token not in NEGATORS
            held = CONTRAST_HOLDS if token in CONTRASTS and _clause_length(tokens, i) >= UNDELIMITED_CONTRAST else 0
            if held:
                aside_from = next((k for k in range(i + 2, min(i + 7, len(tokens)))
                                   if tokens[k] in RELATIVES and BREAK not in tokens[i:k]), -1)
        elif held and owner >= 0 and is_content(token) and aside_from < i:
            held -= 1
            if not held:
                owner, contrast = -1, False
    bare_list = bool(words) and not related
    if bare_list and len(words) >= 4 and len({w.item for w in words}) == 1:
        words = [Word(w.text, w.lemma, w.clause, n, w.negated_by, w.aside_of) for n, w in enumerate(words)]  # each
    return words, bare_list, frozenset(open_asides)


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
    """An answer read once for matching: its words, negation scopes and whether it is a bare list."""

    __slots__ = ("words", "bare_list", "open_asides", "contrasted", "denied", "_by_text", "_by_lemma", "_by_letter",
                 "_memo")

    def __init__(self, text: str, synonyms: Synonyms = NO_SYNONYMS) -> None:
        words, self.bare_list, self.open_asides = _read(synonyms.rewrite(_raw_tokens(text)))
        self.words = tuple(words)
        self.contrasted = _contrasted(self.words)
        self.denied = frozenset(_subjects_of_negation(self.words))
        self._by_text: dict[tuple[str, str], list[int]] = {}
        self._by_lemma: dict[str, list[int]] = {}
        self._by_letter: dict[str, list[tuple[str, str]]] = {}
        for n, w in enumerate(words):
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
            for said in self._by_letter.get(text[0], ()):
                if _similar(*said, text, lemma_):
                    hits.update(self._by_text[said])
            found = self._memo[key] = sorted(hits)
        return found

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


@lru_cache(maxsize=20_000)
def phrase(text: str, synonyms: Synonyms = NO_SYNONYMS) -> Phrase:
    """A phrasing read once: synonyms applied, determiners and fillers dropped, words lemmatised."""
    words = tuple((t, lemma(t)) for t in _tokens(text, synonyms) if t != BREAK)
    return Phrase(words, sum(is_content(t) for t, _ in words))


def content_words(text: str, synonyms: Synonyms | None = None) -> tuple[str, ...]:
    """The content words of a text as the matcher reads them (synonyms applied), in order."""
    return tuple(t for t in _tokens(text, synonyms or NO_SYNONYMS) if t != BREAK and is_content(t))
