"""/quiz: the learner's next unanswered question of a lesson, privately (the practice mode, whose
Next asks the one after), and after the last one the self-score summary. Answering itself, in
every mode, is `bot.answering`; `/quiz round` is declared by rounds."""

from __future__ import annotations

from bot.answering.asking import ask
from bot.content.model import Lesson
from bot.core.messages import Actor, Audience, Command, Place, Reply
from bot.kit.commands import Option, command
from bot.kit.context import Context, Mode
from bot.kit.feature import Feature
from bot.store.model import QUESTION, AnswerMode


@command(summary="Practise the next question privately, or start a public round",
         options=(Option("mode", "practice (private, default), round (public, in this channel), stop or resume a round",
                         choices={"practice": "", "round": "round", "stop": "round stop", "resume": "round resume"}),
                  Option("lesson", "lesson id"),
                  Option("set", "the round's questions: the lesson's quiz (default) or its practice set",
                         choices={"quiz": "", "practice": "practice"}),
                  Option("questions", "how many questions the round asks (default: all)", number=(1, 100)),
                  Option("seconds", "seconds per question in the round", prefix="seconds:", number=(5, 3600))))
async def quiz(ctx: Context, cmd: Command) -> list[Reply]:
    """/quiz [lesson]: practise privately, one question at a time.
    /quiz round [lesson] [practice] [N] [seconds:S]: a public round in this channel, of the quiz or its practice set.
    /quiz round stop: end this channel's round now (its starter or an instructor).
    /quiz round resume: go on with a paused round (its starter or an instructor)."""
    return await next_question(ctx, cmd.actor, cmd.place, ctx.lesson(" ".join(cmd.args.split())))


async def next_question(ctx: Context, actor: Actor, place: Place, lesson: Lesson) -> list[Reply]:
    answered = await ctx.store.answers.answered(actor, lesson.id)
    remaining = [q for q in lesson.questions if q.id not in answered]
    if not remaining:
        return [await summary(ctx, actor, lesson)]
    question = remaining[0]
    number = lesson.questions.index(question) + 1
    prompt = await ctx.store.prompts.new(QUESTION, place, actor, lesson_id=question.lesson_id,
                                         item_id=question.id, mode=AnswerMode.PRACTICE)
    header = f"{lesson.title} · question {number} of {len(lesson.questions)}"
    return [ask(ctx, question, prompt, header, Audience.PRIVATE)]


async def summary(ctx: Context, actor: Actor, lesson: Lesson) -> Reply:
    scored = {a.question_id: a for a in await ctx.store.answers.scored(actor, lesson.id)}
    right = sum(1 for q in lesson.questions if q.id in scored and scored[q.id].correct)
    self_graded = sum(1 for q in lesson.questions if q.id in scored and scored[q.id].self_graded)  # as the results file
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


MODE = Mode(AnswerMode.PRACTICE, next=next_question)

FEATURE = Feature("quiz", commands=(quiz,), modes=(MODE,))
