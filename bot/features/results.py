"""quiz_results.txt: a learner's (or a cohort's) results, written atomically and sent as a file.

Format (version 1), UTF-8 text: a header of `key: value` lines, then one block per
learner and lesson: `learner:`, `name:`, `lesson:`, `title:`, `score: N/M (P%)`,
`self-graded: K` (of the lines listed), then one tab-separated line per quiz question (quiz.yaml; the
practice set is not listed): id, type, result
(correct, wrong or unanswered), then `self-graded` when the learner graded it, or
`instructor-graded` when an instructor accepted the learner's dispute of it.
"""

from __future__ import annotations

import errno
import hashlib
import os
import re
import shutil
import tempfile
from pathlib import Path

from bot.content.model import Lesson
from bot.core.errors import SetupError, StudyError
from bot.core.messages import Actor, Attachment, Audience, Cohort, Command, Reply
from bot.runtime.commands import Option, command
from bot.runtime.context import Context
from bot.runtime.feature import Feature
from bot.store.model import ScoredAnswer

FILENAME = "quiz_results.txt"
COHORT_FOLDER = "@cohort"  # after the platform; '@' is escaped in every id, so no learner's folder is named so
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")
_CONTROL = re.compile(r"[\x00-\x1f\x7f\x85\u2028\u2029]")  # and the Unicode line breaks
LONGEST = 64  # characters of a path component
FULL = (errno.ENOSPC, errno.EDQUOT)


def _safe(part: str) -> str:
    """A path component that names one id only: characters outside [A-Za-z0-9_-] are written as
    %XX of their UTF-8 bytes (so "a.b" and "a_b" stay apart), and a long id keeps a hash of itself."""
    safe = _UNSAFE.sub(lambda m: "".join(f"%{b:02X}" for b in m.group().encode()), part) or "%"
    if len(safe) > LONGEST:
        safe = safe[: LONGEST - 13] + "~" + hashlib.sha256(part.encode()).hexdigest()[:12]
    return safe


def learner_dir(root: Path, actor: Actor) -> Path:
    return root / _safe(actor.cohort) / f"{_safe(actor.platform)}-{_safe(actor.user_id)}"


def cohort_dir(root: Path, cohort: Cohort) -> Path:
    return root / _safe(cohort.id) / f"{_safe(cohort.platform)}{COHORT_FOLDER}"


def write_atomically(folder: Path, content: bytes, filename: str = FILENAME) -> Path:
    """`content` as `folder/filename`, whole or not at all (a temporary file, then a rename)."""
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / filename
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{filename}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(content)
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return target


def write_file(folder: Path, content: bytes, filename: str = FILENAME) -> Path:
    """write_atomically, with a full disk told to the learner rather than reported as a bug."""
    what = "your results file" if filename == FILENAME else filename
    try:
        return write_atomically(folder, content, filename)
    except OSError as exc:
        if exc.errno in FULL:
            raise StudyError(f"The disk is full, so {what} could not be written. Try again later; "
                             "tell your instructor if it keeps happening.") from exc
        raise


def check_folder(root: Path) -> Path:
    """The results folder, made if missing and proven writable (a file written and removed);
    SetupError, one line, when it cannot be."""
    try:
        root.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=root, prefix=".studybot-check."):
            pass
    except OSError as exc:
        raise SetupError(f"STUDYBOT_RESULTS_DIR: cannot write results files in {root} ({exc.strerror}); make it "
                         "writable by this user, or set STUDYBOT_RESULTS_DIR to a folder that is") from exc
    return root


def delete_files(root: Path, actor: Actor) -> None:
    """A learner's results files, and the cohort's export, which lists them too."""
    shutil.rmtree(learner_dir(root, actor), ignore_errors=True)
    shutil.rmtree(cohort_dir(root, actor.in_cohort), ignore_errors=True)


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
    """The marker of an answer graded otherwise than by its rubric."""
    if row is not None and row.instructor_graded:
        return ["instructor-graded"]
    return ["self-graded"] if row is not None and row.self_graded else []


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
        target = write_file(folder, content)
    audience = Audience.PUBLIC if word == "here" else Audience.DM
    attachment = Attachment(FILENAME, content, saved_to=target)
    replies = [Reply(note, audience, file=attachment)]
    if audience is Audience.DM:
        replies.append(Reply("Sent: check your direct messages for quiz_results.txt."))
    return replies


FEATURE = Feature("results", commands=(results,))
