"""/progress: a learner's own picture, per lesson, with this week's trend against last week's
and the key points the learner missed most (what to re-read)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import timedelta
from math import floor

from bot.answering.cards import recall
from bot.answering.schedule import outlook
from bot.content.model import Lesson
from bot.core.clock import iso_week
from bot.core.messages import Actor, Command, Reply, counted
from bot.features.tracks import next_step_line
from bot.grading.scoring import SelfGraded
from bot.kit.commands import command
from bot.kit.context import Context
from bot.kit.feature import Feature
from bot.kit.streaks import streak_line
from bot.reports.marks import graded_marks, marks_text
from bot.store.model import Card, ScoredAnswer, TeachbackCount

MISSED = 3  # key points named


def trend_line(this: tuple[int, int] | None, last: tuple[int, int] | None) -> str:
    """This week's answers (practice too) and share right, beside last week's, with the direction in words."""

    def week(counts: tuple[int, int] | None) -> str:
        if not counts:
            return "no answers"
        return f"{counted(counts[0], 'answer')}, {round(100 * counts[1] / counts[0])}% right"

    line = f"  this week: {week(this)} · last week: {week(last)}"
    if this and last:
        now, before = this[1] / this[0], last[1] / last[0]
        line += " (up)" if now > before else " (down)" if now < before else " (same)"
    return line


async def missed_most(ctx: Context, actor: Actor) -> str | None:
    """The key points the learner missed most (answers graded wrong, teach-backs), by name."""
    missed = await ctx.store.insights.missed(actor)
    named = []
    for (item, point), n in sorted(missed.items(), key=lambda kv: (-kv[1], kv[0])):
        question, prompt = ctx.library.questions.get(item), ctx.library.prompts.get(item)
        names = question.key_points() if question else {k.id: k.point for k in prompt.key_points} if prompt else {}
        if point in names:
            named.append(f"“{names[point]}” ({item}, missed {n}×)")
        if len(named) == MISSED:
            break
    return "Re-read (missed most): " + "; ".join(named) if named else None


def lesson_line(lesson: Lesson, answers: Mapping[str, ScoredAnswer], teachbacks: TeachbackCount) -> str:
    """A lesson's line: its quiz and its practice set, each answered and right; its teach-backs; and its points,
    all of them (quiz, practice set and teach-backs, as the leaderboards count them: a hinted right answer
    earns what it earned), marked alike."""
    parts = []
    for name, questions in (("quiz", lesson.questions), ("practice set", lesson.practice)):
        if questions:
            mine = [answers[q.id] for q in questions if q.id in answers]
            parts.append(f"{name} answered {len(mine)}/{len(questions)}, correct {sum(a.correct for a in mine)}")
    parts.append(f"teach-backs {teachbacks.attempts} ({counted(teachbacks.points, 'point')})")
    earned = [a for q in lesson.review_questions if (a := answers.get(q.id)) is not None and a.points]
    marks = graded_marks(sum(a.points for a in earned if a.self_graded),
                         sum(a.points for a in earned if a.instructor_graded) + teachbacks.instructor_graded)
    return f"• {lesson.title}: {'; '.join(parts)}; points {sum(a.points for a in earned) + teachbacks.points}{marks}"


@command(summary="Your progress per lesson, privately")
async def progress(ctx: Context, cmd: Command) -> list[Reply]:
    """/progress: per lesson, what you answered, got right and scored; cards due; this week's rank."""
    await ctx.store.learners.touch(cmd.actor)
    answers = {a.question_id: a for a in await ctx.store.answers.scored(cmd.actor)}
    teachbacks = await ctx.store.teachbacks.counts(cmd.actor)
    zone = ctx.zone(cmd.actor.in_cohort)
    this_week, last_week = ctx.week(cmd.actor.in_cohort), iso_week(ctx.clock.now() - timedelta(weeks=1), zone)
    trend = await ctx.store.insights.trend(cmd.actor, (this_week, last_week))
    cards = await ctx.store.cards.of(cmd.actor)
    lines = ["Your progress"]
    for lesson in ctx.library.lessons.values():
        lines.append(lesson_line(lesson, answers, teachbacks.get(lesson.id, TeachbackCount())))
        lines.append(trend_line(trend.get((lesson.id, this_week)), trend.get((lesson.id, last_week))))
        if (exam := exam_line(ctx, cmd.actor, lesson, cards)) is not None:
            lines.append(exam)
    if (reread := await missed_most(ctx, cmd.actor)) is not None:
        lines.append(reread)
    now, day_ends = ctx.clock.now(), ctx.end_of_local_day(cmd.actor.in_cohort)
    not_due = [c.state for c in cards if c.due > now]  # the cards are loaded anyway
    later = sum(1 for c in cards if now < c.due < day_ends)
    lines.append(f"Review: {counted(len(cards), 'card')}, {len(cards) - len(not_due)} due now"
                 + (f", {later} due later today" if later else "")  # as /review's header says it
                 + _recall_text(ctx, not_due, len(cards)) + " (/review)")
    policy = ctx.settings.self_graded
    mine_now = await ctx.store.boards.standing(cmd.actor, this_week, policy)
    left_out = " (self-graded points not counted)" if policy is SelfGraded.EXCLUDE else ""
    lines.append(f"This week ({this_week}, all lessons): "
                 + (f"rank {mine_now.rank}, {counted(mine_now.points, 'point')}{marks_text(mine_now, policy)}{left_out}"
                    if mine_now else "no points yet"))
    if (streak := await streak_line(ctx, cmd.actor)) is not None:
        lines.append(streak + " (/streak off hides it)")
    if (track := await next_step_line(ctx, cmd.actor)) is not None:
        lines.append(track)
    return [Reply("\n".join(lines))]


def exam_line(ctx: Context, actor: Actor, lesson: Lesson, cards: Sequence[Card]) -> str | None:
    """The lesson's exam while it is ahead: how many of the learner's cards are due before it, and their
    predicted recall on the day as things stand, beside the target that reviewing them reaches."""
    exam, now = ctx.exam(actor.in_cohort, lesson.id), ctx.clock.now()
    if exam is None or now >= exam:
        return None
    day = f"{exam.astimezone(ctx.zone(actor.in_cohort)):%a %d %b %Y}"
    questions = set(lesson.review_question_ids)
    scheduler = ctx.scheduler(actor.in_cohort)
    seen = outlook(scheduler, [c.state for c in cards if c.lesson_id == lesson.id and c.question_id in questions],
                   exam)
    if seen is None:
        return f"  exam {day}: no cards yet (/review {lesson.id})"
    target = floor(100 * scheduler.desired_retention)
    return (f"  exam {day}: {seen.due_before} of your {counted(seen.cards, 'card')} due before it; predicted recall "
            f"on the day {seen.recall:.0%} as things stand, {target}% or more once each is answered right when due "
            f"(/review {lesson.id})")


def _recall_text(ctx: Context, not_due: list[str], cards: int) -> str:
    """The predicted recall of the cards not due (fsrs reckons it by the day, so a card due now, missed
    today, would read 100%: the schedule, not the recall, says to review it)."""
    chance = recall(ctx, not_due)
    if chance is None:
        return ""
    return f"; predicted recall now {chance:.0%}" + ("" if len(not_due) == cards else
                                                     f" for the {counted(len(not_due), 'card')} not due")


FEATURE = Feature("progress", commands=(progress,))
