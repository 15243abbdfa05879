"""Short-answer and teach-back grading: pure functions over text and a rubric, into one of three verdicts
(bot.grading.verdict). A key point is matched when the answer states one of its accepted phrasings
(bot.grading.finding says where a phrase stands); a misconception that the answer states voids it.

- Correct: `needed` key points are stated (voided ones do not count), none of them in doubt. It earns the point.
- Partly right (no point), too: enough points stated beside a misconception about another point ("it gathers the
  weights and saves memory; MFU is low because the GPUs sat idle"): a wrong claim is not a point left out.
- Partly right (no point): a `half_point` rubric one point short, with a further point half stated (half the content
  words of one of its phrasings, outside negation and asides: NEAR_POINT; for a rubric needing one point, where
  nothing else is stated, three quarters of them: LONE_POINT), as a grader names a point in part; never for a list of
  terms (bot.grading.lists), nor for a point the answer denies (one of its phrasings said under negation, "it does not
  need fast links", or with a word swapped for its opposite, "it needs less communication" for "more communication",
  or a word of that point alone said only under a negation), nor by a word a clause denies something of ("latency is
  not important"), nor for an answer that states a misconception. A word that states one point (or a misconception) is
  no part of another: "millions of GPU hours" states nothing of "on one GPU". Partly right too: enough points stated,
  but only with one the grader doubts for a reason it names (bot.grading.doubts: the point also denied, a
  misconception's words beside it, a typo that is a word of its own), or short only by a point voided by a
  misconception but also stated in a clause apart from it ("a do-while runs at least once. A while loop always runs at
  least once too": the answer says both; which does it mean?). The grade names the point missing or in doubt, and why
  (`reason`).
- Restated phrasings: a phrasing that confines ("only used inside the function") is also stated as its negated
  complement ("it can't be used outside the function": bot.grading.finding.restated).
- Not yet: anything else; a list of terms is told why (bot.grading.verdict.LIST_REASON).
- Score: besides the verdict, a grade has a score from 0 to 1 for ranking answers. A matched point
  earns 1, a voided one 0, and any other NEAR_CREDIT times the square of the share of its best
  phrasing's content words that the answer states outside negation and outside other points (all
  of them, said apart: 0.7). The score is NEEDED_WEIGHT times the mean credit of the best `needed`
  points plus the rest times the mean credit of all points.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from functools import lru_cache

from bot.grading import doubts
from bot.grading.finding import (  # noqa: F401  (find, states: the finding functions grading callers import here)
    ABSENT,
    NEGATED,
    STATED,
    find,
    opposite,
    placed,
    placements,
    restated,
    states,
    stating,
)
from bot.grading.languages import answers_in
from bot.grading.lists import lists_terms
from bot.grading.reading import NO_SYNONYMS, Answer, Phrase, Synonyms, content_words, phrase, read
from bot.grading.rubric import KeyPoint, Rubric
from bot.grading.rules import NEGATORS
from bot.grading.verdict import LIST_REASON, Doubt, Verdict, reason
from bot.grading.words import is_content, lemma

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
    """The verdict on an answer and what it rests on. `correct` is `verdict is Verdict.CORRECT`: it earns the point.
    A partly right answer names the key point `missing` (half said, or in doubt) and why (`doubt`); `partly` is a
    half-said point with the answer's own words for it. `reason` is one sentence for the learner (why it is partly
    right, or why a list is not yet right); `listed` says the answer is a list of terms, which is never self-graded
    into a point (`self_gradable`). `score` (0 to 1) is a graded reading of the coverage, for ranking answers."""

    correct: bool = False
    score: float = field(default=0.0, kw_only=True)
    partly: tuple[str, tuple[str, ...]] | None = field(default=None, kw_only=True)  # a point half said, and its words
    verdict: Verdict = field(default=Verdict.NOT_YET, kw_only=True)
    missing: str | None = field(default=None, kw_only=True)  # PARTLY: the id of the one key point to add or make sure
    doubt: Doubt | None = field(default=None, kw_only=True)  # PARTLY: why
    reason: str = field(default="", kw_only=True)
    listed: bool = field(default=False, kw_only=True)

    @property
    def self_gradable(self) -> bool:
        """Whether the learner may grade the answer right themselves (the honor system): not when it is right
        already, nor when it is a list of terms."""
        return not self.correct and not self.listed


NEAR_CREDIT = 0.7  # the credit of a point whose phrasing's words are all stated, but not as the phrase
NEAR_POINT = NEAR_CREDIT * 0.5**2  # the credit of a point half of whose phrasing's content words are stated
LONE_POINT = NEAR_CREDIT * 0.75**2  # and three quarters: a rubric needing one point is partly met by so much of it
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


def cover(points: Iterable[KeyPoint], text: str, *, synonyms: Synonyms | None = None) -> Coverage:
    """The key points the text states; a stated misconception voids its point."""
    table = synonyms or NO_SYNONYMS
    return _cover(points, read(text, table), table).coverage


def _said_in_aside(answer: Answer, wanted: Phrase) -> bool:
    """Whether a misconception about a thing ("training fits on one GPU") is said, without its name, in an aside
    about that thing ("serving is judged on latency, vs training, which fits on one GPU")."""
    for owner, thing in answer.contrasted.items():
        rest = tuple(w for w in wanted.words if w[1] not in thing)
        named = thing <= {lemma_ for _, lemma_ in wanted.words}
        if owner in answer.open_asides or not named or not any(is_content(t) for t, _ in rest):
            continue  # an aside no comma closes may run into the answer's own claims
        for span in placements(answer, Phrase(rest, sum(is_content(t) for t, _ in rest)), loose=False):
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


@dataclass(frozen=True)
class _Reading:
    """What _cover found: the coverage, the missed points half stated (with the answer's own words for them), and
    the answer's words that state the matched points and misconceptions (`taken`), per matched point the asides
    counted for it, and the voided points the answer also states apart from their misconception (`contested`)."""

    coverage: Coverage
    halves: dict[str, tuple[str, ...]]
    taken: frozenset[int]
    asides: dict[str, frozenset[int]]
    contested: dict[str, tuple[str, ...]] = field(default_factory=dict)
    wrongs: dict[str, tuple[str, ...]] = field(default_factory=dict)  # per voided point, its misconception's words


def _cover(points: Iterable[KeyPoint], answer: Answer, table: Synonyms, asked: frozenset[str] = frozenset(),
           least: float = NEAR_POINT
           ) -> _Reading:
    """The coverage, and the missed points half stated, each with the words of the answer that state it
    (_half_stated; `asked`: the lemmas of the prompt); the voided points also stated apart from their misconception
    (`contested`, with the misconception's words). A word that states a matched point or a misconception earns no
    partial credit for another."""
    points = tuple(points)
    matched, voided, denied, taken, asides = [], [], set(), set(), {}
    contested: dict[str, tuple[str, ...]] = {}
    wrongs: dict[str, tuple[str, ...]] = {}
    for point in points:
        wrong = _misconception_said(point, answer, table)
        if wrong is not None and _misconception_said(point, answer.exact(), table) is None \
                and _find_point(point, answer.exact(), table)[0] == STATED:
            wrong = None  # a typo of a misconception ("FILO") never outweighs an accepted phrasing said ("FIFO")
        if wrong is not None:
            voided.append(point.id)
            wrong_words = stating(answer, wrong, loose=False, asides=frozenset())
            taken |= wrong_words
            wrongs[point.id] = tuple(dict.fromkeys(answer.words[n].text for n in sorted(wrong_words)))
            if _said_apart(point, answer, table, wrong_words):
                contested[point.id] = wrongs[point.id]
            continue
        found, said = _find_point(point, answer, table)
        if found == STATED:
            matched.append(point.id)
            taken |= said
            asides[point.id] = _counted_asides(point, answer, table)
        elif found == NEGATED or (found == ABSENT and _opposite_said(point, answer, table)):
            denied.add(point.id)  # said under a negation, or its opposite said
    credit = tuple(1.0 if p.id in matched else 0.0 if p.id in voided
                   else max((_partial(answer, phrase(a, table), taken) for a in p.accept), default=0.0)
                   for p in points)
    missed = tuple(p.id for p in points if p.id not in matched)
    halves = _half_stated(points, credit, answer, table, taken | answer.denied, denied, asked, least)
    return _Reading(Coverage(tuple(matched), missed, tuple(voided), credit=credit), halves, frozenset(taken), asides,
                    contested, wrongs)


def _said_apart(point: KeyPoint, answer: Answer, table: Synonyms, wrong: set[int]) -> bool:
    """Whether the answer states the point in a clause apart from the words that state its misconception (`wrong`):
    "a do-while runs at least once. A while loop always runs at least once too" says both."""
    clauses = {answer.words[n].clause for n in wrong}
    counted = _counted_asides(point, answer, table)
    return any(not clauses & {answer.words[n].clause for n in span}
               for accepted in _phrasings(point, table) for span in placed(answer, accepted, counted))


def _misconception_said(point: KeyPoint, answer: Answer, table: Synonyms) -> Phrase | None:
    """The point's first misconception that the answer states (in order, outside asides, or in an aside about
    the thing it names)."""
    return next((wrong for wrong in (phrase(m, table) for m in point.misconceptions)
                 if find(answer, wrong, loose=False, asides=frozenset()) == STATED or _said_in_aside(answer, wrong)),
                None)


def _find_point(point: KeyPoint, answer: Answer, table: Synonyms) -> tuple[int, set[int]]:
    """STATED and the content words that state its first stated phrasing; else NEGATED or ABSENT, and none."""
    found, counted = ABSENT, _counted_asides(point, answer, table)
    for accepted in _phrasings(point, table):
        found = max(found, find(answer, accepted, asides=counted))
        if found == STATED:
            return STATED, stating(answer, accepted, asides=counted)
    return found, set()


@lru_cache(maxsize=4_096)
def _phrasings(point: KeyPoint, table: Synonyms) -> tuple[Phrase, ...]:
    """The point's accepted phrasings, each followed by its restatement when it has one (bot.grading.finding.restated:
    "only used inside the function" as "not used outside the function")."""
    said = (phrase(a, table) for a in point.accept)
    return tuple(p for accepted in said for p in (accepted, restated(accepted)) if p is not None)


def _opposite_said(point: KeyPoint, answer: Answer, table: Synonyms) -> bool:
    """Whether the answer states one of the point's phrasings with a word swapped for its opposite."""
    opposites = (opposite(phrase(a, table)) for a in point.accept)
    return any(o is not None and find(answer, o) == STATED for o in opposites)


def _half_stated(points: tuple[KeyPoint, ...], credit: tuple[float, ...], answer: Answer, table: Synonyms,
                 unsaid: set[int], denied: set[str], asked: frozenset[str], least: float = NEAR_POINT
                 ) -> dict[str, tuple[str, ...]]:
    """The points with credit `least` or more (not 1), not denied, half (`least`: NEAR_POINT; or LONE_POINT, three
    quarters) of one of whose phrasings of two content words or more is said by words outside asides and not `unsaid`
    (stating another point, or what a clause denies something of), one of them at least the point's own (_own_words);
    each with those own words as written."""
    unsaid = unsaid | {n for n, w in enumerate(answer.words) if w.aside_of >= 0}
    halves: dict[str, tuple[str, ...]] = {}
    for p, c in zip(points, credit, strict=True):
        own = _own_words(p, points, table, asked)
        if not least <= c < 1 or p.id in denied or _only_denied(answer, own & _asserted_words(p, table)):
            continue
        for accepted in (phrase(a, table) for a in p.accept):
            content = [w for w in accepted.words if is_content(w[0])]
            said = [next((n for n in answer.positions(*w) if n not in unsaid and answer.words[n].negated_by < 0), -1)
                    for w in content]
            if len(content) < 2 or NEAR_CREDIT * (sum(n >= 0 for n in said) / len(content)) ** 2 < least:
                continue
            mine = [answer.words[n].text for n, w in zip(said, content, strict=True) if n >= 0 and w[1] in own]
            if mine:
                halves[p.id] = tuple(dict.fromkeys(mine))
                break
    return halves


@lru_cache(maxsize=4_096)
def _asserted_words(point: KeyPoint, table: Synonyms) -> frozenset[str]:
    """The lemmas of the content words the point's phrasings assert: in a phrasing without a negator, and in none
    with one ("no added latency" says "latency" under a negation as the point itself does)."""
    said = [phrase(a, table) for a in point.accept]
    negating = {w[1] for p in said if any(t in NEGATORS for t, _ in p.words) for w in p.words}
    return frozenset(w[1] for p in said if not any(t in NEGATORS for t, _ in p.words) for w in p.words
                     if is_content(w[0])) - negating


def _only_denied(answer: Answer, own: frozenset[str]) -> bool:
    """Whether a word of the point's own is said, and only under a negation or as what a clause denies something of
    ("it never gathers anything": the answer denies the point whose own word is "gather")."""
    places = [n for n, w in enumerate(answer.words) if w.lemma in own]
    return any(all(answer.words[n].negated_by >= 0 or n in answer.denied for n in places if answer.words[n].lemma == w)
               for w in {answer.words[n].lemma for n in places})


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
    """The verdict on the text: correct when at least `rubric.needed` key points are stated and none of those needed is
    in doubt; partly right when one short with half of a further point said by a word of that point alone (not in
    another point, nor in the `prompt`; a `half_point` rubric; needing one point, three quarters), when enough are
    stated only with one in doubt, or when short only by points also stated apart from their misconception; not yet
    otherwise (see the module). Read in the rubric's language (its pack's)."""
    with answers_in(rubric.language):
        return _grade(rubric, text, synonyms or NO_SYNONYMS, prompt)


def _grade(rubric: Rubric, text: str, table: Synonyms, prompt: str) -> Grade:
    answer = read(text, table)
    asked = frozenset(lemma(w) for w in content_words(prompt, table))
    reading = _cover(rubric.points, answer, table, asked, NEAR_POINT if rubric.needed >= 2 else LONE_POINT)
    found = reading.coverage
    listed = lists_terms(text, answer)
    base = Grade(found.matched, found.missed, found.voided, credit=found.credit,
                 score=score(rubric.needed, found.credit), listed=listed)
    texts = {p.id: p.point for p in rubric.points}
    short = rubric.needed - len(found.matched)
    if short <= 0 and reading.wrongs:  # enough points, beside a wrong claim about another: never the point
        point, said = next(iter(reading.wrongs.items()))
        return replace(base, verdict=Verdict.PARTLY, missing=point, doubt=Doubt.MISCONCEPTION,
                       reason=reason(Doubt.MISCONCEPTION, texts[point], said))
    if short <= 0:
        doubted = _doubted(rubric, answer, table, reading)
        if doubted is None:
            return replace(base, correct=True, verdict=Verdict.CORRECT)
        point, doubt, said = doubted
        return replace(base, verdict=Verdict.PARTLY, missing=point, doubt=doubt,
                       reason=reason(doubt, texts[point], said))
    if 0 < short <= len(reading.contested):
        point, said = next(iter(reading.contested.items()))
        return replace(base, verdict=Verdict.PARTLY, missing=point, doubt=Doubt.MISCONCEPTION,
                       reason=reason(Doubt.MISCONCEPTION, texts[point], said))
    half = short == 1 and bool(reading.halves) and rubric.half_point and not listed and not found.voided
    if half:
        point, said = next(iter(reading.halves.items()))
        return replace(base, partly=(point, said), verdict=Verdict.PARTLY, missing=point, doubt=Doubt.HALF,
                       reason=reason(Doubt.HALF, texts[point], said))
    return replace(base, reason=LIST_REASON if listed else "")


def _doubted(rubric: Rubric, answer: Answer, table: Synonyms, reading: _Reading
             ) -> tuple[str, Doubt, tuple[str, ...]] | None:
    """The first matched point in doubt (bot.grading.doubts) when, without the points in doubt, fewer than `needed`
    are left: its id, why, and the answer's words it turns on."""
    found: list[tuple[str, Doubt, tuple[str, ...]]] = []
    for point in rubric.points:
        if point.id not in reading.coverage.matched:
            continue
        doubt = _doubt(point, answer, table, reading)
        if doubt is not None:
            found.append((point.id, *doubt))
    if not found or len(reading.coverage.matched) - len(found) >= rubric.needed:
        return None
    return found[0]


def _doubt(point: KeyPoint, answer: Answer, table: Synonyms, reading: _Reading
           ) -> tuple[Doubt, tuple[str, ...]] | None:
    """Why the matched point is in doubt, with the answer's words it turns on; None when it is not."""
    if doubts.denied(point, answer, table):
        return Doubt.DENIED, ()
    words = doubts.misconception_words(point, answer, table, reading.taken)
    if words:
        return Doubt.MISCONCEPTION, words
    words = doubts.trusted_only_by_typo(point, answer, table, reading.asides[point.id])
    return (Doubt.TYPO, words) if words else None
