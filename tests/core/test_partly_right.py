"""A partly right answer, through the core on both engines: the feedback names what is there and the one
point missing, it earns no point, and the learner may add the point once, grade themselves, or ask an
instructor; the points add up on the leaderboard and in quiz_results.txt."""

import pytest
from support import channel, learner

from bot.core.messages import ChoiceMade, Command, Reply, TextSubmitted
from bot.runtime.app import StudyBot
from bot.store.model import QUESTION, AnswerMode

pytestmark = pytest.mark.both_engines

LESSON, SHORT = "core-basics", "core-q2"
PARTLY = "FSDP shards the parameters, which costs communication"  # one point, and half of the other


async def typed(bot: StudyBot, who, text: str = PARTLY) -> Reply:
    prompt = await bot.store.prompts.new(QUESTION, channel(), who, lesson_id=LESSON, item_id=SHORT,
                                         mode=AnswerMode.PRACTICE)
    [feedback] = await bot.handle(TextSubmitted(prompt.id, text, who, channel()))
    return feedback


def button(reply: Reply, label: str) -> str:
    [found] = [c.token for c in reply.choices if c.label == label]
    return found


async def points(bot: StudyBot, who) -> int:
    standing = await bot.store.boards.standing(who, None)
    return standing.points if standing else 0


async def results_line(bot: StudyBot, who) -> str:
    [sent] = [r for r in await bot.handle(Command("results", "", who, channel())) if r.file]
    [line] = [x for x in sent.file.content.decode().splitlines() if x.startswith(SHORT + "\t")]
    return line


async def test_partly_right_names_the_missing_point_and_earns_nothing(bot: StudyBot) -> None:
    who = learner()
    feedback = await typed(bot, who)
    first = feedback.text.splitlines()[0]
    assert first.startswith("◑ Partly right, no point yet: 1 of 2 key points")
    assert 'Part of "It pays with extra communication" is there' in feedback.text
    assert [c.label for c in feedback.choices] == ["Add the missing point", "I got it right", "Right, but it was hard",
                                                   "I missed it", "Ask my instructor", "Next question"]
    assert await points(bot, who) == 0
    assert (await results_line(bot, who)).split("\t")[2:] == ["wrong", "partly-right"]


async def test_adding_the_missing_point_once_earns_it(bot: StudyBot) -> None:
    who = learner()
    feedback = await typed(bot, who)
    [form] = await bot.handle(ChoiceMade(button(feedback, "Add the missing point"), who, channel()))
    assert form.form is not None and PARTLY in form.form.prompt
    added = TextSubmitted(form.form.token, "It pays for it with extra communication.", who, channel())
    [done] = await bot.handle(added)
    assert done.text.splitlines()[0].startswith("✅ Graded correct: 2 of 2 key points")
    assert "With what you added, that is the point." in done.text
    assert await points(bot, who) == 1
    assert (await results_line(bot, who)).split("\t")[2:] == ["correct"]
    [again] = await bot.handle(ChoiceMade(button(feedback, "Add the missing point"), who, channel()))
    [refused] = await bot.handle(TextSubmitted(again.form.token, "more communication", who, channel()))
    assert refused.text.startswith("You already added to this answer once")
    assert await points(bot, who) == 1


async def test_a_follow_up_that_still_misses_it_earns_nothing_and_the_instructor_remains(bot: StudyBot) -> None:
    who = learner()
    feedback = await typed(bot, who)
    [form] = await bot.handle(ChoiceMade(button(feedback, "Add the missing point"), who, channel()))
    [done] = await bot.handle(TextSubmitted(form.form.token, "and it is fast", who, channel()))
    assert "it is still not the point" in done.text and await points(bot, who) == 0
    [sent] = await bot.handle(ChoiceMade(button(feedback, "Ask my instructor"), who, channel()))
    assert sent.text.startswith("Sent to your instructor")
    [listing] = await bot.handle(Command("audit", "disputes", learner("UT", teacher=True), channel()))
    assert "rubric: partly right" in listing.text


async def test_asking_the_instructor_closes_the_follow_up(bot: StudyBot) -> None:
    who = learner()
    feedback = await typed(bot, who)
    await bot.handle(ChoiceMade(button(feedback, "Ask my instructor"), who, channel()))
    [refused] = await bot.handle(ChoiceMade(button(feedback, "Add the missing point"), who, channel()))
    assert refused.text == "That answer can no longer be added to."


async def test_a_partly_right_teachback_may_be_completed_once(bot: StudyBot) -> None:
    who = learner()
    [form] = await bot.handle(Command("teachback", "core-tb1", who, channel()))
    [graded] = await bot.handle(TextSubmitted(form.form.token, "DDP copies the model on each GPU and tensor "
                                              "parallelism splits work across GPUs", who, channel()))
    assert graded.text.startswith("◑ Partly right, no point yet.")
    assert 'Part of "Tensor parallelism splits each layer" is there' in graded.text
    assert await points(bot, who) == 0
    [add] = await bot.handle(ChoiceMade(button(graded, "Add the missing point"), who, channel()))
    [passed] = await bot.handle(TextSubmitted(add.form.token, "It splits each layer across GPUs.", who, channel()))
    assert "That earns 1 point." in passed.text and "Add the missing point" not in [c.label for c in passed.choices]
    assert await points(bot, who) == 1
