"""/insights: an instructor's view of their own cohort: who is active, who has not started and
who has fallen behind; per question what the cohort gets wrong; per teach-back what it leaves
out; which glossary terms it looks up. `/insights export` sends the same as a CSV of answers and
a self-contained HTML report, by direct message, and the gradebook CSVs for Canvas and Moodle when the
config maps the cohort's learners to their LMS ids (`cohorts.<id>.gradebook`).

Only counts, names of learners, and the pack's own words: answer texts stay in /audit."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime
from functools import partial
from pathlib import Path

from bot.content.model import Library
from bot.core.errors import StudyError
from bot.core.messages import MAX_TEXT, Actor, Attachment, Audience, Command, Reply, counted, fit
from bot.kit.commands import Option, command
from bot.kit.context import Context
from bot.kit.feature import Feature
from bot.reports import cohort_csv, cohort_report, files, gradebook
from bot.reports.cohort_figures import (
    Figures,
    QuestionFigures,
    TeachbackFigures,
    gather,
    histogram,
    percent,
    score_shares,
    titled,
)
from bot.store.cohort_stats import AnswerSummary

NAMED = 10  # learners named per list before "and N more"
QUOTED = 50  # characters of a choice's text
POINTER = "Every figure, with charts: /insights export (by direct message: cohort_answers.csv, cohort_report.html)."
CUT = "… (cut to fit the chat)"
MESSAGES = 3  # the most messages one /insights reply takes
USAGE = "Use /insights [lesson] [week|all], or /insights export for the files."


def _names(names: tuple[str, ...]) -> str:
    shown = ", ".join(" ".join(n.split())[:40] for n in names[:NAMED])
    return shown + (f" and {len(names) - NAMED} more" if len(names) > NAMED else "")


def _quote(text: str) -> str:
    text = " ".join(text.split())
    return f"“{text if len(text) <= QUOTED else text[:QUOTED].rstrip() + '…'}”"


def _counted(items: tuple[tuple[str, int], ...]) -> str:
    return ", ".join(f"{name} ({n})" for name, n in items)


def question_line(f: QuestionFigures) -> str:
    head = f"• {titled(f.question.id, f.question.prompt)} ({f.question.kind}): "
    if not f.answered:
        return head + "no answers yet"
    line = (head + f"{f.answered} answered, {f.share_correct}% correct, {f.share_self_graded}% self-graded")
    if f.typed:
        line += f", {f.partly} partly right"
    if f.wrong_choice:
        line += f"; most picked wrong: {_quote(f.wrong_choice[0])} {percent(f.wrong_choice[1], f.answered)}%"
    if f.missed:
        line += f"; most missed: {_counted(f.missed)}"
    if f.hinted:
        line += f"; {f.hinted} took hints ({counted(f.hints, 'hint')})"
    return line


def teachback_line(t: TeachbackFigures) -> str:
    line = f"• {titled(t.prompt.id, t.prompt.prompt)}: {counted(t.attempts, 'attempt')}"
    line += f", {t.partly} partly right" if t.attempts else ""
    return line + (f"; most missed: {_counted(t.missed)}" if t.missed else "")


def overview(figures: Figures, declared: list[str] | None = None) -> list[str]:
    """The lines of /insights, in order of importance (the reply is cut from the end); `declared`, the
    lines other features add (confidently missed questions), come after the questions."""
    s, a = figures.scope, figures.activity
    since = s.behind_since.strftime("%a %d %b")
    lines = [
        f"Insights · {s.cohort} · {s.lesson.id if s.lesson else 'every lesson'} · {s.period}",
        f"Learners: {a.learners} · active this week ({s.this_week}): {len(a.active)} · not started: "
        f"{len(a.not_started)} · behind (nothing since {since}, {s.zone.key}): {len(a.behind)}",
    ]
    if a.not_started:
        lines.append(f"Not started: {_names(a.not_started)}")
    if a.behind:
        lines.append(f"Behind: {_names(a.behind)}")
    lines.append("Questions, weakest first (first answers):")
    lines += [question_line(f) for f in figures.questions] or ["• none in this lesson"]
    lines += declared or []
    if figures.teachbacks:
        lines.append("Teach-backs:")
        lines += [teachback_line(t) for t in figures.teachbacks]
    lines.append(f"Glossary: looked up most: {_counted(figures.looked_up) or 'none yet'}; "
                 f"searched for but missing: {_counted(figures.lacking) or 'none'}")
    return lines


def fit_messages(lines: list[str], last: str, limit: int = MAX_TEXT, most: int = MESSAGES) -> list[str]:
    """The lines in at most `most` messages of `limit` characters, split at lines, with `last` after them;
    what does not fit is cut at a line, and said so."""
    packed = _packed([*lines, last], limit)
    if len(packed) > most:
        kept = packed[: most - 1]
        rest = lines[sum(len(message) for message in kept):]
        packed = [*kept, [*_packed(rest, limit - len(CUT) - len(last) - 2)[0], CUT, last]]
    return ["\n".join(message) for message in packed]


def _packed(lines: list[str], limit: int) -> list[list[str]]:
    """The lines in order, in messages of at most `limit` characters (a longer line cut to fit one)."""
    messages: list[list[str]] = [[]]
    size = -1  # the length of the message so far, its line breaks included
    for line in (fit(line, limit) for line in lines):
        if messages[-1] and size + 1 + len(line) > limit:
            messages.append([])
            size = -1
        messages[-1].append(line)
        size += 1 + len(line)
    return messages


def _scope(words: list[str]) -> tuple[str | None, bool]:
    all_time = True
    if words and words[-1].lower() in ("week", "all"):
        all_time = words.pop().lower() == "all"
    return " ".join(words) or None, all_time


@dataclass(frozen=True)
class Made:
    """One file of an export: its name, content and the line that goes with it."""

    name: str
    data: bytes
    note: str


def _made(figures: Figures, learners: list[Actor], summaries: Iterator[AnswerSummary], *, library: Library,
          mapping: Mapping[str, str], now: datetime) -> list[Made]:
    """The export's files, built beside the reads of the cohort's answers (`Insights.built`): off the event
    loop, the answers streamed into the CSV (kept only for the gradebooks, with a map of LMS ids)."""
    correct: Counter[str] = Counter()  # per learner who answered: their correct first answers
    kept: list[AnswerSummary] = []

    def counted(table: Iterator[cohort_csv.Row]) -> Iterator[cohort_csv.Row]:
        for row in table:
            if row.answer:
                correct[row.learner.user_id] += row.answer.correct
                if mapping:
                    kept.append(row.answer)
            yield row

    answers = cohort_csv.encode(counted(cohort_csv.rows(learners, summaries, library)))
    scores = histogram(score_shares(correct, sum(len(les.questions) for les in library.lessons.values())))
    made = [Made(cohort_csv.FILENAME, answers, "one row per learner and question."),
            Made(cohort_report.FILENAME, cohort_report.render(figures, scores, now),
                 "the cohort at a glance, with charts; it opens with no network.")]
    if mapping:  # the gradebooks for Canvas and Moodle, with the config's map of learners to LMS ids
        for lms in gradebook.LMS:
            book = gradebook.build(lms, learners, kept, library, mapping)
            left_out = f"; {len(book.unmapped)} learner(s) without an LMS id left out" if book.unmapped else ""
            made.append(Made(gradebook.FILENAMES[lms], book.data,
                             f"one column per lesson, {book.learners} learner(s){left_out}."))
    return made


def _saved(folder: Path, made: list[Made]) -> list[Path]:
    return [files.write_file(folder, m.data, m.name) for m in made]


async def export(ctx: Context, cmd: Command) -> list[Reply]:
    """The cohort's files by direct message. Everything that grows with the cohort runs off the event loop:
    the files built beside the reads of a connection of their own, then written on a worker thread."""
    cohort = cmd.actor.in_cohort
    figures = await gather(ctx, cohort, weekly=True)
    mapping, now = ctx.settings.cohort(cohort).gradebook, ctx.clock.now()
    made = await ctx.store.insights.built(cohort, partial(_made, figures, library=ctx.library, mapping=mapping,
                                                          now=now))
    async with ctx.files_lock(cohort):  # beside the cohort's results file, so /forget me deletes them too
        saved = await asyncio.to_thread(_saved, files.cohort_dir(ctx.settings.results_dir, cohort), made)
    replies = [Reply(f"{m.name}: {m.note}", Audience.DM, file=Attachment(m.name, m.data, saved_to=at))
               for m, at in zip(made, saved, strict=True)]
    hint = "" if mapping else (f" For gradebook files (Canvas, Moodle), map learners to their LMS ids under "
                               f"cohorts.{cohort.id}.gradebook in the config.")
    return [*replies, Reply(f"Sent: check your direct messages for {', '.join(m.name for m in made)}.{hint}")]


@command(summary="The cohort at a glance: who is behind, what it misses (instructors)",
         options=(Option("action", "view (privately, default) or export (a CSV and an HTML report by DM)",
                         choices={"view": "", "export": "export"}),
                  Option("lesson", "lesson id (leave empty for every lesson)"),
                  Option("period", "week (this week) or all (all time, default)", choices={"week": "week", "all": ""})))
async def insights(ctx: Context, cmd: Command) -> list[Reply]:
    """/insights [lesson] [week|all]: the cohort at a glance, privately: who is behind, what it misses (instructors).
    /insights export: cohort_answers.csv, cohort_report.html and the LMS gradebooks, by direct message (instructors)."""
    ctx.require_instructor(cmd.actor, "see the cohort's insights")
    words = cmd.args.split()
    if words and words[0].lower() == "export":
        if len(words) > 1:
            raise StudyError("/insights export sends the whole cohort's files; type nothing after export.")
        return await export(ctx, cmd)
    name, all_time = _scope(words)
    if name and name.lower() in ("week", "all"):
        raise StudyError(USAGE)
    lesson = ctx.lesson(name) if name else None
    figures = await gather(ctx, cmd.actor.in_cohort, lesson, all_time)
    declared = [line for lines in ctx.declared.insights
                for line in await lines(ctx, cmd.actor.in_cohort, lesson.id if lesson else None, figures.scope.week)]
    return [Reply(text) for text in fit_messages(overview(figures, declared), POINTER)]


FEATURE = Feature("insights", commands=(insights,))
