"""Spaced repetition with FSRS, on a fixed clock and a real SQLite file."""

import json
from dataclasses import replace
from datetime import datetime

import pytest
from fsrs import Card, Scheduler
from support import answer as answer_event
from support import channel, dont_know, learner, with_cohort

from bot.answering.pipeline import NO_POINTS_NOTE
from bot.core.messages import Audience, ChoiceMade, Command, MessageRef, TextSubmitted
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


def said_dont_know(reply, who) -> ChoiceMade | TextSubmitted:
    """ "I don't know" to a question as asked: its button, or typed in its form."""
    if reply.form is not None:
        return TextSubmitted(reply.form.token, "I don't know", who, channel())
    return ChoiceMade(dont_know(reply).token, who, channel())


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
    card is due again at once, and, as it says, the review's next card is that one when no other card is due."""
    who = learner()
    first, _ = await answer(bot, who, await review(bot, who), right=False)  # its first answer, wrong
    clock.advance(3600)
    again = await review(bot, who)
    assert "due card" in again.text and first.prompt in again.text
    [feedback] = await bot.handle(ChoiceMade(dont_know(again).token, who, channel()))
    assert "first answer, with no points" not in feedback.text and "comes back soon in /review" not in feedback.text
    assert "This card is due again now, and no other card is, so /review asks it next." in feedback.text
    assert feedback.text.count(NO_POINTS_NOTE) == 1
    [following] = await bot.handle(ChoiceMade(feedback.choices[-1].token, who, channel()))
    assert "due card" in following.text and first.prompt in following.text


async def test_i_dont_know_on_a_new_card_in_a_review_is_its_first_answer(bot, clock) -> None:
    who = learner()
    fresh = await review(bot, who)
    assert "new card" in fresh.text
    [feedback] = await bot.handle(ChoiceMade(dont_know(fresh).token, who, channel()))
    assert feedback.text.startswith("🤷 Fair enough: that counts as your first answer, with no points. This card is "
                                    "due again now, and no other card is, so /review asks it next.\n")
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
    assert "Review: 1 card, 0 due now; predicted recall now 100%" in reply.text


async def test_progress_says_a_card_due_later_today_is_not_due_now(bot, clock) -> None:
    """A card missed just now comes back within minutes: due later today, not now; once it is due, no recall
    figure stands beside it (fsrs reckons recall by the day: it would read 100%)."""
    who = learner()
    await answer(bot, who, await review(bot, who), right=False)
    [reply] = await bot.handle(Command("progress", "", who, channel()))
    assert "Review: 1 card, 0 due now, 1 due later today; predicted recall now 100%" in reply.text
    clock.advance(3600)
    [later] = await bot.handle(Command("progress", "", who, channel()))
    line = next(x for x in later.text.splitlines() if x.startswith("Review: "))
    assert line == "Review: 1 card, 1 due now (/review)"


async def plant(bot, who, question_id: str, due: str) -> None:
    """A card of `who` for a question, due at a moment."""
    moment = datetime.fromisoformat(due)
    await bot.store.cards.review(who, question_id, "core-basics",
                                 lambda state: (Card(card_id=len(question_id), due=moment).to_json(), moment))


async def test_review_header_counts_the_cards_due_now_and_later_in_the_learners_local_day(settings, clock) -> None:
    bot = await StudyBot.start(with_cohort(settings, timezone="America/New_York"), clock)  # 04:00 there
    try:
        who = learner()
        await plant(bot, who, "core-q1", "2026-11-30T08:00:00+00:00")  # overdue
        await plant(bot, who, "core-q2", "2026-12-01T02:00:00+00:00")  # 21:00 tonight in New York
        await plant(bot, who, "core-q3", "2026-12-01T06:00:00+00:00")  # 01:00 tomorrow in New York
        [reply] = await bot.handle(Command("review", "", who, channel()))
        assert reply.text.startswith("Review · due card · 1 due now · 1 due later today · Core basics\n")
        assert questions(bot)[0].prompt in reply.text
        [fresh] = await bot.handle(Command("review", "", learner("U2"), channel()))
        assert fresh.text.startswith("Review · new card · none due now · Core basics\n")
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
    assert "new card" in reply.text and "none due now" in reply.text and first.prompt not in reply.text
    assert first.id in {c.question_id for c in await bot.store.cards.of(who)}  # kept, should it come back


async def test_a_new_card_is_served_with_none_due_now_and_the_cards_due_later_today_counted_apart(bot, clock) -> None:
    """Answered cards come due again in minutes: until then /review serves new cards, and its header
    says none is due now (not "2 due today" over a new card). "I don't know" on that new card makes
    it the one card due now: the note says /review asks it next, and it does."""
    who = learner()
    for _ in range(2):
        asked = await review(bot, who)
        clock.advance(30)  # not within 10 s: Good, not Easy
        await answer(bot, who, asked, right=True)  # Good: due again in ten minutes
    fresh = await review(bot, who)
    assert fresh.text.startswith("Review · new card · none due now · 2 due later today · Core basics\n")
    [feedback] = await bot.handle(said_dont_know(fresh, who))
    assert "This card is due again now, and no other card is, so /review asks it next." in feedback.text
    [following] = await bot.handle(ChoiceMade(feedback.choices[-1].token, who, channel()))
    assert following.text.startswith("Review · due card · 1 due now · 2 due later today · Core basics\n")
    assert questions(bot)[2].prompt in following.text
    clock.advance(3600)
    assert (await review(bot, who)).text.startswith("Review · due card · 3 due now · Core basics\n")


async def test_i_dont_know_in_a_review_says_how_many_cards_are_asked_before_it(bot, clock) -> None:
    """The card comes back after the cards of its lesson due before it (the longest due first), as
    the note says, and before any new card."""
    who = learner()
    first, _ = await answer(bot, who, await review(bot, who), right=False)  # Again: due in a minute
    clock.advance(30)
    second = await review(bot, who)  # the first is not due yet: a new card
    [_] = await bot.handle(TextSubmitted(second.form.token, "It copies the whole model to every GPU.", who, channel()))
    clock.advance(3600)
    card = await review(bot, who)
    assert card.text.startswith("Review · due card · 2 due now · Core basics\n") and first.prompt in card.text
    [feedback] = await bot.handle(said_dont_know(card, who))
    assert "This card is due again now: /review asks it after the 1 other card due now." in feedback.text
    [following] = await bot.handle(ChoiceMade(feedback.choices[-1].token, who, channel()))
    assert following.text.startswith("Review · due card · 2 due now · Core basics\n")
    assert questions(bot)[1].prompt in second.text and questions(bot)[1].prompt in following.text
    _, answered = await answer(bot, who, following, right=True)
    [then] = await bot.handle(ChoiceMade(answered.choices[-1].token, who, channel()))
    assert then.text.startswith("Review · due card · 1 due now · 1 due later today · Core basics\n")
    assert first.prompt in then.text


def letters(reply) -> dict[str, str]:
    """What a multiple-choice reply shows under each letter: {"A": "The math inside each layer", ...}."""
    return dict(c.label.split(". ", 1) for c in reply.choices if c.label[1:3] == ". ")


def pressed(reply, letter: str) -> ChoiceMade:
    """The learner presses the button shown with `letter`."""
    return ChoiceMade(next(c.token for c in reply.choices if c.label.startswith(f"{letter}. ")), learner(), channel())


def step_numbers(reply) -> dict[str, str]:
    """The number an order question's form shows before each step: {"Clean the data": "3", ...}."""
    return {line.split(". ", 1)[1]: line.split(". ", 1)[0] for line in reply.form.prompt.splitlines()
            if line[:1].isdigit() and ". " in line}


async def test_a_review_card_is_shown_graded_recorded_and_explained_in_its_own_order(bot, clock) -> None:
    """The quiz showed the question in the learner's order, the review in one of its own: the letter
    pressed on the review card means what that card shows there, in the feedback and in the stored
    answer, and the quiz's message, still on screen, keeps its own order. "I don't know" names the
    answer by the letter its card shows, and the card asked again next has letters of its own."""
    who, q = learner(), questions(bot)[0]
    right = q.choices[q.correct_index].text
    [quizzed] = await bot.handle(Command("quiz", "", who, channel()))
    quiz_letter = next(k for k, text in letters(quizzed).items() if text == right)
    for _ in range(40):  # the review shuffles afresh: until it shows a wrong choice where the quiz showed the right one
        card = await review(bot, who)
        if letters(card)[quiz_letter] != right:
            break
    assert letters(card)[quiz_letter] != right
    picked = letters(card)[quiz_letter]
    index = next(i for i, o in enumerate(q.choices) if o.text == picked)
    [feedback] = await bot.handle(pressed(card, quiz_letter))
    review_letter = next(k for k, text in letters(card).items() if text == right)
    assert f"❌ Not quite. You chose {quiz_letter}: {q.choices[index].why_wrong}" in feedback.text
    assert f"The answer is {review_letter}. {right}" in feedback.text
    card_prompt = pressed(card, quiz_letter).token.split(".")[0]
    rows = await bot.store.engine.read("SELECT choice FROM answers WHERE prompt_id = ?", (card_prompt,))
    assert [r["choice"] for r in rows] == [index]
    [practised] = await bot.handle(pressed(quizzed, quiz_letter))
    assert practised.text.startswith("✅ Correct.")  # the quiz's message, graded in the order it showed
    clock.advance(40 * 24 * 3600)  # due again
    again = await review(bot, who)
    assert q.prompt in again.text
    [unsure] = await bot.handle(said_dont_know(again, who))
    assert f"Answer: {next(k for k, t in letters(again).items() if t == right)}. {right}" in unsure.text
    [following] = await bot.handle(ChoiceMade(unsure.choices[-1].token, who, channel()))
    assert q.prompt in following.text
    [passed] = await bot.handle(pressed(following, next(k for k, t in letters(following).items() if t == right)))
    assert passed.text.startswith("✅ Correct.")


async def test_an_order_card_is_graded_and_explained_by_the_numbers_its_review_shows(bot, clock) -> None:
    """A review's order question: the shown numbers typed are read in that review's order, the
    feedback lists each step with the number it was shown with, and so does "I don't know"."""
    who = learner()
    for done in ("core-q1", "core-q2"):
        await plant(bot, who, done, "2026-12-30T09:00:00+00:00")
    order = questions(bot)[2]
    card = await review(bot, who)
    assert order.prompt in card.text and "new card" in card.text
    shown = step_numbers(card)
    typed = [shown[step] for step in order.steps]
    typed[0], typed[1] = typed[1], typed[0]  # the first two swapped: two steps in their place
    [feedback] = await bot.handle(TextSubmitted(card.form.token, " ".join(typed), who, channel()))
    assert "❌ 2 of 4 in the right place." in feedback.text
    assert f"The right order: {' '.join(shown[step] for step in order.steps)}" in feedback.text
    assert all(f"({shown[step]}) {step}" in feedback.text for step in order.steps)
    clock.advance(3600)
    again = await review(bot, who)
    [unsure] = await bot.handle(said_dont_know(again, who))
    assert all(f"({step_numbers(again)[step]}) {step}" in unsure.text for step in order.steps)
    [following] = await bot.handle(ChoiceMade(unsure.choices[-1].token, who, channel()))
    numbers = step_numbers(following)
    [passed] = await bot.handle(TextSubmitted(following.form.token, " ".join(numbers[s] for s in order.steps),
                                              who, channel()))
    assert passed.text.startswith("✅ Right order.")
