"""Public rounds: posted once, one answer each, revealed by the stored timer as an edit."""

from support import channel, choice_for, learner

from bot.app import StudyBot
from bot.messages import Audience, ChoiceMade, Command, MessageRef
from bot.scheduler import fire_due


class RecordingOutbox:
    """An Outbox that records what the core asked the platform to do."""

    def __init__(self) -> None:
        self.sent, self.edits = [], []

    async def send(self, reply):
        self.sent.append(reply)
        return MessageRef("slack", reply.place.channel_id, f"m{len(self.sent)}")

    async def edit(self, ref, reply):
        self.edits.append((ref, reply))


async def start_round(bot, starter):
    replies = await bot.handle(Command("quiz", "round", starter, channel()))
    [question] = [r for r in replies if r.audience is Audience.PUBLIC]
    await bot.message_posted(question.tag, MessageRef("slack", "C1", "q1-message"))
    return question


async def test_three_members_answer_and_the_timer_reveals_by_editing(bot, clock) -> None:
    question = await start_round(bot, learner("U0"))
    q = bot.library.questions[next(iter(bot.library.lessons.values())).questions[0].id]
    picks = {"U1": q.correct_index, "U2": q.correct_index, "U3": (q.correct_index + 1) % len(q.choices)}
    for user, index in picks.items():
        [feedback] = await bot.handle(ChoiceMade(choice_for(question, index).token, learner(user), channel()))
        assert feedback.audience is Audience.PRIVATE
    outbox = RecordingOutbox()
    assert await fire_due(bot, {"slack": outbox}) == 0  # not yet
    clock.advance(61)
    assert await fire_due(bot, {"slack": outbox}) == 1
    [(ref, reveal)] = outbox.edits
    assert ref == MessageRef("slack", "C1", "q1-message")
    assert "3 answered, 2 correct" in reveal.text and not reveal.choices
    [next_question] = outbox.sent
    assert "question 2 of" in next_question.text
    assert await fire_due(bot, {"slack": outbox}) == 0  # a reveal fires once
    [late] = await bot.handle(ChoiceMade(question.choices[0].token, learner("U4"), channel()))
    assert "has ended" in late.text
    assert await bot.store.count("answers") == 3


async def test_reveal_survives_closing_and_reopening_mid_round(bot, clock, settings) -> None:
    question = await start_round(bot, learner("U0"))
    await bot.handle(ChoiceMade(question.choices[0].token, learner("U1"), channel()))
    await bot.close()
    clock.advance(120)
    reopened = await StudyBot.start(settings, clock)
    try:
        outbox = RecordingOutbox()
        assert await fire_due(reopened, {"slack": outbox}) == 1
        [(ref, reveal)] = outbox.edits
        assert ref.message_id == "q1-message" and "1 answered" in reveal.text
        assert await fire_due(reopened, {"slack": outbox}) == 0
    finally:
        await reopened.close()
        bot.ctx.store = await type(bot.store).open(settings.db_path, clock)  # let the fixture close cleanly


async def test_next_is_for_the_starter_and_reveals_now(bot) -> None:
    question = await start_round(bot, learner("U0"))
    next_button = question.choices[-1]
    [refusal] = await bot.handle(ChoiceMade(next_button.token, learner("U5"), channel()))
    assert "Only the person who started" in refusal.text
    outbox = RecordingOutbox()
    assert await fire_due(bot, {"slack": outbox}) == 0  # nothing is due before Next
    [now] = await bot.handle(ChoiceMade(next_button.token, learner("U0"), channel()))
    assert now.text == "Revealing it now."
    assert await fire_due(bot, {"slack": outbox}) == 1  # at once, by the question's own timer
    [(ref, _)] = outbox.edits
    assert ref.message_id == "q1-message"
    assert any("question 2 of" in r.text for r in outbox.sent)
    [again] = await bot.handle(ChoiceMade(next_button.token, learner("U0"), channel()))
    assert again.text == "That question was already revealed."


async def test_round_runs_to_its_summary(bot, clock) -> None:
    await start_round(bot, learner("U0"))
    outbox = RecordingOutbox()
    total = len(next(iter(bot.library.lessons.values())).questions)
    for _ in range(total):
        clock.advance(61)
        await fire_due(bot, outbox_map := {"slack": outbox})
    assert "Round over" in outbox.sent[-1].text
    assert await fire_due(bot, outbox_map) == 0


async def test_one_round_per_channel_and_not_in_a_dm(bot) -> None:
    await start_round(bot, learner("U0"))
    [busy] = await bot.handle(Command("quiz", "round", learner("U1"), channel()))
    assert "already running" in busy.text
    [dm] = await bot.handle(Command("quiz", "round", learner("U1"), channel(channel_id=None)))
    assert "channel" in dm.text
