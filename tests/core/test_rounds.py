"""Public rounds: posted once, one answer each, revealed by the stored timer as an edit."""

import pytest
from support import RecordingOutbox, channel, choice_for, dont_know, learner, with_cohort

from bot.core.messages import Audience, ChoiceMade, Cohort, Command, MessageRef
from bot.runtime.app import StudyBot
from bot.runtime.scheduler import fire_due
from bot.store.model import RoundState

pytestmark = pytest.mark.both_engines


async def start_round(bot, starter, args="round"):
    replies = await bot.handle(Command("quiz", args, starter, channel()))
    [question] = [r for r in replies if r.audience is Audience.PUBLIC]
    await bot.message_posted(question.tag, MessageRef("slack", "C1", "q1-message"))
    return question


async def rounds_stored(bot) -> int:
    [(n,)] = await bot.store.engine.read("SELECT COUNT(*) FROM rounds")
    return n


async def time_runs_out(bot, clock, outbox, seconds=61):
    """The open question's time passes: the scheduler reveals it and posts what follows."""
    clock.advance(seconds)
    return await fire_due(bot, {"slack": outbox})


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


async def test_an_answer_in_a_round_after_a_first_one_says_it_scores_nothing(bot) -> None:
    """A learner who answered a question in /quiz answers it again in a round: the note says why
    there is no point, in the words every mode uses (not "Practice:" inside a round)."""
    who = learner("U1")
    [asked] = await bot.handle(Command("quiz", "", who, channel()))
    q = bot.library.questions[next(iter(bot.library.lessons.values())).questions[0].id]
    await bot.handle(ChoiceMade(choice_for(asked, q.correct_index).token, who, channel()))
    question = await start_round(bot, learner("U0"))
    [feedback] = await bot.handle(ChoiceMade(choice_for(question, q.correct_index).token, who, channel()))
    assert "(No points this time: only your first answer to a question scores.)" in feedback.text
    assert "Practice:" not in feedback.text


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
    question = await start_round(bot, learner("U0"))
    outbox = RecordingOutbox()
    total = len(next(iter(bot.library.lessons.values())).questions)
    for _ in range(total):
        [dont_know] = [c for c in question.choices if c.label == "I don't know"]
        await bot.handle(ChoiceMade(dont_know.token, learner("U1"), channel()))  # someone answers, every type
        clock.advance(61)
        await fire_due(bot, outbox_map := {"slack": outbox})
        question = outbox.sent[-1]
    assert "Round over" in outbox.sent[-1].text and "name-U1: " in outbox.sent[-1].text
    assert await fire_due(bot, outbox_map) == 0


async def test_one_round_per_channel_and_not_in_a_dm(bot) -> None:
    await start_round(bot, learner("U0"))
    [busy] = await bot.handle(Command("quiz", "round", learner("U1"), channel()))
    assert "already running" in busy.text
    [dm] = await bot.handle(Command("quiz", "round", learner("U1"), channel(channel_id=None)))
    assert "channel" in dm.text
    assert await rounds_stored(bot) == 1


async def test_asking_for_a_round_where_one_runs_shows_its_question_to_answer(bot, clock) -> None:
    """The question may have scrolled away (or have been posted in an earlier console chat): it is shown
    again privately, with the buttons of the one in the channel; its starter or an instructor is told
    how to stop it, everyone else that another round starts once it ends."""
    posted = await start_round(bot, learner("U0"))
    [again] = await bot.handle(Command("quiz", "round", learner("U1"), channel()))
    assert again.audience is Audience.PRIVATE and again.tag is None
    assert again.choices == posted.choices and again.text.endswith(posted.text)
    assert "/quiz round stop" not in again.text and "once it ends" in again.text
    [feedback] = await bot.handle(ChoiceMade(dont_know(again).token, learner("U1"), channel()))
    assert feedback.audience is Audience.PRIVATE and await bot.store.count("answers") == 1
    for steers in (learner("U0"), learner("U2", teacher=True)):
        [reply] = await bot.handle(Command("quiz", "round", steers, channel()))
        assert "/quiz round stop" in reply.text and reply.choices == posted.choices
    outbox = RecordingOutbox()
    for _ in range(3):  # questions 2 and 3 get no answer: the round pauses
        await time_runs_out(bot, clock, outbox)
    assert "paused" in outbox.sent[-1].text
    [paused] = await bot.handle(Command("quiz", "round", learner("U1"), channel()))
    assert "paused" in paused.text and not paused.choices and "/quiz round resume" not in paused.text
    [paused] = await bot.handle(Command("quiz", "round", learner("U0"), channel()))
    assert "/quiz round resume" in paused.text and "/quiz round stop" in paused.text
    assert await rounds_stored(bot) == 1


async def test_a_round_of_n_questions_asks_exactly_n_then_sums_up(bot, clock) -> None:
    question = await start_round(bot, learner("U0"), "round core-basics 2")
    assert question.text.startswith("Round · question 1 of 2 ·")
    outbox = RecordingOutbox()
    for _ in range(2):
        await bot.handle(ChoiceMade(dont_know(question).token, learner("U1"), channel()))
        await time_runs_out(bot, clock, outbox)
        question = outbox.sent[-1]
    second, summary = outbox.sent
    assert second.text.startswith("Round · question 2 of 2 ·")
    assert summary.text.startswith("Round over.") and "name-U1: 0/2" in summary.text
    assert len(outbox.edits) == 2
    assert await time_runs_out(bot, clock, outbox, 3600) == 0 and len(outbox.sent) == 2
    assert await bot.store.count("timers") == 0


async def test_a_round_of_more_questions_than_the_lesson_has_is_refused(bot) -> None:
    for count in ("5", "0"):
        [refusal] = await bot.handle(Command("quiz", f"round core-basics {count}", learner("U0"), channel()))
        assert refusal.text == "Lesson core-basics has 4 questions; pick 1 to 4."
    assert await rounds_stored(bot) == 0


async def test_odd_numbers_in_a_round_get_a_clear_answer_and_start_nothing(bot) -> None:
    """Digits Python calls digits but cannot read as a number (², ①) and a negative count are a
    learner's typo, never a bug reference."""
    for args, wanted in (("round -3", "Lesson core-basics has 4 questions; pick 1 to 4."),
                         ("round ²", "Give the number of questions as a number, such as 5."),
                         ("round core-basics ①", "Give the number of questions as a number, such as 5."),
                         ("round seconds:²", "Give the seconds per question as a number, such as seconds:30."),
                         ("round seconds:-5", "Give the seconds per question as a number, such as seconds:30.")):
        [refusal] = await bot.handle(Command("quiz", args, learner("U0"), channel()))
        assert refusal.text == wanted, args
    for args in ("³", "-2", "core-basics practice"):  # the practice set too (Discord's set:practice without a round)
        [practice] = await bot.handle(Command("quiz", args, learner("U0"), channel()))
        assert practice.text.startswith("A number of questions, seconds and the practice set are for a round."), args
    assert await rounds_stored(bot) == 0


@pytest.fixture
async def bounded(settings, clock):
    """A bot whose rounds may take 20 to 90 seconds per question."""
    studybot = await StudyBot.start(settings.with_config({"rounds": {"shortest": 20, "longest": 90}}), clock)
    yield studybot
    await studybot.close()


async def test_seconds_within_the_configured_bounds_time_each_question(bounded, clock) -> None:
    question = await start_round(bounded, learner("U0"), "round seconds:30")
    assert question.text.startswith("Round · question 1 of 4 · 30 s")
    await bounded.handle(ChoiceMade(dont_know(question).token, learner("U1"), channel()))
    outbox = RecordingOutbox()
    assert await time_runs_out(bounded, clock, outbox, 29) == 0
    assert await time_runs_out(bounded, clock, outbox, 2) == 1
    [following] = outbox.sent
    assert following.text.startswith("Round · question 2 of 4 · 30 s")
    assert await time_runs_out(bounded, clock, outbox, 31) == 1  # the next question keeps the round's time


async def test_seconds_outside_the_configured_bounds_are_refused_naming_them(bounded) -> None:
    for seconds in ("seconds:19", "seconds:91", "seconds 600"):
        [refusal] = await bounded.handle(Command("quiz", f"round {seconds}", learner("U0"), channel()))
        assert refusal.text == "Pick 20 to 90 seconds per question."
    [typo] = await bounded.handle(Command("quiz", "round seconds:abc", learner("U0"), channel()))
    assert "seconds:30" in typo.text
    assert await rounds_stored(bounded) == 0


async def stopped_at_once(bot, clock, question) -> RecordingOutbox:
    """The stop's last word comes at once: the open question revealed, the summary; then nothing."""
    outbox = RecordingOutbox()
    assert await fire_due(bot, {"slack": outbox}) == 1  # the clock has not moved
    [(ref, reveal)] = outbox.edits
    assert ref.message_id == "q1-message" and "0 answered" in reveal.text
    [summary] = outbox.sent
    assert summary.text.startswith("Round over after 1 of ") and summary.audience is Audience.PUBLIC
    [late] = await bot.handle(ChoiceMade(question.choices[0].token, learner("U1"), channel()))
    assert "has ended" in late.text
    await time_runs_out(bot, clock, outbox, 3600)
    assert len(outbox.sent) == 1 and await bot.store.count("timers") == 0  # no next question, ever
    return outbox


async def test_stop_by_the_starter_ends_the_round_at_once_with_its_summary(bot, clock) -> None:
    question = await start_round(bot, learner("U0"))
    [stopped] = await bot.handle(Command("quiz", "round stop", learner("U0"), channel()))
    assert stopped.text == "Round stopped: the summary follows in the channel."
    await stopped_at_once(bot, clock, question)
    [(state,)] = await bot.store.engine.read("SELECT state FROM rounds")
    assert state == RoundState.DONE


async def test_stop_by_an_instructor_of_the_cohort_ends_the_round(settings, clock) -> None:
    configured = with_cohort(settings, instructors=["UTEACH"])
    bot = await StudyBot.start(configured, clock)
    try:
        question = await start_round(bot, learner("U0"))
        listed = configured.instructors.listed(Cohort("slack", "T1"), "UTEACH")  # as the adapters decide
        [stopped] = await bot.handle(Command("quiz", "round stop", learner("UTEACH", teacher=listed), channel()))
        assert listed and stopped.text.startswith("Round stopped")
        await stopped_at_once(bot, clock, question)
    finally:
        await bot.close()


async def test_stop_by_anyone_else_is_refused_and_the_round_goes_on(bot, clock) -> None:
    await start_round(bot, learner("U0"))
    [refusal] = await bot.handle(Command("quiz", "round stop", learner("U5"), channel()))
    assert refusal.text == "Only the person who started the round (or an instructor) can stop it."
    outbox = RecordingOutbox()
    assert await fire_due(bot, {"slack": outbox}) == 0  # nothing ends it now
    await time_runs_out(bot, clock, outbox)
    [following] = outbox.sent
    assert following.text.startswith("Round · question 2 of 4")


async def test_two_silent_questions_in_a_row_pause_the_round_until_resumed(bot, clock) -> None:
    await start_round(bot, learner("U0"))
    outbox = RecordingOutbox()
    await time_runs_out(bot, clock, outbox)  # nobody answered question 1: question 2 is posted
    await time_runs_out(bot, clock, outbox)  # nor question 2: the round pauses
    second, paused = outbox.sent
    assert second.text.startswith("Round · question 2 of 4")
    assert paused.audience is Audience.PUBLIC and "/quiz round resume" in paused.text
    assert len(outbox.edits) == 2  # both were revealed
    assert await time_runs_out(bot, clock, outbox, 24 * 3600) == 0 and len(outbox.sent) == 2
    [resumed, third] = await bot.handle(Command("quiz", "round resume", learner("U0"), channel()))
    assert resumed.text == "Round resumed." and third.text.startswith("Round · question 3 of 4")
    await bot.message_posted(third.tag, MessageRef("slack", "C1", "q3-message"))
    await bot.handle(ChoiceMade(dont_know(third).token, learner("U1"), channel()))
    await time_runs_out(bot, clock, outbox)
    assert outbox.sent[-1].text.startswith("Round · question 4 of 4")
    [again] = await bot.handle(Command("quiz", "round resume", learner("U0"), channel()))
    assert "No paused round" in again.text


async def test_a_round_with_an_answer_in_every_second_question_never_pauses(bot, clock) -> None:
    """Silent, answered, silent, silent-but-last: never two silent questions with another to come."""
    await start_round(bot, learner("U0"))
    outbox = RecordingOutbox()
    await time_runs_out(bot, clock, outbox)  # question 1: silent
    await bot.handle(ChoiceMade(dont_know(outbox.sent[-1]).token, learner("U1"), channel()))
    await time_runs_out(bot, clock, outbox)  # question 2: answered
    await time_runs_out(bot, clock, outbox)  # question 3: silent, after an answered one
    await time_runs_out(bot, clock, outbox)  # question 4: the last
    headers = [r.text.split("\n", 1)[0] for r in outbox.sent]
    assert headers == [f"Round · question {n} of 4 · 60 s" for n in (2, 3, 4)] + ["Round over."]
    assert not any("paused" in r.text for r in outbox.sent)


async def test_a_round_started_over_a_day_ago_is_closed_at_start_up_never_resumed(bot, clock, settings,
                                                                                    caplog) -> None:
    question = await start_round(bot, learner("U0"))
    q = bot.library.questions[bot.library.lesson(None).questions[0].id]
    await bot.handle(ChoiceMade(choice_for(question, q.correct_index).token, learner("U1"), channel()))
    await bot.close()
    clock.advance(24 * 3600 + 60)  # opened again the next day
    reopened = await StudyBot.start(settings, clock)
    try:
        [note] = [r.getMessage() for r in caplog.records if "round(s)" in r.getMessage()]
        assert note == "1 round(s) started over a day ago were closed; their summary follows"
        outbox = RecordingOutbox()
        await fire_due(reopened, {"slack": outbox})
        [(ref, reveal)] = outbox.edits
        assert ref.message_id == "q1-message" and "1 answered, 1 correct" in reveal.text
        [summary] = outbox.sent
        assert summary.text.startswith("Round over after 1 of 4 questions. (It was closed because it was started "
                                       "over a day ago.)")
        assert "name-U1: 1/1" in summary.text  # out of the questions asked
        for _ in range(5):
            await time_runs_out(reopened, clock, outbox)
        assert len(outbox.sent) == 1 and await reopened.store.count("timers") == 0
        [(state,)] = await reopened.store.engine.read("SELECT state FROM rounds")
        assert state == RoundState.DONE
        started, _ = await reopened.handle(Command("quiz", "round", learner("U0"), channel()))
        assert started.text.startswith("Round started")  # the channel is free for a new round
    finally:
        await reopened.close()
        bot.ctx.store = await type(bot.store).open(settings.db_path, clock)  # let the fixture close cleanly
