"""Disputes through the core, on both engines: "Ask my instructor" under a verdict, `/audit disputes`,
one press to settle (points, marks, the learner's direct message), the limits, and a restart."""

import pytest
from support import RecordingOutbox, channel, learner

from bot.core.messages import Audience, ChoiceMade, Command, Reply, TextSubmitted
from bot.features.disputes import ASK, MOST_OPEN
from bot.features.disputes.storage import AREA
from bot.runtime.app import StudyBot
from bot.runtime.scheduler import fire_due
from bot.store.model import QUESTION, AnswerMode

pytestmark = pytest.mark.both_engines

LESSON, SHORT = "core-basics", "core-q2"
HALF = "FSDP shards the parameters, that is all I remember."  # one of the two key points: graded wrong
TEACHER = learner("UT", teacher=True)


async def short_answer(bot: StudyBot, who, text: str = HALF) -> Reply:
    """The feedback to a short answer typed to a fresh practice prompt of core-q2."""
    prompt = await bot.store.prompts.new(QUESTION, channel(who.cohort), who, lesson_id=LESSON,
                                         item_id=SHORT, mode=AnswerMode.PRACTICE)
    [feedback] = await bot.handle(TextSubmitted(prompt.id, text, who, channel(who.cohort)))
    return feedback


def pressed(reply: Reply, label: str, who) -> ChoiceMade:
    [button] = [c for c in reply.choices if c.label.startswith(label)]
    return ChoiceMade(button.token, who, channel(who.cohort))


async def listed(bot: StudyBot, who=TEACHER) -> Reply:
    [reply] = await bot.handle(Command("audit", "disputes", who, channel(who.cohort)))
    return reply


async def told(bot: StudyBot) -> list[Reply]:
    """The direct messages the settled disputes' timers deliver."""
    outbox = RecordingOutbox()
    await fire_due(bot, {"slack": outbox})
    return outbox.sent


async def test_an_accepted_dispute_gives_the_point_marked_instructor_graded(bot: StudyBot) -> None:
    who = learner()
    feedback = await short_answer(bot, who)
    assert "Graded correct" not in feedback.text
    assert ASK in [c.label for c in feedback.choices] and "Next question" in [c.label for c in feedback.choices]
    [sent] = await bot.handle(pressed(feedback, ASK, who))
    assert sent.text.startswith("Sent to your instructor")
    [again] = await bot.handle(pressed(feedback, ASK, who))
    assert again.text.startswith("You already asked your instructor about this answer")
    assert await bot.store.count("disputes") == 1

    listing = await listed(bot)
    assert listing.text.startswith("Open disputes: 1.")
    assert f"name-U1 · {SHORT} (short answer) · rubric: wrong" in listing.text and HALF in listing.text
    assert "matched: FSDP shards" in listing.text  # the matched key point, by its text
    [refused] = await bot.handle(Command("audit", "disputes", who, channel()))
    assert refused.text.startswith("Only instructors can settle disputes")
    assert await told(bot) == []  # nothing to tell before it is settled

    [accepted] = await bot.handle(pressed(listing, "Accept", TEACHER))
    assert "gets 1 point, instructor-graded" in accepted.text
    [dm] = await told(bot)
    assert (dm.audience, dm.to.user_id, dm.place.cohort) == (Audience.DM, "U1", "T1")
    assert dm.text.startswith("Your instructor accepted your short answer") and "1 point" in dm.text
    assert await told(bot) == []  # told once

    [twice] = await bot.handle(pressed(listing, "Reject", TEACHER))
    assert twice.text == "Dispute #1 was already accepted (by UT)."
    standing = await bot.store.boards.standing(who, bot.ctx.week(who.in_cohort))
    assert (standing.points, standing.instructor_graded) == (1, 1)
    [scored] = await bot.store.answers.scored(who, LESSON)
    assert (scored.correct, scored.instructor_graded, scored.self_graded) == (True, True, False)
    [board] = await bot.handle(Command("leaderboard", "", who, channel()))
    assert "name-U1 · 1 (1 instructor-graded)" in board.text
    assert (await listed(bot)).text == "No open disputes in this cohort."


async def test_a_practice_answer_disputed_is_regraded_without_points(bot: StudyBot) -> None:
    """Only the first (scoring) answer earns points; a later one's accepted dispute changes its verdict only."""
    who = learner()
    await short_answer(bot, who)  # the scoring answer, not disputed
    practice = await short_answer(bot, who)
    await bot.handle(pressed(practice, ASK, who))
    [accepted] = await bot.handle(pressed(await listed(bot), "Accept", TEACHER))
    assert "no points (not the answer that scores)" in accepted.text
    [dm] = await told(bot)
    assert "now graded correct" in dm.text and "no points" in dm.text
    assert await bot.store.boards.standing(who, None) is None
    [scored] = await bot.store.answers.scored(who, LESSON)
    assert (scored.correct, scored.instructor_graded) == (False, False)


async def test_a_rejected_dispute_leaves_the_verdict_and_tells_the_learner(bot: StudyBot) -> None:
    who = learner()
    feedback = await short_answer(bot, who)
    await bot.handle(pressed(feedback, ASK, who))
    [rejected] = await bot.handle(pressed(await listed(bot), "Reject", TEACHER))
    assert rejected.text.startswith("Rejected dispute #1: the rubric's verdict stands.")
    [dm] = await told(bot)
    assert "agrees with the rubric's verdict" in dm.text and dm.to.user_id == "U1"
    [scored] = await bot.store.answers.scored(who, LESSON)
    assert (scored.correct, scored.instructor_graded) == (False, False)
    [again] = await bot.handle(pressed(feedback, ASK, who))
    assert again.text.startswith("You already asked")  # settled, still the same answer


async def test_a_learner_has_at_most_a_few_open_disputes(bot: StudyBot) -> None:
    who = learner()
    for _ in range(MOST_OPEN):
        [sent] = await bot.handle(pressed(await short_answer(bot, who), ASK, who))
        assert sent.text.startswith("Sent")
    one_more = await short_answer(bot, who)
    [refused] = await bot.handle(pressed(one_more, ASK, who))
    assert refused.text.startswith(f"You have {MOST_OPEN} questions waiting for your instructor")
    [other] = await bot.handle(pressed(await short_answer(bot, learner("U2")), ASK, learner("U2")))
    assert other.text.startswith("Sent")  # per learner
    await bot.handle(pressed(await listed(bot), "Reject #1", TEACHER))
    [sent] = await bot.handle(pressed(one_more, ASK, who))  # one was settled: room again
    assert sent.text.startswith("Sent")


async def test_a_teachback_dispute_accepted_earns_its_point(bot: StudyBot) -> None:
    who = learner()
    [form] = await bot.handle(Command("teachback", "core-tb2", who, channel()))
    said = "It is about buying more GPUs for the team, I think."
    [missed] = await bot.handle(TextSubmitted(form.form.token, said, who, channel()))
    assert [c.label for c in missed.choices] == ["Try this one again", ASK]
    await bot.handle(pressed(missed, ASK, who))
    listing = await listed(bot)
    assert "core-tb2 (teach-back) · rubric: wrong (matched: none; missed: " in listing.text and said in listing.text
    [accepted] = await bot.handle(pressed(listing, "Accept", TEACHER))
    assert "gets 1 point, instructor-graded" in accepted.text
    assert (await bot.store.teachbacks.counts(who))[LESSON].points == 1
    standing = await bot.store.boards.standing(who, None)
    assert (standing.points, standing.instructor_graded) == (1, 1)
    [progress] = await bot.handle(Command("progress", "", who, channel()))
    assert "teach-backs 1 (1 point); points 1 (1 instructor-graded)" in progress.text  # marked as the board marks it
    [dm] = await told(bot)
    assert dm.text.startswith("Your instructor accepted your teach-back")


async def test_another_cohorts_instructor_can_neither_see_nor_settle(bot: StudyBot) -> None:
    who = learner()
    await bot.handle(pressed(await short_answer(bot, who), ASK, who))
    listing = await listed(bot)
    elsewhere = learner("UX", cohort="T2", teacher=True)
    assert (await listed(bot, elsewhere)).text == "No open disputes in this cohort."
    [button] = [c for c in listing.choices if c.label.startswith("Accept")]
    [refused] = await bot.handle(ChoiceMade(button.token, elsewhere, channel("T2")))
    assert refused.text.startswith("That button is no longer valid")
    [learner_pressed] = await bot.handle(ChoiceMade(button.token, learner("U3"), channel()))
    assert learner_pressed.text.startswith("Only instructors can settle disputes")
    assert await bot.store.area(AREA).settle(1, True, elsewhere, tell="dispute:1") == (None, False)
    assert await bot.store.boards.standing(who, None) is None and await told(bot) == []


async def test_a_dispute_survives_a_restart_and_its_buttons_still_work(settings, clock) -> None:
    who = learner()
    bot = await StudyBot.start(settings, clock)
    try:
        await bot.handle(pressed(await short_answer(bot, who), ASK, who))
        listing = await listed(bot)
    finally:
        await bot.close()
    bot = await StudyBot.start(settings, clock)
    try:
        [accepted] = await bot.handle(pressed(listing, "Accept", TEACHER))
        assert accepted.text.startswith("Accepted dispute #1")
        [dm] = await told(bot)
        assert dm.to.user_id == "U1"
        assert (await bot.store.boards.standing(who, None)).points == 1
    finally:
        await bot.close()


async def test_help_lists_audit_disputes(bot: StudyBot) -> None:
    pages = await bot.handle(Command("help", "", learner(), channel()))  # /help takes as many messages as it needs
    shown = "\n".join(p.text for p in pages)
    assert "• /audit disputes: the cohort's open disputes, each settled with one press" in shown


async def test_a_self_grade_cannot_undo_an_instructors_grade(bot: StudyBot) -> None:
    who = learner()
    feedback = await short_answer(bot, who, "I think it mostly comes down to the hardware budget and the team size")
    await bot.handle(pressed(feedback, ASK, who))
    await bot.handle(pressed(await listed(bot), "Accept", TEACHER))
    [refused] = await bot.handle(pressed(feedback, "I missed it", who))
    assert refused.text == "You asked your instructor about this answer, so their grade stands, not your own."
    assert (await bot.store.boards.standing(who, None)).points == 1


@pytest.mark.parametrize("settled", ["Reject", "Accept", None])
async def test_asking_the_instructor_spends_the_self_grade(bot: StudyBot, settled: str | None) -> None:
    """Once a learner asks their instructor, the answer's grade is the instructor's to give: the old
    "I got it right" button is refused while the dispute is open and after it is settled either way."""
    who = learner()
    feedback = await short_answer(bot, who)
    await bot.handle(pressed(feedback, ASK, who))
    if settled:
        await bot.handle(pressed(await listed(bot), settled, TEACHER))
    [refused] = await bot.handle(pressed(feedback, "I got it right", who))
    assert refused.text == "You asked your instructor about this answer, so their grade stands, not your own."
    [scored] = await bot.store.answers.scored(who, LESSON)
    assert scored.correct is (settled == "Accept") and not scored.self_graded
    standing = await bot.store.boards.standing(who, None)
    assert (standing.points if standing else 0) == (1 if settled == "Accept" else 0)


async def test_the_instructor_may_add_a_word_after_settling(bot: StudyBot) -> None:
    who = learner()
    await bot.handle(pressed(await short_answer(bot, who), ASK, who))
    listing = await listed(bot)
    form_token = listing.choices[0].token.split(".")[0]
    [early] = await bot.handle(TextSubmitted(form_token, "Nice try", TEACHER, channel()))
    assert early.text.startswith("Dispute #1 has a word for its learner already, or is not settled yet")
    [rejected] = await bot.handle(pressed(listing, "Reject", TEACHER))
    [form] = await bot.handle(pressed(rejected, "Add a word for name-U1", TEACHER))
    assert form.form is not None and form.form.label == "Your word"
    [refused] = await bot.handle(TextSubmitted(form.form.token, "Nice try", who, channel()))
    assert refused.text.startswith("Only instructors can settle disputes")
    word = "Say what FSDP costs too: the extra communication."
    [sent] = await bot.handle(TextSubmitted(form.form.token, word, TEACHER, channel()))
    assert sent.text == "Your word on dispute #1 is sent to the learner by direct message."
    [again] = await bot.handle(TextSubmitted(form.form.token, "More", TEACHER, channel()))
    assert again.text.startswith("Dispute #1 has a word for its learner already")
    dms = await told(bot)
    assert sorted(dm.text.split(" ", 3)[1] for dm in dms) == ["instructor", "word"]
    [said] = [dm for dm in dms if dm.text.startswith("A word from your instructor on your short answer")]
    assert said.text.endswith("\n" + word) and said.to.user_id == "U1"
    assert (await bot.store.area(AREA).get(1)).note == word
