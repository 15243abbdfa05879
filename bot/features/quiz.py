"""Answering questions, in practice, rounds and review alike; /quiz serves the learner's next
unanswered question privately, and after the last one the self-score summary."""

from __future__ import annotations

from fsrs import Rating

from bot.content.model import Lesson
from bot.core.errors import StoreBusy, StudyError
from bot.core.messages import Actor, Audience, Choice, ChoiceMade, Command, Place, Reply, TextSubmitted
from bot.features import disputes, review, rounds
from bot.features.asking import arrangement
from bot.grading.honor import real_attempt
from bot.questions.base import DONT_KNOW, OPEN_FORM, Question, Verdict, says_dont_know
from bot.runtime.commands import Option, command
from bot.runtime.context import Context
from bot.runtime.feature import Feature
from bot.store.model import AnswerMode, Disputed, Outcome, Prompt, PromptKind, Typed

SELF_GRADES = {  # choice suffix: (label, rating for the review schedule)
    "1": ("I got it right", Rating.Good),
    "h": ("Right, but it was hard", Rating.Hard),
    "0": ("I missed it", Rating.Again),
}
NO_POINTS_NOTE = "(No points this time: only your first answer to a question scores.)"  # every mode alike
FOLLOWED = (AnswerMode.PRACTICE, AnswerMode.REVIEW)  # modes whose feedback offers the next question


@command(summary="Practise the next question privately, or start a public round",
         options=(Option("mode", "practice (private, default), round (public, in this channel), stop or resume a round",
                         choices={"practice": "", "round": "round", "stop": "round stop", "resume": "round resume"}),
                  Option("lesson", "lesson id"),
                  Option("set", "the round's questions: the lesson's quiz (default) or its practice set",
                         choices={"quiz": "", "practice": rounds.PRACTICE}),
                  Option("questions", "how many questions the round asks (default: all)", number=(1, 100)),
                  Option("seconds", "seconds per question in the round", prefix="seconds:", number=(5, 3600))))
async def quiz(ctx: Context, cmd: Command) -> list[Reply]:
    """/quiz [lesson]: practise privately, one question at a time.
    /quiz round [lesson] [practice] [N] [seconds:S]: a public round in this channel, of the quiz or its practice set.
    /quiz round stop: end this channel's round now (its starter or an instructor).
    /quiz round resume: go on with a paused round (its starter or an instructor)."""
    words = cmd.args.split()
    if words and words[0].lower() == "round":
        return await rounds.round_command(ctx, cmd, words[1:])
    name = " ".join(words)
    round_words = any(rounds.looks_like_number(w) or w.lower().startswith("seconds") or w.lower() == rounds.PRACTICE
                      for w in words)
    if round_words and ctx.library.lesson(name) is None:
        raise StudyError(f"A number of questions, seconds and the practice set are for a round. {rounds.USAGE}")
    return await next_question(ctx, cmd.actor, cmd.place, ctx.lesson(name))


async def next_question(ctx: Context, actor: Actor, place: Place, lesson: Lesson) -> list[Reply]:
    answered = await ctx.store.answers.answered(actor, lesson.id)
    remaining = [q for q in lesson.questions if q.id not in answered]
    if not remaining:
        return [await summary(ctx, actor, lesson)]
    question = remaining[0]
    number = lesson.questions.index(question) + 1
    prompt = await ctx.store.prompts.new(PromptKind.QUESTION, place, actor, lesson_id=question.lesson_id,
                                         item_id=question.id, mode=AnswerMode.PRACTICE)
    header = f"{lesson.title} · question {number} of {len(lesson.questions)}"
    return [question.ask(prompt.id, header, Audience.PRIVATE, arrangement(question, prompt))]


async def on_choice(ctx: Context, event: ChoiceMade, prompt: Prompt, suffix: str) -> list[Reply]:
    if suffix == rounds.NEXT:  # moves a round on, even past a question a reload removed
        return await rounds.on_next(ctx, event, prompt)
    question = ctx.question(prompt.item_id)
    if suffix == OPEN_FORM:
        if prompt.closed or await ctx.store.prompts.is_closed(prompt.id):  # maybe by another process
            raise StudyError("That question has ended. Watch for the next one.")
        return [question.ask(prompt.id, "", Audience.PRIVATE, arrangement(question, prompt))]
    if suffix == DONT_KNOW:
        return await _answered(ctx, event, prompt, question, _dont_know(question, prompt))
    verdict = question.grade_choice(suffix, arrangement(question, prompt))
    if verdict is None:
        raise StudyError("That button is no longer valid. Use /quiz for a fresh question.")
    return await _answered(ctx, event, prompt, question, verdict)


async def on_text(ctx: Context, event: TextSubmitted, prompt: Prompt) -> list[Reply]:
    question = ctx.question(prompt.item_id)
    if says_dont_know(event.text):
        return await _answered(ctx, event, prompt, question, _dont_know(question, prompt))
    verdict = question.grade_text(event.text, arrangement(question, prompt), ctx.synonyms(question.lesson_id))
    if verdict is None:
        raise StudyError("That question takes a button, not text. Use /quiz for a fresh one.")
    return await _answered(ctx, event, prompt, question, verdict)


def _dont_know(question: Question, prompt: Prompt) -> Verdict:
    return Verdict(False, tuple(question.answer_lines(arrangement(question, prompt))), dont_know=True)


async def _dont_know_note(ctx: Context, actor: Actor, question: Question, mode: AnswerMode | None,
                          first_answer: bool) -> str:
    """What "I don't know" did: it scores only as a first answer, and its card is due at once
    (`review.card_review`); in a review, when it comes back (`review.comes_back`)."""
    said = "🤷 Fair enough: that counts as your first answer, with no points." if first_answer else "🤷 Fair enough."
    if mode is AnswerMode.REVIEW:
        return f"{said} {await review.comes_back(ctx, actor, question)}"
    return f"{said} This question comes back soon in /review."


async def _answered(ctx: Context, event: ChoiceMade | TextSubmitted, prompt: Prompt, question: Question,
                    verdict: Verdict) -> list[Reply]:
    """Record a graded answer (and rate its card) in one transaction, then give feedback."""
    rating = review.rating_for(verdict.correct, question.quick_is_easy, ctx.clock.now() - prompt.created_at)
    typed = Typed(event.text, verdict.matched, verdict.missed) if isinstance(event, TextSubmitted) else None
    recorded = await ctx.store.answers.record(
        prompt.id, event.actor, lesson_id=question.lesson_id, question_id=question.id,
        mode=prompt.mode or AnswerMode.PRACTICE, correct=verdict.correct, week=ctx.week(event.actor.in_cohort),
        choice=verdict.choice, rate=review.card_review(ctx, event.actor, question, rating, due_now=verdict.dont_know),
        typed=None if verdict.dont_know else typed,
    )
    if recorded.outcome is not Outcome.RECORDED:
        return [_not_recorded(recorded.outcome)]
    lines = [*verdict.lines, question.explanation]
    if verdict.dont_know:
        lines.insert(0, await _dont_know_note(ctx, event.actor, question, prompt.mode, recorded.scored))
    if not recorded.scored:
        lines.append(NO_POINTS_NOTE)
    self_grades: tuple[Choice, ...] = ()
    attempted = typed is not None and not verdict.dont_know and real_attempt(typed.text, question.prompt,
                                                                             verdict.matched,
                                                   ctx.synonyms(question.lesson_id))
    if verdict.dont_know:
        pass
    elif verdict.self_gradable and not attempted:
        lines.append("Write your answer in a sentence or two to grade yourself: "
                     "this one says too little to claim it was right.")
    elif verdict.self_gradable:
        lines.append("Honor system: compare with the model answer and grade yourself.")
        grade_id = await _follow_up(ctx, PromptKind.SELF_GRADE, event, lesson_id=question.lesson_id,
                                    item_id=question.id, mode=prompt.mode,
                                    data={"answer": recorded.answer_id, "card": recorded.card_before})
        if grade_id is not None:
            self_grades = tuple(Choice(label, f"{grade_id}.{key}") for key, (label, _) in SELF_GRADES.items())
    if typed is not None and question.kind == "short" and not verdict.correct and not verdict.dont_know:
        self_grades += await disputes.ask_choice(ctx, event, Disputed.ANSWER, recorded.answer_id or 0,
                                                 question.lesson_id, question.id)
    return [await _feedback(ctx, event, prompt, "\n".join(lines), self_grades)]


async def on_self_grade(ctx: Context, event: ChoiceMade, prompt: Prompt, suffix: str) -> list[Reply]:
    """The learner's own grade replaces the rubric's: its points and its review rating, at once."""
    if suffix not in SELF_GRADES:
        raise StudyError("That button is no longer valid.")
    question = ctx.question(prompt.item_id)
    rating = SELF_GRADES[suffix][1]
    outcome = await ctx.store.answers.self_grade(
        int(prompt.data["answer"]), suffix != "0", prompt_id=prompt.id, actor=event.actor, question_id=question.id,
        lesson_id=question.lesson_id, rate=review.card_review(ctx, event.actor, question, rating),
        card_before=prompt.data.get("card"),
    )
    if outcome is Outcome.ALREADY:
        return [Reply("You already graded yourself on this answer.")]
    if outcome is Outcome.SETTLED:
        return [Reply("Your instructor graded this answer (your dispute was accepted); their grade stands.")]
    if outcome is not Outcome.RECORDED:
        raise StudyError("That answer is no longer stored.")
    verdict = "correct" if suffix != "0" else "not correct"
    return [await _feedback(ctx, event, prompt, f"Recorded: self-graded {verdict}. Your results file shows it "
                                                "as self-graded.")]


async def on_next(ctx: Context, event: ChoiceMade, prompt: Prompt, suffix: str) -> list[Reply]:
    lesson = ctx.lesson(prompt.lesson_id)
    if prompt.mode is AnswerMode.REVIEW:
        return await review.next_card(ctx, event.actor, event.place, lesson)
    return await next_question(ctx, event.actor, event.place, lesson)


async def summary(ctx: Context, actor: Actor, lesson: Lesson) -> Reply:
    scored = {a.question_id: a for a in await ctx.store.answers.scored(actor, lesson.id)}
    right = sum(1 for q in lesson.questions if q.id in scored and scored[q.id].correct)
    self_graded = sum(1 for a in scored.values() if a.self_graded)
    marks = " ".join(
        f"{n}{'✓' if scored[q.id].correct else '✗'}" if q.id in scored else f"{n}·"
        for n, q in enumerate(lesson.questions, start=1)
    )
    missed = any(q.id in scored and not scored[q.id].correct for q in lesson.questions)
    return Reply(
        f"{lesson.title}: every question answered.\n{marks}\n"
        f"Self-graded answers: {self_graded}. /results sends your quiz_results.txt.\n"
        f"Score: {right}/{len(lesson.questions)}"
        # every answer rated its question's card, so each one missed is in the lesson's review
        + (f"\nThe ones you missed come back in /review {lesson.id}." if missed else "")
    )


async def _feedback(ctx: Context, event: ChoiceMade | TextSubmitted, prompt: Prompt, text: str,
                    choices: tuple[Choice, ...] = ()) -> Reply:
    """Private feedback; in practice and review it offers the next question too."""
    if prompt.mode in FOLLOWED:
        next_id = await _follow_up(ctx, PromptKind.NEXT, event, lesson_id=prompt.lesson_id, mode=prompt.mode)
        choices += (Choice("Next question", f"{next_id}.0"),) if next_id else ()
    return Reply(text, Audience.PRIVATE, choices=choices)


async def _follow_up(ctx: Context, kind: PromptKind, event: ChoiceMade | TextSubmitted, *, lesson_id: str | None,
                     item_id: str | None = None, mode: AnswerMode | None = None,
                     data: dict[str, object] | None = None) -> str | None:
    """A prompt for a follow-up button, or None when the store is busy: the answer is already
    saved, so the feedback goes out without that button rather than as "nothing was recorded"."""
    try:
        prompt = await ctx.store.prompts.new(kind, event.place, event.actor, lesson_id=lesson_id, item_id=item_id,
                                             mode=mode, data=data)
    except StoreBusy:
        return None
    return prompt.id


def _not_recorded(outcome: Outcome) -> Reply:
    if outcome is Outcome.ALREADY:
        return Reply("You already answered this question; your first answer stands.")
    return Reply("That question has ended, so the answer was not recorded. Use /quiz for a fresh one.")


FEATURE = Feature(
    "quiz", commands=(quiz,),
    choices={PromptKind.QUESTION: on_choice, PromptKind.NEXT: on_next, PromptKind.SELF_GRADE: on_self_grade},
    forms={PromptKind.QUESTION: on_text},
)
