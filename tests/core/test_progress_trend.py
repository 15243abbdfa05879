"""/progress: this week against last, per lesson, and the key points a learner missed most."""

from __future__ import annotations

from dataclasses import replace

import pytest
from support import CONTENT, channel, choice_for, learner

from bot.answering.asking import arrangement
from bot.core.messages import Audience, ChoiceMade, Command, TextSubmitted
from bot.runtime.app import StudyBot
from bot.store.model import QUESTION, AnswerMode

pytestmark = pytest.mark.both_engines

GUESS = "Something about the batch size, I guess."  # a real attempt that states no key point


async def ask(bot, who, question_id: str):
    """A practice prompt for one question, as the learner would see it."""
    question = bot.library.questions[question_id]
    prompt = await bot.store.prompts.new(QUESTION, channel(), who, lesson_id=question.lesson_id,
                                         item_id=question.id, mode=AnswerMode.PRACTICE)
    return question.ask(prompt.id, "", Audience.PRIVATE, arrangement(question, prompt))


async def test_progress_compares_this_week_with_last_and_names_what_to_reread(bot, clock) -> None:
    who, other = learner("U1"), learner("U2")
    clock.set("2026-11-25T12:00:00+00:00")  # last week (2026-W48)
    await bot.handle(ChoiceMade(choice_for(await ask(bot, who, "core-q1"), 0).token, who, channel()))  # wrong
    await bot.handle(TextSubmitted((await ask(bot, who, "core-q2")).form.token, GUESS, who, channel()))
    [tb] = await bot.handle(Command("teachback", "", who, channel()))
    await bot.handle(TextSubmitted(tb.form.token, "Data parallelism copies the model to every GPU.", who, channel()))
    await bot.handle(TextSubmitted((await ask(bot, other, "core-q2")).form.token, GUESS, other, channel()))
    clock.set("2026-11-30T09:00:00+00:00")  # this week (2026-W49)
    await bot.handle(ChoiceMade(choice_for(await ask(bot, who, "core-q1"), 1).token, who, channel()))  # right
    await bot.handle(TextSubmitted((await ask(bot, who, "core-q2")).form.token,
                                   "It shards the parameters across GPUs.", who, channel()))  # partly right
    [reply] = await bot.handle(Command("progress", "", who, channel()))
    lines = reply.text.splitlines()
    lesson_line = next(n for n, line in enumerate(lines) if line.startswith("• Core basics"))
    assert lines[lesson_line + 1] == "  this week: 2 answers, 50% right · last week: 2 answers, 0% right (up)"
    assert ("Re-read (missed most): “It pays with extra communication” (core-q2, missed 2×); "
            "“FSDP shards the model state across GPUs” (core-q2, missed 1×); "
            "“Tensor parallelism splits each layer” (core-tb1, missed 1×)") in lines

    [fresh] = await bot.handle(Command("progress", "", learner("U3"), channel()))
    assert "  this week: no answers · last week: no answers" in fresh.text.splitlines()
    assert "Re-read" not in fresh.text


async def test_a_point_a_correct_answer_did_not_need_is_not_missed(settings, clock) -> None:
    """A correct answer lists the points it did not need as "also worth knowing": they are not to re-read;
    an answer graded wrong names its missed points, and they are."""
    bot = await StudyBot.start(replace(settings, content_dir=CONTENT), clock)
    try:
        who = learner("U1")
        q08 = bot.library.questions["meta-q08"]
        [right] = await bot.handle(TextSubmitted((await ask(bot, who, q08.id)).form.token,
                                                 q08.examples.correct[0], who, channel()))
        assert right.text.startswith("✅") and "Also worth knowing:\n✗ It fits on a single GPU" in right.text
        [reply] = await bot.handle(Command("progress", "", who, channel()))
        assert "Re-read" not in reply.text
        [wrong] = await bot.handle(TextSubmitted((await ask(bot, who, q08.id)).form.token, GUESS, who, channel()))
        assert "You missed:\n✗ Pretraining a model family" in wrong.text
        [reply] = await bot.handle(Command("progress", "", who, channel()))
        [reread] = [line for line in reply.text.splitlines() if line.startswith("Re-read")]
        assert reread.count("(meta-q08, missed 1×)") == 3 and "“It fits on a single GPU" in reread
    finally:
        await bot.close()


async def test_the_trend_goes_down_and_stays_the_same_in_words(bot, clock) -> None:
    from bot.features.progress import trend_line

    assert trend_line((4, 1), (2, 2)).endswith("4 answers, 25% right · last week: 2 answers, 100% right (down)")
    assert trend_line((2, 1), (4, 2)).endswith("(same)")
    assert trend_line(None, (1, 1)) == "  this week: no answers · last week: 1 answer, 100% right"
