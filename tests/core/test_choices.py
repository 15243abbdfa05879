"""Choices in a fair order: shuffled per learner, the same for that learner every time (and after a
restart), one order for a whole round; answers record the choice itself, never its position."""

from dataclasses import replace

import pytest
from support import channel, learner

from bot.answering.asking import arrangement
from bot.core.messages import Audience, ChoiceMade, Command, MessageRef
from bot.runtime.app import StudyBot
from bot.runtime.scheduler import fire_due
from bot.store.model import AnswerMode

pytestmark = pytest.mark.both_engines


class Outbox:
    def __init__(self) -> None:
        self.sent, self.edits = [], []

    async def send(self, reply):
        self.sent.append(reply)
        return MessageRef("slack", "C1", f"m{len(self.sent) + 1}")

    async def edit(self, ref, reply):
        self.edits.append((ref, reply))


def order_of(reply) -> list[int]:
    """The pack indexes of the choices in the order a reply shows them."""
    return [int(c.token.rsplit(".", 1)[1]) for c in reply.choices if c.token.rsplit(".", 1)[1].isdigit()]


async def first_question(bot, who):
    [reply] = await bot.handle(Command("quiz", "", who, channel()))
    return reply


async def test_learners_see_their_own_order(bot) -> None:
    orders = {tuple(order_of(await first_question(bot, learner(f"U{n}")))) for n in range(8)}
    assert len(orders) > 1  # eight learners do not all see one order
    assert all(sorted(o) == [0, 1, 2] for o in orders)  # every choice, each once


async def test_a_learner_sees_the_same_order_again_and_after_a_restart(bot, settings, clock) -> None:
    who = learner("U3")
    first = order_of(await first_question(bot, who))
    assert order_of(await first_question(bot, who)) == first  # asked again: the same order
    await bot.close()
    reopened = await StudyBot.start(settings, clock)
    try:
        assert order_of(await first_question(reopened, who)) == first
    finally:
        await reopened.close()
        bot.ctx.store = await type(bot.store).open(settings.db_path, clock)


async def test_a_round_shows_one_order_and_reveals_in_it(bot, clock) -> None:
    replies = await bot.handle(Command("quiz", "round", learner("U0"), channel()))
    [question] = [r for r in replies if r.audience is Audience.PUBLIC]
    await bot.message_posted(question.tag, MessageRef("slack", "C1", "m1"))
    shown = order_of(question)
    q = next(iter(bot.library.lessons.values())).questions[0]
    for n, user in enumerate(("U1", "U2", "U3")):
        [feedback] = await bot.handle(ChoiceMade(question.choices[n].token, learner(user), channel()))
        assert feedback.audience is Audience.PRIVATE
    [next_button] = [c for c in question.choices if c.label.startswith("Next")]
    [now] = await bot.handle(ChoiceMade(next_button.token, learner("U0"), channel()))
    assert now.text == "Revealing it now."
    outbox = Outbox()
    assert await fire_due(bot, {"slack": outbox}) == 1
    [(_, reveal)] = outbox.edits
    tally = " · ".join(f"{'ABC'[n]}: 1" + (" ✓" if i == q.correct_index else "") for n, i in enumerate(shown))
    assert tally in reveal.text  # the letters of the reveal are the letters the channel saw
    assert f"Answer: {'ABC'[shown.index(q.correct_index)]}. {q.choices[q.correct_index].text}" in reveal.text


async def test_an_answer_records_the_choice_not_its_position(bot) -> None:
    q = next(iter(bot.library.lessons.values())).questions[0]
    for n in range(20):  # a learner whose top button is a wrong choice other than the first in the pack
        who = learner(f"U{n}")
        reply = await first_question(bot, who)
        shown = order_of(reply)
        if shown[0] not in (0, q.correct_index):
            break
    [feedback] = await bot.handle(ChoiceMade(reply.choices[0].token, who, channel()))  # the top button, A
    rows = await bot.store.engine.read("SELECT choice FROM answers")
    assert [r["choice"] for r in rows] == [shown[0]] and shown[0] != 0
    assert f"You chose A: {q.choices[shown[0]].why_wrong}" in feedback.text
    assert f"The answer is {'ABC'[shown.index(q.correct_index)]}." in feedback.text


async def test_the_answer_key_keeps_the_authoring_order(bot) -> None:
    from bot.content.render import render_quiz

    lesson = next(iter(bot.library.lessons.values()))
    q = lesson.questions[0]
    text = render_quiz(lesson)
    assert "\n".join(f"- {'ABC'[i]}. {o.text}" for i, o in enumerate(q.choices)) in text
    assert f"**Answer: {'ABC'[q.correct_index]}.**" in text


async def test_each_review_shuffles_the_choices_afresh_and_grades_in_its_own_order(bot, clock) -> None:
    """A card is passed by knowing the answer, not by remembering where it stood in the quiz."""
    who = learner("U5")
    asked = await first_question(bot, who)
    prompt = await bot.store.prompts.get(asked.choices[0].token.split(".")[0])
    question = next(q for q in bot.library.questions.values() if q.prompt == "What does tensor parallelism split?")
    orders = []
    for _ in range(6):
        [reply] = await bot.handle(Command("review", "", who, channel()))
        if question.prompt not in reply.text:
            break
        orders.append(order_of(reply))
        right = next(c for c in reply.choices if c.token.endswith(f".{question.correct_index}"))
        [feedback, *_] = await bot.handle(ChoiceMade(right.token, who, channel()))
        assert "✅" in feedback.text  # graded by the choice itself, in this review's order
        clock.advance(40 * 24 * 3600)  # due again
    assert len(orders) >= 2  # each graded by the choice itself, whatever its place
    reviews = [replace(prompt, id=f"r{n}", mode=AnswerMode.REVIEW) for n in range(12)]
    shown = {tuple(arrangement(question, p).shown) for p in reviews}
    assert len(shown) > 1  # twelve reviews do not all repeat one order (the quiz's)
    assert all(arrangement(question, p).shown == arrangement(question, p).shown for p in reviews)  # stable within
    assert arrangement(question, replace(prompt, id="other")).shown == arrangement(question, prompt).shown  # quiz
