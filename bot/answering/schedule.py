"""When a review card is due: FSRS's date at the cohort's desired retention and, before an exam, never
after the exam day begins and early enough that the predicted recall on the exam day is at least that
retention once every card due before it is answered right. Recall is always fsrs's retrievability
(reckoned, as fsrs does, by whole days since the card's last review)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta

from fsrs import Card, Scheduler

DAY = timedelta(days=1)
LAST_CALL = timedelta(hours=12)  # a card that would fall short on the exam day is due this long before it at the latest


def due(scheduler: Scheduler, card: Card, exam: datetime | None) -> datetime:
    """When `card` is next due, given the exam day's first moment (None: no exam). A card last reviewed
    before the exam is due by the exam day (a final look that day), and sooner when its recall would be
    below the desired retention by then: when it falls to it (a day after the review at the soonest),
    and 12 hours before the exam day at the latest, when a review leaves its recall on the day at 100%.
    Every date is after the card's last review: answering each when due ends before the exam."""
    last = card.last_review
    if exam is None or last is None or last >= exam:
        return card.due
    target = scheduler.desired_retention
    if scheduler.get_card_retrievability(card, exam) >= target:
        return min(card.due, exam)
    return min(card.due, _recall_falls(scheduler, card, exam), exam - LAST_CALL)


def _recall_falls(scheduler: Scheduler, card: Card, exam: datetime) -> datetime:
    """The last whole day after the card's review (one at least) on which its recall is still at the
    desired retention; recall on the exam day is below it."""
    assert card.last_review is not None
    low, high = 1, (exam - card.last_review).days  # recall `high` days on is the exam day's: below the target
    while high - low > 1:
        middle = (low + high) // 2
        recalled = scheduler.get_card_retrievability(card, card.last_review + middle * DAY)
        low, high = (middle, high) if recalled >= scheduler.desired_retention else (low, middle)
    return card.last_review + low * DAY


@dataclass(frozen=True)
class ExamOutlook:
    """A learner's cards of a lesson seen from the exam: how many are due before the exam day, and their mean
    predicted recall on the day as things stand (answering each card right when due brings every card's to
    the desired retention at least: tests/core/test_exam_review.py)."""

    cards: int
    due_before: int
    recall: float


def outlook(scheduler: Scheduler, states: Iterable[str], exam: datetime) -> ExamOutlook | None:
    """The exam outlook of these cards (their stored FSRS states); None for no cards. A card is due before
    the exam when FSRS says so or its recall on the day is below the target (`due` pulls it in)."""
    cards = [Card.from_json(state) for state in states]
    if not cards:
        return None
    recall = [scheduler.get_card_retrievability(card, exam) for card in cards]
    return ExamOutlook(len(cards), sum(1 for card, chance in zip(cards, recall, strict=True)
                                       if card.due < exam or chance < scheduler.desired_retention),
                       sum(recall) / len(cards))
