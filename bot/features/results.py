"""quiz_results.txt: a learner's (or a cohort's) results, written atomically and sent as a file.

Format (version 1), UTF-8 text: a header of `key: value` lines, then one block per
learner and lesson: `learner:`, `name:`, `lesson:`, `title:`, `score: N/M (P%)`,
`self-graded: K` (of the lines listed), then one tab-separated line per quiz question (quiz.yaml; the
practice set is not listed): id, type, result
(correct, wrong or unanswered), then `self-graded` when the learner graded it, or
`instructor-graded` when an instructor accepted the learner's dispute of it, or `partly-right` for a
wrong one its rubric found right in part (no point yet).
"""

from __future__ import annotations

import asyncio
import re

from bot.content.model import Lesson
from bot.core.errors import StudyError
from bot.core.messages import Actor, Attachment, Audience, Command, Reply
from bot.kit.commands import Option, command
from bot.kit.context import Context
from bot.kit.feature import Feature
from bot.reports.files import FILENAME, cohort_dir, learner_dir, write_file
from bot.store.model import ScoredAnswer

_CONTROL = re.compile(r"[\x00-\x1f\x7f\x85\u2028\u2029]")  # and the Unicode line breaks


def lesson_block(lesson: Lesson, answers: dict[str, ScoredAnswer]) -> list[str]:
    right = sum(1 for q in lesson.questions if q.id in answers and answers[q.id].correct)
    total = len(lesson.questions)
    percent = round(100 * right / total) if total else 0
    lines = [
        f"lesson: {lesson.id}",
        f"title: {lesson.title}",
        f"score: {right}/{total} ({percent}%)",
        f"self-graded: {sum(1 for q in lesson.questions if q.id in answers and answers[q.id].self_graded)}",
    ]  # of the lines below: the quiz's questions, as the score
    for q in lesson.questions:
        row = answers.get(q.id)
        result = "unanswered" if row is None else ("correct" if row.correct else "wrong")
        lines.append("\t".join([q.id, q.kind, result, *_graded_by(row)]))
    return lines


def _graded_by(row: ScoredAnswer | None) -> list[str]:
    """The marker of an answer graded otherwise than by its rubric, or of one its rubric found partly right."""
    if row is not None and row.instructor_graded:
        return ["instructor-graded"]
    if row is not None and row.self_graded:
        return ["self-graded"]
    return ["partly-right"] if row is not None and not row.correct and row.verdict == "partly" else []


async def learner_blocks(ctx: Context, learner: Actor) -> list[str]:
    answers = {a.question_id: a for a in await ctx.store.answers.scored(learner)}
    lines: list[str] = []
    for lesson in ctx.library.lessons.values():
        lines += ["", f"learner: {learner.platform}:{learner.user_id}",
                  f"name: {_CONTROL.sub(' ', learner.display_name)[:80]}"]
        lines += lesson_block(lesson, answers)
    return lines


@command(summary="Get your quiz_results.txt by direct message (here posts it in this channel)",
         options=(Option("where", "me (by DM, default), here (in this channel) or cohort (instructors)",
                         choices={"me": "", "here": "here", "cohort": "cohort"}),))
async def results(ctx: Context, cmd: Command) -> list[Reply]:
    """/results [here]: your quiz_results.txt, by direct message (or in this channel with here).
    /results cohort: the whole cohort's results file, by direct message (instructors)."""
    word = cmd.args.strip().lower()
    if word not in ("", "here", "cohort"):
        raise StudyError("Use /results, /results here or /results cohort.")
    cohort = cmd.actor.in_cohort
    now = ctx.clock.now().strftime("%Y-%m-%dT%H:%M:%SZ")
    header = ["# studybot quiz results", "format: 1", f"cohort: {cohort}", f"generated: {now}"]
    root = ctx.settings.results_dir
    if word == "cohort":
        ctx.require_instructor(cmd.actor, "export the cohort's results")
    async with ctx.files_lock(cohort):  # never beside a /forget me of this cohort: no file outlives one
        if word == "cohort":
            lines = list(header)
            for learner in await ctx.store.learners.of_cohort(cohort):
                lines += await learner_blocks(ctx, learner)
            folder = cohort_dir(root, cohort)
            note = "The cohort's results are attached."
        else:
            await ctx.store.learners.touch(cmd.actor)
            lines = header + await learner_blocks(ctx, cmd.actor)
            folder = learner_dir(root, cmd.actor)
            note = "Your results are attached."
        content = ("\n".join(lines) + "\n").encode()
        target = await asyncio.to_thread(write_file, folder, content)  # its fsync never on the event loop
    audience = Audience.PUBLIC if word == "here" else Audience.DM
    attachment = Attachment(FILENAME, content, saved_to=target)
    replies = [Reply(note, audience, file=attachment)]
    if audience is Audience.DM:
        replies.append(Reply("Sent: check your direct messages for quiz_results.txt."))
    return replies


FEATURE = Feature("results", commands=(results,))
