"""Where a phrase stands in an answer: pure functions over an Answer and a Phrase (bot.grading.reading).

An answer states a phrase (an accepted phrasing or a misconception) where its words stand as follows:

- Up to MAX_INSERTED content words and MAX_INSERTED_FUNCTION function words may stand inside a
  phrase ("splits the whole model" states "splits the model"; "replaces all instances of the
  function call" states "replaces the function call"). The content words and negators of a phrase
  keep their order, but its other function words may stand anywhere inside a window MAX_INSERTED
  words longer than the phrase ("used only within" states "only used within"; a misconception must
  be said in order). A phrase of two content words may also be said the other way round with only
  function words between ("memory location" as "location in memory", "store a value" as "a value
  can be stored"). A phrase runs across a clause break only when said word for word with only
  punctuation between, a whole clause at one end at least ("first in, first out", one step a
  sentence; "It splits. The model trains." does not say "splits the model"); in a bare list, only
  when it is the whole answer, of LISTED_STEPS words or more ("left, root, right").
- Typos: a misconception stated only through a typo ("FILO" for "FIFO") voids nothing when an
  accepted phrasing of its point is said exactly (bot.grading.words: short abbreviations are never typos).
- Negation: a phrase inside a scope opened by a negator that is not part of the phrase is not
  stated: it neither credits an accepted phrasing nor voids by a misconception. A phrasing that
  carries its own negator ("no backward pass") is matched like any other, and also by its other
  words standing inside the scope of one negator of the answer ("never runs a backward pass",
  "does not need any extra room to copy" states "not copy"), or with its subject just before that
  negator, only function words between ("a constructor is not provided" states "not provide a
  constructor"; the "do" of a negation goes: "parallelism isn't needed" states "doesn't need
  parallelism"). Without its negators, such a phrasing must keep a content word ("nothing about"
  is never stated by "about").
- Asides: what an aside says of a thing contrasted ("unlike DDP, where each GPU has the full model,
  ...") claims nothing of the answer's subject, so a misconception said there voids nothing, unless
  the misconception names that thing ("..., vs training, which fits on one GPU" says "training fits on
  one GPU"; not in an aside no comma closes). An aside states a key point only when the point names
  the whole thing contrasted in its label or a phrasing ("unlike TP, which splits each layer, ..."
  states "TP splits each layer", not "pipeline parallelism needs the fastest links"; an aside no comma
  closes states any point).
- Bare lists: in an answer that is a bare list, a phrasing of several content words counts only
  where it stands word for word inside one item, as a listed term does ("optimizer state" in
  "parameters, optimizer state").
- Contrasts keep their direction: a phrasing with a content word before its negator ("throughput, not latency")
  is stated only with its words in order and on the same sides of the answer's negator ("latency, not throughput"
  does not state it).
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable, Iterator
from functools import lru_cache

from bot.grading.reading import NO_SYNONYMS, Answer, Phrase, Synonyms, phrase, read
from bot.grading.rules import AUXILIARIES, NEGATORS, SUBJECTS
from bot.grading.words import is_content, lemma

MAX_INSERTED = 2  # content words an answer may insert inside a phrase
MAX_INSERTED_FUNCTION = 3  # and function words ("of", "that", "is")
LISTED_STEPS = 3  # a bare list states a phrasing item by item only when it is the whole answer, of so many words or
# more ("left, root, right"): "optimizer, state" is two terms, not "optimizer state"

# Words whose swap states the opposite: an answer that says "less communication" denies "more communication".
_OPPOSITES = (("more", "less"), ("many", "few"), ("fast", "slow"), ("faster", "slower"), ("high", "low"),
              ("higher", "lower"), ("large", "small"), ("larger", "smaller"), ("big", "small"), ("bigger", "smaller"),
              ("increase", "decrease"), ("before", "after"), ("first", "last"),
              ("cheap", "expensive"), ("cheaper", "costlier"), ("easy", "hard"), ("easier", "harder"))
OPPOSITES = {a: b for pair in _OPPOSITES for a, b in (pair, pair[::-1])}

# "only ... inside X" is "not ... outside X": the words that confine, and the word for what lies beyond them.
ONLY, CONFINED, OUTSIDE = "only", frozenset({"in", "inside", "within"}), "outside"

ABSENT, NEGATED, STATED = 0, 1, 2
PRONOUNS = SUBJECTS - AUXILIARIES  # a clause's own subject, when it names none: "it", "they", "that"


def _in_order(answer: Answer, lists: list[list[int]], budget: tuple[int, int]) -> Iterator[list[int]]:
    """Each earliest placement of words in order, with at most budget[0] content words and budget[1] function
    words between them."""
    for start in lists[0]:
        span, content, function = [start], 0, 0
        for found in lists[1:]:
            k = bisect_right(found, span[-1])
            if k == len(found):
                break
            between = range(span[-1] + 1, found[k])
            inserted = sum(is_content(answer.words[n].text) for n in between)
            content, function = content + inserted, function + len(between) - inserted
            if content > budget[0] or function > budget[1]:
                break
            span.append(found[k])
        else:
            yield span


def _float(anchored: list[int], lists: list[list[int]], width: int) -> list[int] | None:
    """The anchored positions with the nearest free position of each floating word, if all fit in `width`."""
    taken, low, high = set(anchored), anchored[0], anchored[-1]
    for found in lists:
        free = [p for p in found if p not in taken and max(high, p) - min(low, p) < width]
        if not free:
            return None
        best = min(free, key=lambda p: max(high, p) - min(low, p))
        taken.add(best)
        low, high = min(low, best), max(high, best)
    return sorted(taken)


def _spans(answer: Answer, wanted: Phrase, loose: bool = True) -> Iterator[list[int]]:
    """Each placement of the phrase's words in the answer: its content words and negators in order, its other
    function words anywhere between or beside them, within the insertion budget and one clause."""
    lists = [answer.positions(*w) for w in wanted.words]
    if not wanted.words or not all(lists):
        return
    strict = answer.bare_list and wanted.content > 1
    for span in _candidates(answer, wanted, lists, strict, loose):
        first, last = answer.words[span[0]], answer.words[span[-1]]
        if first.clause == last.clause and (not strict or first.item == last.item):
            yield span
        elif _punctuated(answer, span, len(wanted.words)) and (not answer.bare_list or (
                len(span) == len(answer.words) >= LISTED_STEPS)):
            yield span


def _punctuated(answer: Answer, span: list[int], size: int) -> bool:
    """Whether a span across clause breaks is the phrase said word for word with only punctuation between ("first
    in, first out", "left,root,right", one step a sentence), a whole clause at one end at least ("It splits. The
    model trains." does not say "splits the model")."""
    if span != list(range(span[0], span[0] + size)):
        return False
    words = answer.words
    starts = span[0] == 0 or words[span[0] - 1].clause != words[span[0]].clause
    ends = span[-1] == len(words) - 1 or words[span[-1] + 1].clause != words[span[-1]].clause
    return starts or ends


def _candidates(answer: Answer, wanted: Phrase, lists: list[list[int]], strict: bool, loose: bool
                ) -> Iterator[list[int]]:
    """The phrase's words in order, then (when `loose`) its anchors in order with its other function words near;
    `strict` (a bare list) allows no inserted word."""
    budget = (0, 0) if strict else (MAX_INSERTED, MAX_INSERTED_FUNCTION)
    yield from _in_order(answer, lists, budget)
    if strict or not loose or not wanted.anchors or not wanted.floaters:
        return
    width = len(wanted.words) + MAX_INSERTED
    floating = [lists[n] for n in wanted.floaters]
    for anchored in _in_order(answer, [lists[n] for n in wanted.anchors], budget):
        span = _float(anchored, floating, width)
        if span is not None:
            yield span


def placements(answer: Answer, wanted: Phrase, loose: bool = True) -> Iterator[list[int]]:
    """Where the phrase stands in the answer; a two-content-word phrase also the other way round with only
    function words between ("memory location" as "location in memory")."""
    yield from _spans(answer, wanted, loose)
    if len(wanted.words) == 2 and wanted.content == 2:
        for span in _spans(answer, Phrase(wanted.words[::-1], 2)):
            if not any(is_content(answer.words[n].text) for n in range(span[0] + 1, span[-1])):
                yield span


def find(answer: Answer, wanted: Phrase, loose: bool = True, asides: frozenset[int] | None = None) -> int:
    """STATED, NEGATED (only inside a negator's scope) or ABSENT. A phrasing with its own negator ("not copy")
    is also stated by its other words inside one negator's scope ("does not need any extra space to copy").
    With `asides`, what an aside about a thing contrasted says is stated only for those contrasts."""
    best = ABSENT
    for span in _counted(answer, placements(answer, wanted, loose), asides):
        if not answer.negated(span):
            return STATED
        best = NEGATED
    core = wanted.core
    return STATED if core is not None and _stated_by_core(answer, wanted, core, loose, asides) else best


def _counted(answer: Answer, spans: Iterable[list[int]], asides: frozenset[int] | None) -> Iterator[list[int]]:
    """The spans, without those in an aside other than `asides` (all of them, when None)."""
    return (span for span in spans if asides is None or not answer.in_aside(span, asides))


def _stated_by_core(answer: Answer, wanted: Phrase, core: Phrase, loose: bool, asides: frozenset[int] | None
                    ) -> bool:
    """Whether a phrasing with its own negator is stated by its other words inside the scope of one negator of the
    answer, or, when it has one negator, with its subject just before it ("a constructor is not provided")."""
    one_negator = sum(t in NEGATORS for t, _ in wanted.words) == 1
    sides = _sides(wanted)
    if sides is not None:  # a contrast ("throughput, not latency"): its words keep their order and their sides
        return any(_on_sides(answer, span, sides) for span in _counted(answer, _spans(answer, core, loose), asides))
    return any(_in_one_scope(answer, span, one_negator)
               for span in _counted(answer, placements(answer, core, loose), asides))


def _sides(wanted: Phrase) -> tuple[bool, ...] | None:
    """For a phrasing with a content word before its negator (a contrast: "throughput, not latency"), whether each of
    its content words stands after a negator; None for any other phrasing."""
    sides, negated = [], False
    for text, _ in wanted.words:
        if text in NEGATORS:
            negated = True
        elif is_content(text):
            sides.append(negated)
    return tuple(sides) if sides and not sides[0] and any(sides) else None


def _on_sides(answer: Answer, span: list[int], sides: tuple[bool, ...]) -> bool:
    """Whether the content words of the span, in order, stand under a negation where the contrast's do ("latency, not
    throughput" never states "throughput, not latency")."""
    content = [n for n in span if is_content(answer.words[n].text)]
    return len(content) == len(sides) and all(
        (answer.words[n].negated_by >= 0) is negated for n, negated in zip(content, sides, strict=True))


def _in_one_scope(answer: Answer, span: list[int], subject_before: bool) -> bool:
    """Whether the span stands inside the scope of the negator of its last word (or, with `subject_before`, partly
    just before that negator, with no content word between)."""
    owner = answer.words[span[-1]].negated_by
    if owner < 0:
        return False
    before = [n for n in span if n < owner]
    return (all(answer.words[n].negated_by == (owner if n > owner or not subject_before else -1) for n in span)
            and not (before and answer.content_between(before[-1], owner)))


def states(text: str, wanted: str, synonyms: Synonyms | None = None) -> bool:
    """Whether the text states the phrase (outside any negation)."""
    table = synonyms or NO_SYNONYMS
    return find(read(text, table), phrase(wanted, table)) == STATED


@lru_cache(maxsize=20_000)
def restated(wanted: Phrase) -> Phrase | None:
    """A phrasing that confines something ("only used inside the function") said as its negated complement ("not used
    outside the function", which "it cannot be used outside of the function" states); None for any other phrasing."""
    texts = [t for t, _ in wanted.words]
    if ONLY not in texts:
        return None
    start = texts.index(ONLY)
    place = next((n for n in range(start + 1, len(texts)) if texts[n] in CONFINED), None)
    if place is None or not any(is_content(t) for t in texts[place + 1 :]):
        return None
    words = (*wanted.words[:start], ("not", "not"), *wanted.words[start + 1 : place], (OUTSIDE, OUTSIDE),
             *wanted.words[place + 1 :])
    return Phrase(words, wanted.content)


@lru_cache(maxsize=20_000)
def opposite(wanted: Phrase) -> Phrase | None:
    """The phrase with its first word that has an opposite swapped for it ("more memory": "less memory")."""
    for n, (text, _) in enumerate(wanted.words):
        if text in OPPOSITES:
            other = OPPOSITES[text]
            return Phrase(wanted.words[:n] + ((other, lemma(other)),) + wanted.words[n + 1 :], wanted.content)
    return None


def stating(answer: Answer, wanted: Phrase, loose: bool = True, asides: frozenset[int] | None = None) -> set[int]:
    """The content words of the answer that state the phrase (in every placement outside negation)."""
    return {n for span in placements(answer, wanted, loose) if not answer.negated(span)
            and (asides is None or not answer.in_aside(span, asides))
            for n in span if is_content(answer.words[n].text)}


def said_under_negation(answer: Answer, wanted: Phrase) -> bool:
    """Whether the answer states the phrase (one without a negator of its own) and also says it elsewhere inside a
    negator's scope, of the same subject ("FSDP splits the model ... FSDP does not split the model", "... it does
    not"; not "a constructor has no return type, a function has a return type"; a contrast's scope, "instead of",
    denies nothing)."""
    if any(t in NEGATORS for t, _ in wanted.words):
        return False
    spans = list(placements(answer, wanted))
    subjects = [_subject(answer, span) for span in spans if not answer.negated(span)]
    stated = {n for span in spans if not answer.negated(span) for n in span}
    return any(not stated.intersection(span) and any(_subject(answer, span) <= subject for subject in subjects) and any(
        answer.words[answer.words[n].negated_by].text in NEGATORS for n in span if answer.words[n].negated_by >= 0)
        for span in spans)


def _subject(answer: Answer, span: list[int]) -> frozenset[str]:
    """The lemmas of the content words before the span in its clause: what it is said of. A clause with neither
    such a word nor a pronoun before the span ("..., and has no return type", "..., but does not") is said of the
    clause before it."""
    clause = answer.words[span[0]].clause
    before = [w for w in answer.words[: span[0]] if w.clause == clause]
    earlier = [w for w in answer.words[: span[0]] if w.clause < clause]
    if earlier and not any(is_content(w.text) or w.text in PRONOUNS for w in before):
        before = [w for w in earlier if w.clause == earlier[-1].clause]
    return frozenset(w.lemma for w in before if is_content(w.text))


def placed(answer: Answer, wanted: Phrase, asides: frozenset[int] | None = None) -> Iterator[list[int]]:
    """Each placement of the phrase outside negation (and outside asides other than `asides`; all, when None)."""
    return (span for span in _counted(answer, placements(answer, wanted), asides) if not answer.negated(span))
