"""Spaced repetition with FSRS, on a fixed clock and a real SQLite file."""

import json
from dataclasses import replace
from datetime import datetime

import pytest
from fsrs import Card, Scheduler
from support import answer as answer_event
from support import channel, dont_know, learner, with_cohort

from bot.core.messages import Audience, ChoiceMade, Command, MessageRef
from bot.runtime.app import StudyBot
from bot.runtime.scheduler import fire_due

pytestmark = pytest.mark.both_engines


def questions(bot):
    return next(iter(bot.library.lessons.values())).questions


async def review(bot, who):
    [reply] = await bot.handle(Command("review", "", who, channel()))
    return reply


async def answer(bot, who, reply, right: bool):
    q = next(q for q in questions(bot) if q.prompt in reply.text)
    [feedback] = await bot.handle(answer_event(q, reply, who, channel(), right))
    return q, feedback


async def due_of(bot, who, question_id):
    [card] = [c for c in await bot.store.cards.of(who) if c.question_id == question_id]
    return card.due, json.loads(card.state)


async def test_wrong_comes_back_sooner_than_right(bot, clock) -> None:
    who = learner()
    q1, _ = await answer(bot, who, await review(bot, who), right=True)
    q2, _ = await answer(bot, who, await review(bot, who), right=False)
    assert (await due_of(bot, who, q2.id))[0] < (await due_of(bot, who, q1.id))[0]


async def test_fast_right_answer_is_easy_and_slow_one_good(bot, clock) -> None:
    fast, slow = learner("U1"), learner("U2")
    q, _ = await answer(bot, fast, await review(bot, fast), right=True)
    reply = await review(bot, slow)
    clock.advance(30)
    await answer(bot, slow, reply, right=True)
    assert (await due_of(bot, fast, q.id))[0] > (await due_of(bot, slow, q.id))[0]


async def test_due_cards_come_before_new_ones(bot, clock) -> None:
    who = learner()
    first, _ = await answer(bot, who, await review(bot, who), right=False)  # Again: due in minutes
    reply = await review(bot, who)
    assert "new card" in reply.text and first.prompt not in reply.text
    clock.advance(3600)
    reply = await review(bot, who)
    assert "due card" in reply.text and first.prompt in reply.text


async def test_i_dont_know_in_a_review_says_what_becomes_of_the_card(bot, clock) -> None:
    """"I don't know" on a card answered before scores nothing and is not called a first answer: the
    card is due again at once, and the review's next card is that one when no other card is due."""
    who = learner()
    first, _ = await answer(bot, who, await review(bot, who), right=False)  # its first answer, wrong
    clock.advance(3600)
    again = await review(bot, who)
    assert "due card" in again.text and first.prompt in again.text
    [feedback] = await bot.handle(ChoiceMade(dont_know(again).token, who, channel()))
    assert "first answer, with no points" not in feedback.text and "comes back soon in /review" not in feedback.text
    assert "This card is due again now: it comes back after any other cards due." in feedback.text
    assert "(Review: no points this time; only a question's first answer scores.)" in feedback.text
    assert "Practice:" not in feedback.text
    [following] = await bot.handle(ChoiceMade(feedback.choices[-1].token, who, channel()))
    assert "due card" in following.text and first.prompt in following.text


async def test_i_dont_know_on_a_new_card_in_a_review_is_its_first_answer(bot, clock) -> None:
    who = learner()
    fresh = await review(bot, who)
    assert "new card" in fresh.text
    [feedback] = await bot.handle(ChoiceMade(dont_know(fresh).token, who, channel()))
    assert feedback.text.startswith("🤷 Fair enough: that counts as your first answer, with no points. This card is "
                                    "due again now: it comes back after any other cards due.\n")
    assert "Practice:" not in feedback.text


async def test_card_state_survives_a_restart(bot, clock, settings) -> None:
    who = learner()
    q, _ = await answer(bot, who, await review(bot, who), right=False)
    before = await due_of(bot, who, q.id)
    await bot.close()
    reopened = await StudyBot.start(settings, clock)
    reopened.ctx.fsrs = Scheduler(enable_fuzzing=False)
    try:
        assert await due_of(reopened, who, q.id) == before
        clock.advance(3600)
        [reply] = await reopened.handle(Command("review", "", who, channel()))
        assert q.prompt in reply.text
    finally:
        await reopened.close()
        bot.ctx.store = await type(bot.store).open(settings.db_path, clock)


class Outbox:
    def __init__(self):
        self.sent = []

    async def send(self, reply):
        self.sent.append(reply)
        return MessageRef("slack", f"D{reply.to.user_id}", str(len(self.sent)))  # a DM, as platforms answer

    async def edit(self, ref, reply):
        raise AssertionError("reminders never edit")


async def test_reminders_once_a_day_only_for_those_who_opted_in(bot, clock) -> None:
    keen, quiet = learner("U1"), learner("U2")
    for who in (keen, quiet):
        await answer(bot, who, await review(bot, who), right=False)
    [on] = await bot.handle(Command("review", "remind on", keen, channel()))
    assert "on" in on.text
    outbox = Outbox()
    clock.set("2026-11-30T08:00:00+00:00")  # before 09:00: nobody yet
    await fire_due(bot, {"slack": outbox})
    assert outbox.sent == []
    for _ in range(30):  # a day and a bit, hour by hour
        clock.advance(3600)
        await fire_due(bot, {"slack": outbox})
    assert [r.to.user_id for r in outbox.sent] == ["U1", "U1"]  # today 09:00 and tomorrow 09:00
    assert all(r.audience is Audience.DM for r in outbox.sent)
    await bot.handle(Command("review", "remind off", keen, channel()))
    clock.advance(24 * 3600)
    await fire_due(bot, {"slack": outbox})
    assert len(outbox.sent) == 2


async def test_progress_shows_cards_due_and_recall(bot, clock) -> None:
    who = learner()
    await answer(bot, who, await review(bot, who), right=True)
    [reply] = await bot.handle(Command("progress", "", who, channel()))
    assert "Review: 0 of 1 card due today; predicted recall now 100%" in reply.text


async def plant(bot, who, question_id: str, due: str) -> None:
    """A card of `who` for a question, due at a moment."""
    moment = datetime.fromisoformat(due)
    await bot.store.cards.review(who, question_id, "core-basics",
                                 lambda state: (Card(card_id=len(question_id), due=moment).to_json(), moment))


async def test_review_header_counts_the_cards_due_by_the_end_of_the_learners_local_day(settings, clock) -> None:
    bot = await StudyBot.start(with_cohort(settings, timezone="America/New_York"), clock)  # 04:00 there
    try:
        who = learner()
        await plant(bot, who, "core-q1", "2026-11-30T08:00:00+00:00")  # overdue
        await plant(bot, who, "core-q2", "2026-12-01T02:00:00+00:00")  # 21:00 tonight in New York
        await plant(bot, who, "core-q3", "2026-12-01T06:00:00+00:00")  # 01:00 tomorrow in New York
        [reply] = await bot.handle(Command("review", "", who, channel()))
        assert reply.text.startswith("Review · due card · 2 due today · Core basics\n")
        assert questions(bot)[0].prompt in reply.text
        [fresh] = await bot.handle(Command("review", "", learner("U2"), channel()))
        assert fresh.text.startswith("Review · new card · none due today · Core basics\n")
    finally:
        await bot.close()


async def test_a_due_card_of_a_question_no_longer_in_the_lesson_is_passed_over(bot, clock) -> None:
    """A reload took a question out: its card waits unseen, and review goes on with the lesson as it is."""
    who = learner()
    first, _ = await answer(bot, who, await review(bot, who), right=False)  # due in minutes
    clock.advance(3600)
    lesson = next(iter(bot.library.lessons.values()))
    bot.ctx.library.lessons[lesson.id] = replace(lesson, questions=tuple(q for q in lesson.questions if q is not first))
    reply = await review(bot, who)
    assert "new card" in reply.text and "none due today" in reply.text and first.prompt not in reply.text
    assert first.id in {c.question_id for c in await bot.store.cards.of(who)}  # kept, should it come back
