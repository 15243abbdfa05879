"""Short-answer grading: pure functions over text and a rubric.

A key point is matched when the answer states one of its accepted phrasings; a misconception
that the answer states voids it. Both are read as bot.grading.reading reads them; where a phrase stands:

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
- Verdict: correct when `needed` key points are stated. A `half_point` rubric (a short answer's)
  needing two or more is also met by one fewer and a further point half stated (half the content
  words of one of its phrasings, outside negation and asides: NEAR_POINT), as a grader gives a
  point to an answer that names it in part; a bare list never is, nor a point the answer denies
  (one of its phrasings said under negation, "it does not need fast links", or with a word swapped
  for its opposite, "it needs less communication" for "more communication") or half states only by
  a word a clause denies something of ("latency is not important"), nor an answer that states a
  misconception. A word that states one point (or a misconception) is no part of another:
  "millions of GPU hours" states nothing of "on one GPU".
- Score: besides the verdict, a grade has a score from 0 to 1 for ranking answers. A matched point
  earns 1, a voided one 0, and any other NEAR_CREDIT times the square of the share of its best
  phrasing's content words that the answer states outside negation and outside other points (all
  of them, said apart: 0.7). The score is NEEDED_WEIGHT times the mean credit of the best `needed`
  points plus the rest times the mean credit of all points.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from functools import lru_cache

from bot.grading.reading import NO_SYNONYMS, Answer, Phrase, Synonyms, content_words, phrase, read
from bot.grading.rubric import KeyPoint, Rubric
from bot.grading.rules import NEGATORS
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

ABSENT, NEGATED, STATED = 0, 1, 2


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


def _placements(answer: Answer, wanted: Phrase, loose: bool = True) -> Iterator[list[int]]:
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
    for span in _counted(answer, _placements(answer, wanted, loose), asides):
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
    return any(_in_one_scope(answer, span, one_negator)
               for span in _counted(answer, _placements(answer, core, loose), asides))


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


# ---------------------------------------------------------------- grading


@dataclass(frozen=True)
class Coverage:
    """Which key points an answer states; `voided` ones were stated with a misconception. `credit` holds, per key
    point in rubric order, 1 for a matched point, 0 for a voided one, and partial credit for the others."""

    matched: tuple[str, ...]
    missed: tuple[str, ...]
    voided: tuple[str, ...]
    credit: tuple[float, ...] = field(default=(), kw_only=True)


@dataclass(frozen=True)
class Grade(Coverage):
    """`correct` is the verdict; `score` (0 to 1) is a graded reading of the same coverage, for ranking answers."""

    correct: bool = False
    score: float = field(default=0.0, kw_only=True)
    partly: tuple[str, tuple[str, ...]] | None = field(default=None, kw_only=True)  # a point half said, and its words


NEAR_CREDIT = 0.7  # the credit of a point whose phrasing's words are all stated, but not as the phrase
NEAR_POINT = NEAR_CREDIT * 0.5**2  # the credit of a point half of whose phrasing's content words are stated
NEEDED_WEIGHT = 0.6  # the share of the score from the best `needed` points; the rest is from all points


def _partial(answer: Answer, wanted: Phrase, taken: set[int]) -> float:
    """NEAR_CREDIT times the square of the share of the phrase's content words the answer states (anywhere,
    outside any negation scope, and not already `taken` by another point): some credit for the words of a key
    point said apart or in other words."""
    content = [w for w in wanted.words if is_content(w[0])]
    if not content:
        return 0.0
    said = sum(any(answer.words[n].negated_by < 0 and n not in taken for n in answer.positions(*w)) for w in content)
    return NEAR_CREDIT * (said / len(content)) ** 2


@lru_cache(maxsize=20_000)
def _opposite(wanted: Phrase) -> Phrase | None:
    """The phrase with its first word that has an opposite swapped for it ("more memory": "less memory")."""
    for n, (text, _) in enumerate(wanted.words):
        if text in OPPOSITES:
            other = OPPOSITES[text]
            return Phrase(wanted.words[:n] + ((other, lemma(other)),) + wanted.words[n + 1 :], wanted.content)
    return None


def _stating(answer: Answer, wanted: Phrase, loose: bool = True, asides: frozenset[int] | None = None) -> set[int]:
    """The content words of the answer that state the phrase (in every placement outside negation)."""
    return {n for span in _placements(answer, wanted, loose) if not answer.negated(span)
            and (asides is None or not answer.in_aside(span, asides))
            for n in span if is_content(answer.words[n].text)}


def cover(points: Iterable[KeyPoint], text: str, *, synonyms: Synonyms | None = None) -> Coverage:
    """The key points the text states; a stated misconception voids its point."""
    table = synonyms or NO_SYNONYMS
    return _cover(points, read(text, table), table)[0]


def _said_in_aside(answer: Answer, wanted: Phrase) -> bool:
    """Whether a misconception about a thing ("training fits on one GPU") is said, without its name, in an aside
    about that thing ("serving is judged on latency, vs training, which fits on one GPU")."""
    for owner, thing in answer.contrasted.items():
        rest = tuple(w for w in wanted.words if w[1] not in thing)
        named = thing <= {lemma_ for _, lemma_ in wanted.words}
        if owner in answer.open_asides or not named or not any(is_content(t) for t, _ in rest):
            continue  # an aside no comma closes may run into the answer's own claims
        for span in _placements(answer, Phrase(rest, sum(is_content(t) for t, _ in rest)), loose=False):
            if all(answer.words[n].aside_of == owner for n in span) and not answer.negated(span):
                return True
    return False


def _counted_asides(point: KeyPoint, answer: Answer, table: Synonyms) -> frozenset[int]:
    """The asides whose words may state the point: those about a thing the point names (its label or a phrasing:
    "unlike TP, which splits each layer, ..." states "TP splits each layer"), and those no comma closes."""
    if not answer.contrasted and not answer.open_asides:
        return frozenset()
    named = {lemma(w) for text in (point.point, *point.accept) for w in content_words(text, table)}
    return answer.asides_about(named) | answer.open_asides


def _cover(points: Iterable[KeyPoint], answer: Answer, table: Synonyms, asked: frozenset[str] = frozenset()
           ) -> tuple[Coverage, dict[str, tuple[str, ...]]]:
    """The coverage, and the missed points half stated, each with the words of the answer that state it
    (_half_stated; `asked`: the lemmas of the prompt). A word that states a matched point or a misconception earns no
    partial credit for another."""
    points = tuple(points)
    matched, voided, denied, taken = [], [], set(), set()
    for point in points:
        wrong = _misconception_said(point, answer, table)
        if wrong is not None and _misconception_said(point, answer.exact(), table) is None \
                and _find_point(point, answer.exact(), table)[0] == STATED:
            wrong = None  # a typo of a misconception ("FILO") never outweighs an accepted phrasing said ("FIFO")
        if wrong is not None:
            voided.append(point.id)
            taken |= _stating(answer, wrong, loose=False, asides=frozenset())
            continue
        found, stating = _find_point(point, answer, table)
        if found == STATED:
            matched.append(point.id)
            taken |= stating
        elif found == NEGATED or (found == ABSENT and _opposite_said(point, answer, table)):
            denied.add(point.id)  # said under a negation, or its opposite said
    credit = tuple(1.0 if p.id in matched else 0.0 if p.id in voided
                   else max((_partial(answer, phrase(a, table), taken) for a in p.accept), default=0.0)
                   for p in points)
    missed = tuple(p.id for p in points if p.id not in matched)
    halves = _half_stated(points, credit, answer, table, taken | answer.denied, denied, asked)
    return Coverage(tuple(matched), missed, tuple(voided), credit=credit), halves


def _misconception_said(point: KeyPoint, answer: Answer, table: Synonyms) -> Phrase | None:
    """The point's first misconception that the answer states (in order, outside asides, or in an aside about
    the thing it names)."""
    return next((wrong for wrong in (phrase(m, table) for m in point.misconceptions)
                 if find(answer, wrong, loose=False, asides=frozenset()) == STATED or _said_in_aside(answer, wrong)),
                None)


def _find_point(point: KeyPoint, answer: Answer, table: Synonyms) -> tuple[int, set[int]]:
    """STATED and the content words that state its first stated phrasing; else NEGATED or ABSENT, and none."""
    found, counted = ABSENT, _counted_asides(point, answer, table)
    for accepted in (phrase(a, table) for a in point.accept):
        found = max(found, find(answer, accepted, asides=counted))
        if found == STATED:
            return STATED, _stating(answer, accepted, asides=counted)
    return found, set()


def _opposite_said(point: KeyPoint, answer: Answer, table: Synonyms) -> bool:
    """Whether the answer states one of the point's phrasings with a word swapped for its opposite."""
    opposites = (_opposite(phrase(a, table)) for a in point.accept)
    return any(o is not None and find(answer, o) == STATED for o in opposites)


def _half_stated(points: tuple[KeyPoint, ...], credit: tuple[float, ...], answer: Answer, table: Synonyms,
                 unsaid: set[int], denied: set[str], asked: frozenset[str]) -> dict[str, tuple[str, ...]]:
    """The points with credit NEAR_POINT or more (not 1), not denied, half of one of whose phrasings of two content
    words or more is said by words outside asides and not `unsaid` (stating another point, or what a clause denies
    something of), one of them at least the point's own (_own_words); each with those own words as written."""
    unsaid = unsaid | {n for n, w in enumerate(answer.words) if w.aside_of >= 0}
    halves: dict[str, tuple[str, ...]] = {}
    for p, c in zip(points, credit, strict=True):
        if not NEAR_POINT <= c < 1 or p.id in denied:
            continue
        own = _own_words(p, points, table, asked)
        for accepted in (phrase(a, table) for a in p.accept):
            content = [w for w in accepted.words if is_content(w[0])]
            said = [next((n for n in answer.positions(*w) if n not in unsaid and answer.words[n].negated_by < 0), -1)
                    for w in content]
            if len(content) < 2 or NEAR_CREDIT * (sum(n >= 0 for n in said) / len(content)) ** 2 < NEAR_POINT:
                continue
            mine = [answer.words[n].text for n, w in zip(said, content, strict=True) if n >= 0 and w[1] in own]
            if mine:
                halves[p.id] = tuple(dict.fromkeys(mine))
                break
    return halves


@lru_cache(maxsize=4_096)
def _own_words(point: KeyPoint, points: tuple[KeyPoint, ...], table: Synonyms, asked: frozenset[str]) -> frozenset[str]:
    """The lemmas of the point's content words that are its alone: in no other point and not in the prompt."""
    def lemmas(p: KeyPoint) -> set[str]:
        return {lemma(w) for text in (p.point, *p.accept) for w in content_words(text, table)}
    others = set().union(*(lemmas(p) for p in points if p.id != point.id))
    return frozenset(lemmas(point) - others - asked)


def score(needed: int, credit: Iterable[float]) -> float:
    """0 to 1: NEEDED_WEIGHT of the mean credit of the best `needed` points, the rest the mean of all of them."""
    ranked = sorted(credit, reverse=True)
    if not ranked:
        return 0.0
    best = sum(ranked[: max(needed, 1)]) / max(min(needed, len(ranked)), 1)
    return NEEDED_WEIGHT * best + (1 - NEEDED_WEIGHT) * sum(ranked) / len(ranked)


def grade(rubric: Rubric, text: str, *, synonyms: Synonyms | None = None, prompt: str = "") -> Grade:
    """Correct when at least `rubric.needed` key points are stated (voided ones do not count); a `half_point`
    rubric that needs two or more is also met by one fewer and half of a further point, said by a word of that
    point alone (not in another point, nor in the `prompt`): `partly` names it, with the words that said it."""
    table = synonyms or NO_SYNONYMS
    answer = read(text, table)
    asked = frozenset(lemma(w) for w in content_words(prompt, table))
    found, halves = _cover(rubric.points, answer, table, asked)
    short = rubric.needed - len(found.matched)
    half = short == 1 and bool(halves) and rubric.half_point and rubric.needed >= 2 and not answer.bare_list \
        and not found.voided
    partly = next(((k, v) for k, v in halves.items()), None) if half else None
    return Grade(found.matched, found.missed, found.voided, short <= 0 or half, credit=found.credit,
                 score=score(rubric.needed, found.credit), partly=partly)
