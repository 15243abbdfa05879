"""Review settings per cohort: the desired retention, the daily limit of new cards and the exam day.
The scheduling property on fsrs's own scheduler and retrievability, then the same through the core."""

import random
from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo

import pytest
from fsrs import Card, Rating, Scheduler
from hypothesis import given, settings
from hypothesis import strategies as st
from support import answer, channel, learner, with_cohort

from bot.answering import schedule
from bot.core.errors import ConfigError
from bot.core.messages import Command, Reply
from bot.runtime.app import StudyBot

START = datetime(2026, 9, 1, 8, tzinfo=UTC)
ZONES = ("UTC", "Europe/Berlin", "America/New_York", "Asia/Kathmandu", "Pacific/Auckland")
RIGHT = (Rating.Hard, Rating.Good, Rating.Easy)  # every rating of an answer that was right
HISTORY = st.lists(st.tuples(st.floats(0, 40 * 24), st.sampled_from(list(Rating))), min_size=1, max_size=8)


def exam_start(day: date, zone: str) -> datetime:
    return datetime.combine(day, time(0), ZoneInfo(zone)).astimezone(UTC)


def reviewed(history: list[tuple[float, Rating]], scheduler: Scheduler) -> Card:
    """A card after its history: (hours since the review before, rating), from START."""
    card, at = Card(card_id=1, due=START), START
    for hours, rating in history:
        at += timedelta(hours=hours)
        card, _ = scheduler.review_card(card, rating, review_datetime=at)
    return card


@settings(max_examples=300, deadline=None)
@given(retention=st.floats(0.70, 0.97), earlier=st.floats(0.70, 0.97), histories=st.lists(HISTORY, min_size=1,
       max_size=4), rest=st.floats(0, 90 * 24), days=st.integers(1, 180), zone=st.sampled_from(ZONES),
       ratings=st.lists(st.sampled_from(RIGHT), max_size=40).map(lambda drawn: [*drawn, Rating.Good]))
def test_answering_each_card_right_when_due_reaches_the_target_on_the_exam_day_and_none_is_due_after_it(
        retention, earlier, histories, rest, days, zone, ratings) -> None:
    """Cards with random histories (scheduled at another retention, before the exam was set), an exam from a
    day to six months ahead in a cohort's time zone: each card is due by the exam day, every review before it
    schedules the card after the review and by the exam day, and once every card due before the exam is
    answered right (Hard, Good or Easy, in a cycle with a Good in it: Hard alone keeps a card in its learning
    steps for good), each card's predicted recall on the exam day is at least the target."""
    cards = [reviewed(history, Scheduler(desired_retention=earlier, enable_fuzzing=False)) for history in histories]
    now = max(card.last_review for card in cards) + timedelta(hours=rest)
    exam = exam_start(now.astimezone(ZoneInfo(zone)).date() + timedelta(days=days), zone)
    fsrs = Scheduler(desired_retention=retention)  # fuzzing on: hypothesis seeds its random numbers
    assert all(schedule.due(fsrs, card, exam) <= exam for card in cards)
    answers = 0
    while (when := max(min(schedule.due(fsrs, card, exam) for card in cards), now)) < exam:
        soonest = min(range(len(cards)), key=lambda i: schedule.due(fsrs, cards[i], exam))
        cards[soonest], _ = fsrs.review_card(cards[soonest], ratings[answers % len(ratings)], review_datetime=when)
        answers, now = answers + 1, when
        assert when < schedule.due(fsrs, cards[soonest], exam) <= exam
        assert answers < 1000 * len(cards)  # it ends
    assert min(fsrs.get_card_retrievability(card, exam) for card in cards) >= retention


def test_a_card_well_known_by_the_exam_waits_for_the_exam_day_and_a_weak_one_is_pulled_in() -> None:
    fsrs = Scheduler(desired_retention=0.9, enable_fuzzing=False)
    strong = Card(card_id=1, due=START)
    for days in (0, 1, 4, 15, 60):  # five right answers: months of stability
        strong, _ = fsrs.review_card(strong, Rating.Good, review_datetime=START + timedelta(days=days))
    exam = strong.last_review + timedelta(days=20)
    assert strong.due > exam and schedule.due(fsrs, strong, exam) == exam  # never after the exam
    weak, _ = fsrs.review_card(Card(card_id=2, due=START), Rating.Easy, review_datetime=START)
    exam = START + timedelta(days=3)  # Easy: due in about 8 days, recall on the exam day under 97%
    strict = Scheduler(desired_retention=0.97, enable_fuzzing=False)
    assert strict.get_card_retrievability(weak, exam) < 0.97 and weak.due > exam
    assert START < schedule.due(strict, weak, exam) < exam
    assert schedule.due(fsrs, weak, None) == weak.due  # no exam: FSRS's date
    after, _ = fsrs.review_card(weak, Rating.Good, review_datetime=exam + timedelta(hours=1))
    assert schedule.due(fsrs, after, exam) == after.due > exam  # the exam is past: FSRS's date again


async def test_the_cohorts_desired_retention_sets_the_interval(settings, clock) -> None:
    """The same right answer is due sooner at 0.95 than at 0.80: the cohort's Scheduler, not the default's 0.9."""
    bot = await StudyBot.start(settings.with_config({"cohorts": {
        "T1": {"platform": "slack", "review": {"desired_retention": 0.8}},
        "T2": {"platform": "slack", "review": {"desired_retention": 0.95}}}}), clock)
    bot.ctx.fsrs = Scheduler(enable_fuzzing=False)
    try:
        dues = []
        for cohort in ("T1", "T2"):
            who = learner(cohort=cohort)
            [asked] = await bot.handle(Command("review", "", who, channel(cohort)))  # a multiple-choice card
            question = next(q for q in bot.library.questions.values() if q.prompt in asked.text)
            await bot.handle(answer(question, asked, who, channel(cohort), right=True))  # at once: Easy, days ahead
            [card] = await bot.store.cards.of(who)
            dues.append(card.due)
        assert bot.ctx.scheduler(learner(cohort="T2").in_cohort).desired_retention == 0.95
        assert dues[1] < dues[0]
    finally:
        await bot.close()


async def reviews_due(bot, who) -> list[Reply]:
    """/review, answering right each card it shows, until nothing is due."""
    shown = []
    while True:
        [asked] = await bot.handle(Command("review", "", who, channel()))
        if asked.text.startswith("Nothing"):
            return shown
        question = next(q for q in bot.library.questions.values() if q.prompt in asked.text)
        await bot.handle(answer(question, asked, who, channel(), right=True))
        shown.append(asked)


@pytest.mark.parametrize("seed", [1, 2, 3])
async def test_through_the_core_cards_reviewed_before_the_exam_was_set_reach_the_target_on_the_day(
        settings, clock, seed) -> None:
    """A learner answers right and wrong at random for two weeks; then the cohort sets an exam three weeks
    ahead at 0.95: every few hours they answer right each card /review shows until the exam, and on the exam
    day each card's predicted recall is at least 0.95, none due after it; /progress said so on the way."""
    rng = random.Random(seed)
    bot = await StudyBot.start(with_cohort(settings, timezone="America/New_York"), clock)
    bot.ctx.fsrs = Scheduler(enable_fuzzing=False)
    who = learner()
    try:
        for _ in range(30):  # the history: new and due cards, right or wrong
            [asked] = await bot.handle(Command("review", "", who, channel()))
            if not asked.text.startswith("Nothing"):
                question = next(q for q in bot.library.questions.values() if q.prompt in asked.text)
                await bot.handle(answer(question, asked, who, channel(), right=rng.random() < 0.7))
            clock.advance(rng.uniform(0.5, 30) * 3600)
        day = (clock.now() + timedelta(days=21)).astimezone(ZoneInfo("America/New_York")).date()
        bot.ctx.settings = with_cohort(settings, timezone="America/New_York",
                                       review={"desired_retention": 0.95, "exam": day.isoformat()})
        exam, set_at = exam_start(day, "America/New_York"), clock.now()
        [first] = await bot.handle(Command("progress", "", who, channel()))
        line = next(x for x in first.text.splitlines() if x.startswith(f"  exam {exam:%a} {day:%d %b %Y}:"))
        fsrs = bot.ctx.scheduler(who.in_cohort)
        cards = [Card.from_json(c.state) for c in await bot.store.cards.of(who)]
        due_before = sum(schedule.due(fsrs, card, exam) < exam for card in cards)
        recall = sum(fsrs.get_card_retrievability(card, exam) for card in cards) / len(cards)
        assert line == (f"  exam {exam:%a} {day:%d %b %Y}: {due_before} of your {len(cards)} cards due before it; "
                        f"predicted recall on the day {recall:.0%} as things stand, 95% or more once each is "
                        "answered right when due (/review core-basics)")
        while clock.now() < exam:
            await reviews_due(bot, who)
            clock.advance(rng.uniform(1, 6) * 3600)
        cards = [Card.from_json(c.state) for c in await bot.store.cards.of(who)]
        assert len(cards) >= 4
        assert all(schedule.due(fsrs, card, exam) <= exam for card in cards)
        assert all(c.due <= exam for c in await bot.store.cards.of(who)
                   if Card.from_json(c.state).last_review >= set_at)  # as stored, once reviewed with the exam set
        assert min(fsrs.get_card_retrievability(card, exam) for card in cards) >= 0.95
    finally:
        await bot.close()


def shown_id(bot, reply: Reply) -> str:
    return next(q.id for q in bot.library.questions.values() if q.prompt in reply.text)


@pytest.mark.both_engines
@pytest.mark.parametrize(("seed", "per_day", "zone"), [(7, 2, "America/New_York"), (8, 1, "Asia/Kathmandu"),
                                                       (9, 3, "UTC")])
async def test_new_cards_per_day_is_never_exceeded_in_the_cohorts_day(settings, clock, seed, per_day, zone) -> None:
    """A learner who reviews, answers right or wrong or not at all, and comes back hours later, at random: the
    new cards they are shown per day of the cohort's time zone never exceed the limit, a new card shown and left
    unanswered is shown again without counting twice, once the day's are used up /review says so, and the next
    local day brings more."""
    bot = await StudyBot.start(with_cohort(settings, timezone=zone, review={"new_cards_per_day": per_day}), clock)
    bot.ctx.fsrs = Scheduler(enable_fuzzing=False)
    rng, who, new_per_day, used_up = random.Random(seed), learner(), {}, 0
    try:
        [first] = await bot.handle(Command("review", "", who, channel()))
        [again] = await bot.handle(Command("review", "", who, channel()))  # unanswered: the same card, not a second
        assert first.text.startswith("Review · new card") and shown_id(bot, first) == shown_id(bot, again)
        for _ in range(60):
            [asked] = await bot.handle(Command("review", "", who, channel()))
            today = clock.now().astimezone(ZoneInfo(zone)).date()
            if asked.text.startswith("Review · new card"):
                new_per_day.setdefault(today, set()).add(shown_id(bot, asked))
            if not asked.text.startswith("Nothing") and rng.random() < 0.8:
                question = bot.library.questions[shown_id(bot, asked)]
                await bot.handle(answer(question, asked, who, channel(), right=rng.random() < 0.7))
            elif asked.text.startswith("Nothing"):
                used_up += f"today's new cards are used up ({per_day} a day in this cohort): more tomorrow." \
                    in asked.text
                clock.advance(rng.uniform(1, 10) * 3600)
        assert max(len(shown) for shown in new_per_day.values()) == per_day
        assert len(new_per_day) >= 4 // per_day and used_up
        rows = await bot.store.engine.read("SELECT day, COUNT(*) AS n FROM review_new_cards GROUP BY day")
        assert {r["day"]: r["n"] for r in rows} == {d.isoformat(): len(s) for d, s in new_per_day.items()}
    finally:
        await bot.close()


async def test_no_new_cards_a_day_shows_due_cards_only(settings, clock) -> None:
    bot = await StudyBot.start(with_cohort(settings, review={"new_cards_per_day": 0}), clock)
    try:
        [reply] = await bot.handle(Command("review", "", learner(), channel()))
        assert reply.text == ("Nothing is due in Core basics right now, and /review shows no new cards in this "
                              "cohort (new_cards_per_day: 0): /quiz core-basics asks the lesson's questions.")
    finally:
        await bot.close()


@pytest.mark.parametrize(("review", "message"), [
    ({"desired_retention": 0.5}, "review.desired_retention: must be a share of cards recalled from 0.70 to 0.97, "
                                 "like 0.9, not 0.5"),
    ({"desired_retention": "high"}, "review.desired_retention: must be a share of cards recalled from 0.70 to 0.97"),
    ({"new_cards_per_day": -1}, "review.new_cards_per_day: must be a whole number of cards, 0 or more, like 10, "
                                "not -1"),
    ({"new_cards_per_day": 2.5}, "review.new_cards_per_day: must be a whole number of cards, 0 or more"),
    ({"exam": "15/01/2027"}, "review.exam: '15/01/2027' is not a date; write it as year-month-day, like exam: "
                             '"2027-01-15", or per lesson'),
    ({"exam": {"core-basics": "soon"}}, "review.exam.core-basics: 'soon' is not a date"),
    ({"retention": 0.9}, "review.retention"),
    ("0.9", "review: needs its settings, like {desired_retention: 0.9"),
])
def test_each_review_setting_is_checked_with_a_one_line_message(settings, review, message) -> None:
    with pytest.raises(ConfigError) as caught:
        with_cohort(settings, review=review)
    assert f"cohorts.T1.{message}" in str(caught.value) and "\n" not in str(caught.value)


def test_review_settings_as_an_operator_writes_them(settings) -> None:
    chosen = with_cohort(settings, review={"desired_retention": 0.85, "new_cards_per_day": 10,
                                           "exam": date(2027, 1, 15)}).cohorts
    [review] = [c.review for c in chosen.values()]
    assert (review.desired_retention, review.new_cards_per_day) == (0.85, 10)
    assert review.exam_of("any-lesson") == date(2027, 1, 15)
    per_lesson = with_cohort(settings, review={"exam": {"core-basics": "2027-01-15"}})
    [review] = [c.review for c in per_lesson.cohorts.values()]
    assert review.exam_of("core-basics") == date(2027, 1, 15) and review.exam_of("other") is None


async def test_an_exam_for_a_lesson_the_packs_do_not_have_stops_start_up(settings, clock) -> None:
    with pytest.raises(ConfigError) as caught:
        await StudyBot.start(with_cohort(settings, review={"exam": {"core-basic": "2027-01-15"}}), clock)
    assert "cohorts.T1.review.exam.core-basic: there is no lesson 'core-basic'; write one of core-basics" \
        in str(caught.value)
