"""Private practice: /quiz serves the learner's next unanswered question, grades it and
explains; after the last question comes the self-score summary."""

from __future__ import annotations

from typing import TYPE_CHECKING

from fsrs import Rating

from bot import review, rounds
from bot.asking import LETTERS, OPEN_FORM, answer_form, ask
from bot.content import Lesson, Question
from bot.errors import StoreBusy, StudyError
from bot.grading import grade
from bot.messages import (
    Actor,
    Audience,
    Choice,
    ChoiceMade,
    Command,
    Place,
    Reply,
    TextSubmitted,
)
from bot.store import PromptRow

if TYPE_CHECKING:
    from bot.app import StudyBot

SELF_GRADES = {  # choice suffix: (label, rating for the review schedule)
    "1": ("I got it right", Rating.Good),
    "h": ("Right, but it was hard", Rating.Hard),
    "0": ("I missed it", Rating.Again),
}


async def quiz_command(bot: StudyBot, cmd: Command) -> list[Reply]:
    """/quiz [lesson]: practise privately, one question at a time.
    /quiz round [lesson]: a public round in this channel; everyone may answer once."""
    words = cmd.args.split()
    if words and words[0].lower() == "round":
        return await rounds.start_round(bot, cmd, " ".join(words[1:]))
    lesson = bot.lesson(" ".join(words))
    return await next_question(bot, cmd.actor, cmd.place, lesson)


async def next_question(bot: StudyBot, actor: Actor, place: Place, lesson: Lesson) -> list[Reply]:
    answered = await bot.store.answered_questions(actor, lesson.id)
    remaining = [q for q in lesson.questions if q.id not in answered]
    if not remaining:
        return [await summary(bot, actor, lesson)]
    question = remaining[0]
    number = lesson.questions.index(question) + 1
    prompt_id = await bot.store.new_prompt(
        "question", place, actor, lesson_id=lesson.id, item_id=question.id, mode="practice"
    )
    header = f"{lesson.title} · question {number} of {len(lesson.questions)}"
    return [ask(question, prompt_id, header, Audience.PRIVATE)]


async def on_choice(bot: StudyBot, event: ChoiceMade, prompt: PromptRow, suffix: str) -> list[Reply]:
    question = _question(bot, prompt)
    if suffix == OPEN_FORM:
        if prompt.closed:
            raise StudyError("That question has ended. Watch for the next one.")
        return [Reply(question.prompt, form=answer_form(question, prompt.id))]
    if suffix == rounds.NEXT:
        return await rounds.on_next(bot, event, prompt)
    if suffix not in [str(i) for i in range(len(question.choices))]:  # only the indexes we issued
        raise StudyError("That button is no longer valid. Use /quiz for a fresh question.")
    index = int(suffix)
    correct = index == question.correct_index
    rating = review.rating_for(correct, question.type, bot.clock.now() - prompt.created_at)
    recorded = await bot.store.record_answer(
        prompt.id, event.actor, lesson_id=question.lesson_id, question_id=question.id,
        mode=prompt.mode or "practice", correct=correct, week=bot.week(event.actor.cohort), choice=index,
        review=review.card_review(bot, event.actor, question, rating),
    )
    if recorded.status != "recorded":
        return [_not_recorded(recorded.status)]
    lines = ["✅ Correct." if correct else f"❌ Not quite. You chose {LETTERS[index]}: "
             + question.choices[index].why_wrong]
    if not correct:
        right = question.correct_index
        lines.append(f"The answer is {LETTERS[right]}. {question.choices[right].text}")
    lines.append(question.explanation)
    if not recorded.scored:
        lines.append("(Practice: your first answer to this question is the one that counts.)")
    return [await _feedback(bot, event, prompt, "\n".join(lines))]


async def on_text(bot: StudyBot, event: TextSubmitted, prompt: PromptRow) -> list[Reply]:
    question = _question(bot, prompt)
    if question.rubric is None:
        raise StudyError("That question takes a button, not text. Use /quiz for a fresh one.")
    result = grade(question.rubric, event.text)
    rating = review.rating_for(result.correct, question.type, bot.clock.now() - prompt.created_at)
    recorded = await bot.store.record_answer(
        prompt.id, event.actor, lesson_id=question.lesson_id, question_id=question.id,
        mode=prompt.mode or "practice", correct=result.correct, week=bot.week(event.actor.cohort),
        review=review.card_review(bot, event.actor, question, rating),
    )
    if recorded.status != "recorded":
        return [_not_recorded(recorded.status)]
    points = {p.id: p.point for p in question.rubric.points}
    verdict = "✅ Graded correct" if result.correct else "❌ Not yet"
    lines = [f"{verdict}: {len(result.matched)} of {len(points)} key points "
             f"(needed {question.rubric.needed})."]
    lines += [f"✓ {points[k]}" for k in result.matched]
    lines += [f"✗ {points[k]}" + (" (stated as a misconception)" if k in result.voided else "") for k in result.missed]
    lines.append(f"Model answer: {question.model_answer}")
    if not recorded.scored:
        lines.append("(Practice: your first answer to this question is the one that counts.)")
    lines.append("Honor system: compare with the model answer and grade yourself.")
    grade_id = await _follow_up(bot, "selfgrade", event, lesson_id=question.lesson_id, item_id=question.id,
                                mode=prompt.mode, data={"answer": recorded.answer_id, "card": recorded.card_before})
    self_grades = () if grade_id is None else tuple(
        Choice(label, f"{grade_id}.{key}") for key, (label, _) in SELF_GRADES.items())
    return [await _feedback(bot, event, prompt, "\n".join(lines), self_grades)]


async def on_self_grade(bot: StudyBot, event: ChoiceMade, prompt: PromptRow, suffix: str) -> list[Reply]:
    if suffix not in SELF_GRADES:
        raise StudyError("That button is no longer valid.")
    if not await bot.store.spend(prompt.id, event.actor):
        return [Reply("You already graded yourself on this answer.")]
    correct = suffix != "0"
    if not await bot.store.self_grade(int(prompt.data["answer"]), correct):
        raise StudyError("That answer is no longer stored.")
    # the learner's own grade replaces the rubric's in the review schedule too
    question = _question(bot, prompt)
    await review.rate(bot, event.actor, question, SELF_GRADES[suffix][1], base=prompt.data.get("card") or "")
    verdict = "correct" if correct else "not correct"
    return [await _feedback(bot, event, prompt, f"Recorded: self-graded {verdict}. Your results file shows it "
                                                "as self-graded.")]


async def on_next(bot: StudyBot, event: ChoiceMade, prompt: PromptRow, suffix: str) -> list[Reply]:
    lesson = bot.lesson(prompt.lesson_id)
    if prompt.mode == "review":
        return await review.next_card(bot, event.actor, event.place, lesson)
    return await next_question(bot, event.actor, event.place, lesson)


async def summary(bot: StudyBot, actor: Actor, lesson: Lesson) -> Reply:
    learner = await bot.store.find_learner(actor)
    rows = {r.question_id: r for r in await bot.store.scored_answers(learner, lesson.id)} if learner else {}
    right = sum(1 for q in lesson.questions if q.id in rows and rows[q.id].correct)
    self_graded = sum(1 for r in rows.values() if r.self_graded)
    marks = " ".join(
        f"{n}{'✓' if rows[q.id].correct else '✗'}" if q.id in rows else f"{n}·"
        for n, q in enumerate(lesson.questions, start=1)
    )
    total = len(lesson.questions)
    return Reply(
        f"{lesson.title}: every question answered.\n{marks}\n"
        f"Self-graded answers: {self_graded}. /results sends your quiz_results.txt.\n"
        f"Score: {right}/{total}"
    )


async def _feedback(bot: StudyBot, event: ChoiceMade | TextSubmitted, prompt: PromptRow, text: str,
                    choices: tuple[Choice, ...] = ()) -> Reply:
    """Private feedback; in practice it offers the next question too."""
    if prompt.mode in ("practice", "review"):
        next_id = await _follow_up(bot, "next", event, lesson_id=prompt.lesson_id, mode=prompt.mode)
        choices += (Choice("Next question", f"{next_id}.0"),) if next_id else ()
    return Reply(text, Audience.PRIVATE, choices=choices)


async def _follow_up(bot: StudyBot, kind: str, event: ChoiceMade | TextSubmitted, **fields: object) -> str | None:
    """A prompt for a follow-up button, or None when the store is busy: the answer is already
    saved, so the feedback goes out without that button rather than as "nothing was recorded"."""
    try:
        return await bot.store.new_prompt(kind, event.place, event.actor, **fields)
    except StoreBusy:
        return None


def _not_recorded(status: str) -> Reply:
    if status == "already":
        return Reply("You already answered this question; your first answer stands.")
    return Reply("That question has ended, so the answer was not recorded. Use /quiz for a fresh one.")


def _question(bot: StudyBot, prompt: PromptRow) -> Question:
    question = bot.library.questions.get(prompt.item_id or "")
    if question is None:
        raise StudyError("That question is no longer in the lesson. Use /quiz for a fresh one.")
    return question
