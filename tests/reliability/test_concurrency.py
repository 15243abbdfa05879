"""Many learners at once: 200 learners answer the same round question at the same moment, each
clicking twice, through `StudyBot.handle` on a real SQLite file. Every learner is recorded once,
and the reveal's tally (fired by the round's stored timer) equals the true count per choice."""

from __future__ import annotations

import asyncio
from collections import Counter

from support import RecordingOutbox, channel, choice_for, learner

from bot.core.clock import FixedClock
from bot.core.messages import Audience, ChoiceMade, Command, MessageRef
from bot.questions.base import Tally
from bot.runtime.app import StudyBot
from bot.runtime.scheduler import fire_due

LEARNERS = 200

RELIABILITY = [
    ("learners answering one round question at once through StudyBot.handle (asyncio.gather), each clicking "
     "its button twice at the same moment", f"{LEARNERS} learners, {2 * LEARNERS} concurrent clicks",
     "exactly one answer row and one prompt use per learner; each got one feedback and one 'already answered'"),
    ("the round's timer fires the reveal after the concurrent burst", "1 reveal, tally per choice",
     "the reveal's per-choice counts and 'N answered, K correct' equal the true counts; store.tally agrees"),
]


async def test_two_hundred_learners_answer_one_round_question_at_once(bot: StudyBot, clock: FixedClock) -> None:
    replies = await bot.handle(Command("quiz", "round", learner("STARTER", teacher=True), channel()))
    [question] = [r for r in replies if r.audience is Audience.PUBLIC]
    await bot.message_posted(question.tag, MessageRef("slack", "C1", "round-q1"))
    prompt_id = question.choices[0].token.partition(".")[0]
    q = bot.library.questions[(await bot.store.prompts.get(prompt_id)).item_id]
    options = len(q.choices)
    picks = {f"U{n:04d}": (n * 7 + n // 3) % options for n in range(LEARNERS)}  # uneven, every choice used

    clicks = [ChoiceMade(choice_for(question, index).token, learner(user), channel())
              for user, index in picks.items() for _ in range(2)]
    outcomes = await asyncio.gather(*(bot.handle(click) for click in clicks))

    texts_by_user: dict[str, list[str]] = {user: [] for user in picks}
    for click, out in zip(clicks, outcomes, strict=True):
        [reply] = out
        assert reply.audience is Audience.PRIVATE
        texts_by_user[click.actor.user_id].append(reply.text)
    for user, texts in texts_by_user.items():
        already = [t for t in texts if t.startswith("You already answered")]
        graded = [t for t in texts if t.startswith(("✅ Correct", "❌ Not quite"))]
        assert len(already) == 1 and len(graded) == 1, (user, texts)

    assert await bot.store.count("answers") == LEARNERS
    assert await bot.store.count("prompt_uses") == LEARNERS
    rows = await bot.store.engine.read("SELECT l.user_id, a.choice FROM answers a"
                                       " JOIN learners l ON l.id = a.learner_id")
    assert {r["user_id"]: r["choice"] for r in rows} == picks

    truth = Counter(picks.values())
    right = truth[q.correct_index]
    tally = Tally.of(await bot.store.answers.counts(prompt_id))
    assert tally.answers == LEARNERS and tally.correct == right
    assert {i: tally.by_choice.get(i, 0) for i in range(options)} == {i: truth[i] for i in range(options)}

    outbox = RecordingOutbox()
    clock.advance(bot.settings.round_seconds + 1)
    assert await fire_due(bot, {"slack": outbox}) == 1
    [(ref, reveal)] = outbox.edits
    assert ref == MessageRef("slack", "C1", "round-q1")
    assert f"{LEARNERS} answered, {right} correct." in reveal.text
    letters = "ABCDEFGHIJ"
    shown = [int(c.token.rsplit(".", 1)[1]) for c in question.choices if c.token.rsplit(".", 1)[1].isdigit()]
    expected = " · ".join(f"{letters[n]}: {truth[i]}" + (" ✓" if i == q.correct_index else "")
                          for n, i in enumerate(shown))  # in the order the channel saw the choices
    assert expected in reveal.text

    late = await bot.handle(ChoiceMade(question.choices[0].token, learner("U9999"), channel()))
    assert "has ended" in late[0].text
    assert await bot.store.count("answers") == LEARNERS
