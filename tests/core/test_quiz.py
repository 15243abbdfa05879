"""Private practice through StudyBot.handle, on a real SQLite file with a fixed clock."""

import asyncio
from dataclasses import replace

import pytest
from fsrs import Scheduler
from support import answer, channel, choice_for, dont_know, learner, order_numbers, with_cohort

from bot.answering.pipeline import NO_POINTS_NOTE
from bot.core.messages import Audience, ChoiceMade, Cohort, Command, MessageRef, TextSubmitted
from bot.questions.base import Arrangement
from bot.runtime.app import StudyBot
from bot.runtime.scheduler import fire_due
from bot.store.model import QUESTION, AnswerMode

pytestmark = pytest.mark.both_engines

COHORT = Cohort("slack", "T1")


async def start(bot, who):
    [reply] = await bot.handle(Command("quiz", "", who, channel()))
    return reply


def lesson(bot):
    return next(iter(bot.library.lessons.values()))


async def answer_all(bot, who, right: bool = True) -> str:
    """Walk the whole quiz, answering every question right (or wrong)."""
    reply = await start(bot, who)
    for q in lesson(bot).questions:
        assert q.prompt in reply.text
        [feedback] = await bot.handle(answer(q, reply, who, channel(), right))
        [reply] = await bot.handle(ChoiceMade(feedback.choices[-1].token, who, channel()))
    return reply.text


async def test_mc_question_has_choices_and_feedback_explains(bot) -> None:
    who = learner()
    reply = await start(bot, who)
    q = lesson(bot).questions[0]
    assert q.kind == "mc" and reply.audience is Audience.PRIVATE
    assert len(reply.choices) == len(q.choices) + 1 and reply.choices[-1].label == "I don't know"
    wrong = (q.correct_index + 1) % len(q.choices)
    [feedback] = await bot.handle(ChoiceMade(choice_for(reply, wrong).token, who, channel()))
    assert "Not quite" in feedback.text
    assert q.choices[wrong].why_wrong in feedback.text and q.explanation in feedback.text
    assert feedback.choices[-1].label == "Next question"
    assert await bot.store.count("answers") == 1


async def test_whole_quiz_ends_with_score_line(bot) -> None:
    text = await answer_all(bot, learner())
    total = len(lesson(bot).questions)
    assert f"Score: {total}/{total}" in text
    assert "/review" not in text  # nothing missed, nothing to point to


async def test_a_quiz_with_misses_ends_pointing_to_review_which_brings_them_back(bot, clock) -> None:
    who = learner()
    text = await answer_all(bot, who, right=False)
    assert text.endswith(f"Score: 0/{len(lesson(bot).questions)}\nThe ones you missed come back in "
                         f"/review {lesson(bot).id}.")
    clock.advance(3600)
    [reply] = await bot.handle(Command("review", lesson(bot).id, who, channel()))
    assert "due card" in reply.text and any(q.prompt in reply.text for q in lesson(bot).questions)


async def test_first_answer_scores_later_ones_are_practice(bot) -> None:
    """A wrong first answer is not mended by a right second one; a right first answer keeps its
    point after a wrong second one."""
    wrong_first, right_first = learner("U1"), learner("U2")
    first, second = lesson(bot).questions[0], lesson(bot).questions[3]
    for who, q, first_right in ((wrong_first, first, False), (right_first, second, True)):
        for right in (first_right, not first_right):
            prompt = await bot.store.prompts.new(QUESTION, channel(), who, lesson_id=q.lesson_id,
                                                 item_id=q.id, mode=AnswerMode.PRACTICE)
            asked = q.ask(prompt.id, "", Audience.PRIVATE, q.arrange("test"))
            [feedback] = await bot.handle(answer(q, asked, who, channel(), right))
            assert ("Correct" in feedback.text) == right
        assert NO_POINTS_NOTE in feedback.text
    assert await bot.store.count("answers") == 4
    assert await bot.store.boards.standing(wrong_first, None) is None
    assert (await bot.store.boards.standing(right_first, None)).points == 1


async def test_an_order_feedback_lists_the_steps_with_the_numbers_they_were_shown_with(bot) -> None:
    """The right order's steps, each under the number the learner saw and typed, so "The right order:
    2 4 1 3" reads against the list on screen (not renumbered 1, 2, 3, 4)."""
    who = learner()
    order = next(q for q in lesson(bot).questions if q.kind == "order")
    reply = await start(bot, who)
    while order.prompt not in reply.text:
        q = next(q for q in lesson(bot).questions if q.prompt in reply.text)
        [feedback] = await bot.handle(answer(q, reply, who, channel()))
        [reply] = await bot.handle(ChoiceMade(feedback.choices[-1].token, who, channel()))
    shown = order_numbers(order, reply.form.prompt).split()  # each step's number on screen, in the right order
    assert shown != sorted(shown)
    [feedback] = await bot.handle(answer(order, reply, who, channel(), right=False))
    listed = "\n".join(f"({number}) {step}" for number, step in zip(shown, order.steps, strict=True))
    assert f"The right order: {' '.join(shown)}\n{listed}\n" in feedback.text


async def test_same_token_twice_records_one_answer(bot) -> None:
    who = learner()
    reply = await start(bot, who)
    token = reply.choices[0].token
    await bot.handle(ChoiceMade(token, who, channel()))
    [again] = await bot.handle(ChoiceMade(reply.choices[1].token, who, channel()))
    assert "already answered" in again.text
    assert await bot.store.count("answers") == 1


async def test_fifty_concurrent_deliveries_record_one_answer_and_one_score(bot) -> None:
    who = learner()
    reply = await start(bot, who)
    q = lesson(bot).questions[0]
    token = choice_for(reply, q.correct_index).token
    await asyncio.gather(*(bot.handle(ChoiceMade(token, who, channel())) for _ in range(50)))
    assert await bot.store.count("answers") == 1
    standing = await bot.store.boards.standing(who, bot.ctx.week(COHORT))
    assert standing.points == 1


async def test_someone_elses_button_is_refused_and_records_nothing(bot) -> None:
    reply = await start(bot, learner("U1"))
    [refusal] = await bot.handle(ChoiceMade(reply.choices[0].token, learner("U2"), channel()))
    assert "someone else" in refusal.text
    assert await bot.store.count("answers") == 0


async def short_question(bot, who):
    """The lesson's first short-answer question, served to `who` in practice."""
    q = next(q for q in lesson(bot).questions if q.kind == "short")
    prompt = await bot.store.prompts.new(QUESTION, channel(), who, lesson_id=q.lesson_id, item_id=q.id,
                                         mode=AnswerMode.PRACTICE)
    return q, prompt.id


async def test_short_answer_is_graded_and_self_grade_is_recorded(bot) -> None:
    who = learner()
    q, prompt_id = await short_question(bot, who)
    attempt = "It copies everything onto each device so nothing is lost"
    [feedback] = await bot.handle(TextSubmitted(prompt_id, attempt, who, channel()))
    assert "Not yet" in feedback.text and q.model_answer in feedback.text
    got_it = next(c for c in feedback.choices if c.label == "I got it right")
    [done] = await bot.handle(ChoiceMade(got_it.token, who, channel()))
    assert "self-graded correct" in done.text
    rows = await bot.store.answers.scored(who)
    assert [(r.correct, r.self_graded) for r in rows] == [(True, True)]
    assert (await bot.store.boards.standing(who, None)).points == 1
    [again] = await bot.handle(ChoiceMade(got_it.token, who, channel()))
    assert "already" in again.text


async def test_a_list_of_terms_is_told_why_and_cannot_be_self_graded(bot) -> None:
    who = learner()
    q, prompt_id = await short_question(bot, who)
    [feedback] = await bot.handle(TextSubmitted(prompt_id, "shards, parameters, communication, memory", who,
                                                channel()))
    assert feedback.text.startswith("❌ Not yet") and "A list of terms relates none of them" in feedback.text
    assert not any(c.label == "I got it right" for c in feedback.choices)
    verdict = q.grade_text("shards, parameters, communication, memory", Arrangement.identity(0), None)
    assert (verdict.outcome, verdict.self_gradable, verdict.missing) == ("not_yet", False, None)


async def test_a_short_answer_graded_correct_gets_neither_the_model_answer_nor_self_grade_buttons(bot) -> None:
    """A right answer is told so, with what it covered and the explanation; the model answer to compare
    with and the honor system's buttons are for an answer graded wrong."""
    who = learner()
    q, prompt_id = await short_question(bot, who)
    [feedback] = await bot.handle(TextSubmitted(prompt_id, q.model_answer, who, channel()))
    assert feedback.text.startswith("✅ Graded correct") and feedback.text.endswith(q.explanation)
    assert "Model answer" not in feedback.text and "Honor system" not in feedback.text
    assert [c.label for c in feedback.choices] == ["Next question"]
    assert [(r.correct, r.self_graded) for r in await bot.store.answers.scored(who)] == [(True, False)]


async def test_empty_and_huge_answers_are_refused_and_not_stored(bot) -> None:
    who = learner()
    q, prompt_id = await short_question(bot, who)
    [empty] = await bot.handle(TextSubmitted(prompt_id, "   ", who, channel()))
    [huge] = await bot.handle(TextSubmitted(prompt_id, "x" * 100_000, who, channel()))
    assert "empty" in empty.text and "4,000" in huge.text
    assert await bot.store.count("answers") == 0
    [ok] = await bot.handle(TextSubmitted(prompt_id, q.model_answer, who, channel()))
    assert "Graded correct" in ok.text


async def test_forged_and_unknown_tokens_are_refused(bot) -> None:
    for token in ("", "nope", "nope.1", "a.b.c", "x" * 500):
        [reply] = await bot.handle(ChoiceMade(token, learner(), channel()))
        assert "no longer valid" in reply.text
    assert await bot.store.count("answers") == 0


async def test_unknown_command_and_lesson(bot) -> None:
    [r1] = await bot.handle(Command("dance", "", learner(), channel()))
    [r2] = await bot.handle(Command("quiz", "no-such-lesson", learner(), channel()))
    assert "/help" in r1.text and "No lesson" in r2.text


async def test_help_lists_commands_from_docstrings(bot) -> None:
    shown = "\n".join(r.text for r in await bot.handle(Command("help", "", learner(), channel())))
    for name in ("/quiz", "/glossary", "/teachback", "/progress", "/leaderboard", "/results", "/forget", "/language"):
        assert name in shown


async def test_a_bug_gets_a_reference_id_and_the_log_gets_the_traceback(bot, caplog, monkeypatch) -> None:
    async def broken(bot, cmd):
        raise RuntimeError("boom")

    monkeypatch.setitem(bot.commands, "progress", replace(bot.commands["progress"], handler=broken))
    [reply] = await bot.handle(Command("progress", "", learner(), channel()))
    ref = reply.text.split("reference ")[1].split(")")[0]
    assert len(ref) == 8
    assert any(ref in r.getMessage() and r.exc_info for r in caplog.records)
    assert "boom" not in reply.text


async def test_one_point_short_and_half_of_another_is_partly_right_and_names_what_is_missing(bot) -> None:
    who = learner()
    q, prompt_id = await short_question(bot, who)
    assert q.rubric.needed == 2
    [near] = await bot.handle(TextSubmitted(prompt_id, "It shards the parameters; the price is communication.",
                                            who, channel()))
    # the half point is named, with the learner's own word, and is not listed as missed; it earns no point yet
    assert near.text.startswith("◑ Partly right, no point yet: 1 of 2 key points (2 make it correct).\n"
                                "Part of \"It pays with extra communication\" is there (you wrote 'communication')")
    assert "missed" not in near.text
    q, prompt_id = await short_question(bot, who)
    [short] = await bot.handle(TextSubmitted(prompt_id, "It shards the parameters.", who, channel()))
    assert "Not yet: 1 of 2 key points (2 make it correct)" in short.text


class Posts:
    async def send(self, reply):
        self.reply = reply
        return MessageRef("slack", reply.place.channel_id, "day-1")

    async def edit(self, ref, reply):
        raise AssertionError("nothing is revealed yet")


async def asked(bot, clock, mode: str, learners) -> list:
    """The first question as each learner sees it: their own in practice and review; in a round and
    as the question of the day, the one public post that everyone answers."""
    if mode in ("quiz", "review"):
        return [(await bot.handle(Command(mode, "", who, channel())))[0] for who in learners]
    if mode == "round":
        _, post = await bot.handle(Command("quiz", "round", learner("U0"), channel()))
    else:
        clock.advance(1800)  # 09:30, the day's time
        outbox = Posts()
        assert await fire_due(bot, {"slack": outbox}) == 1
        post = outbox.reply
    return [post for _ in learners]


@pytest.mark.parametrize("mode", ["quiz", "round", "review", "daily"])
async def test_i_dont_know_is_a_first_answer_with_no_points_and_comes_back_sooner_than_a_wrong_one(
        settings, clock, mode) -> None:
    bot = await StudyBot.start(with_cohort(settings, daily={"channel": "C1", "time": "09:30"}), clock)
    bot.ctx.fsrs = Scheduler(enable_fuzzing=False)
    try:
        wrong, unsure = learner("U1"), learner("U2")
        for_wrong, for_unsure = await asked(bot, clock, mode, (wrong, unsure))
        q = lesson(bot).questions[0]
        assert q.prompt in for_unsure.text
        await bot.handle(ChoiceMade(choice_for(for_wrong, (q.correct_index + 1) % len(q.choices)).token, wrong,
                                    channel()))
        [feedback] = await bot.handle(ChoiceMade(dont_know(for_unsure).token, unsure, channel()))
        assert feedback.audience is Audience.PRIVATE and "no points" in feedback.text
        assert q.explanation in feedback.text and q.choices[q.correct_index].text in feedback.text
        rows = await bot.store.engine.read("SELECT l.user_id, a.mode, a.correct, a.scored, a.points FROM answers a"
                                           " JOIN learners l ON l.id = a.learner_id ORDER BY l.user_id")
        expected_mode = "practice" if mode == "quiz" else mode
        assert [tuple(r) for r in rows] == [("U1", expected_mode, 0, 1, 0), ("U2", expected_mode, 0, 1, 0)]
        [again] = await bot.handle(ChoiceMade(choice_for(for_unsure, q.correct_index).token, unsure, channel()))
        assert "already answered" in again.text  # the first answer stands
        [wrong_card] = await bot.store.cards.of(wrong)
        [unsure_card] = await bot.store.cards.of(unsure)
        assert unsure_card.due < wrong_card.due
        assert unsure_card.due <= clock.now()  # back at once in /review
    finally:
        await bot.close()


@pytest.mark.parametrize("typed", ["I don't know?", "I don’t know...", "idk?", "??", "No idea!"])
async def test_i_dont_know_typed_with_a_question_mark_is_i_dont_know(bot, typed) -> None:
    """On a short answer's form: recorded as "I don't know" (its card due at once), not graded."""
    who = learner()
    first = await start(bot, who)
    [feedback] = await bot.handle(answer(lesson(bot).questions[0], first, who, channel()))
    [short] = await bot.handle(ChoiceMade(feedback.choices[-1].token, who, channel()))
    assert short.form is not None
    [reply] = await bot.handle(TextSubmitted(short.form.token, typed, who, channel()))
    assert "that counts as your first answer, with no points" in reply.text
    card = next(c for c in await bot.store.cards.of(who) if c.question_id == "core-q2")
    assert card.due <= bot.ctx.clock.now()


async def test_quiz_says_which_question_of_how_many(bot) -> None:
    who = learner()
    reply = await start(bot, who)
    questions = lesson(bot).questions
    for number, q in enumerate(questions, start=1):
        assert reply.text.startswith(f"Core basics · question {number} of {len(questions)}\n")
        [feedback] = await bot.handle(answer(q, reply, who, channel()))
        [reply] = await bot.handle(ChoiceMade(feedback.choices[-1].token, who, channel()))
    assert "every question answered" in reply.text


@pytest.mark.parametrize("slip", ["x", "ok", "42", "-- !!", "it is"])
async def test_an_answer_too_short_to_grade_is_not_recorded_and_the_question_stays_open(bot, slip) -> None:
    who = learner()
    q, prompt_id = await short_question(bot, who)
    [refused] = await bot.handle(TextSubmitted(prompt_id, slip, who, channel()))
    assert "too short to grade" in refused.text and "I don't know" in refused.text
    assert await bot.store.count("answers") == 0
    [graded] = await bot.handle(TextSubmitted(prompt_id, q.model_answer, who, channel()))
    assert "Graded correct" in graded.text  # the same question, still open, scores its first real answer
    assert [r.correct for r in await bot.store.answers.scored(who)] == [True]


async def test_a_short_answer_that_states_a_key_point_is_graded(bot) -> None:
    who = learner()
    q, prompt_id = await short_question(bot, who)
    [graded] = await bot.handle(TextSubmitted(prompt_id, q.rubric.points[0].accept[0], who, channel()))
    assert "too short" not in graded.text and await bot.store.count("answers") == 1
