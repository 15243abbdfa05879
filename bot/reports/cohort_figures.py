"""The cohort at a glance, as figures: what `/insights` says and the HTML report draws.

Built from the store's counts and the lesson library (names of questions, choices and key
points). Only counts and the pack's own words: never an answer's text. Per question, the
figures are over first answers (one per learner, the one that scores); per teach-back prompt,
over every attempt. A question or prompt is named by its id and the short form of its prompt."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from zoneinfo import ZoneInfo

from bot.content.model import Lesson, TeachbackPrompt
from bot.core.clock import iso_week
from bot.core.messages import Cohort
from bot.kit.context import Context
from bot.questions.base import Question
from bot.store.cohort_stats import LearnerActivity, QuestionCounts, TeachbackCounts, WeekCounts

BEHIND_DAYS = 7  # a learner who started but did nothing in the last 7 local days (today included) is behind
TOP = 3  # key points named per question or prompt
TERMS = 5  # glossary terms and missing queries named
SHORT = 50  # characters of a prompt's short form, its ellipsis included
ESCAPED = re.compile(r"\\([!-/:-@\[-`{-~])")  # \* stays a star, \_ an underscore: ASCII punctuation, as in Markdown
MARKDOWN = (  # pattern, what is kept: the inline Markdown a prompt may hold, in the order it is undone
    (re.compile(r"^[ \t]{0,3}(?:#{1,6}[ \t]+|>[ \t]?|[-*+][ \t]+|\d{1,9}[.)][ \t]+)", re.M), ""),  # a line's mark
    (re.compile(r"!?\[([^\]]*)\]\([^)]*\)"), r"\1"),  # [text](link), ![alt](image)
    (re.compile(r"<((?:https?|mailto):[^>\s]+)>"), r"\1"),  # <https://…>
    (re.compile(r"(`+)(.+?)\1"), r"\2"),  # `code`
    (re.compile(r"(\*\*|__|~~)(?=\S)(.+?)(?<=\S)\1"), r"\2"),  # **bold**, __bold__, ~~struck~~
    (re.compile(r"(?<![\w*])([*_])(?=\S)(.+?)(?<=\S)\1(?![\w*])"), r"\2"),  # *emphasis*, _emphasis_ (not snake_case)
)


def percent(part: int, whole: int) -> int:
    """A share as a whole percentage (0 when there is nothing to share)."""
    return round(100 * part / whole) if whole else 0


def plain(markdown: str) -> str:
    """Markdown as the plain text a reader sees, on one line."""
    text = ESCAPED.sub(lambda m: f"\0{ord(m[1])}\0", markdown)
    for pattern, kept in MARKDOWN:
        text = pattern.sub(kept, text)
    return " ".join(re.sub("\0(\\d+)\0", lambda m: chr(int(m[1])), text).split())


def short_prompt(prompt: str, limit: int = SHORT) -> str:
    """A prompt's short form: plain text, cut at a word to at most `limit` characters, with an ellipsis."""
    text = plain(prompt)
    if len(text) <= limit:
        return text
    head = text[: limit - 1]
    if text[limit - 1] != " " and " " in head:
        head = head.rsplit(" ", 1)[0]
    return head.rstrip(" ,;:.!?-–—") + "…"


def titled(item_id: str, prompt: str) -> str:
    """A question or teach-back prompt as its id and the short form of its prompt: "q07 · Why is serving…"."""
    short = short_prompt(prompt)
    return f"{item_id} · {short}" if short else item_id


def most(counts: Mapping[str, int], names: Mapping[str, str], limit: int = TOP) -> tuple[tuple[str, int], ...]:
    """The most counted key points by name, ties in the pack's order; unknown ids by id."""
    order = {point: n for n, point in enumerate(names)}
    ranked = sorted((k for k, n in counts.items() if n), key=lambda k: (-counts[k], order.get(k, len(order)), k))
    return tuple((names.get(k, k), counts[k]) for k in ranked[:limit])


@dataclass(frozen=True)
class Scope:
    cohort: Cohort
    zone: ZoneInfo
    lesson: Lesson | None  # None: every lesson
    week: str | None  # the week the per-question figures cover; None: all time
    this_week: str
    behind_since: date  # the first local day of the last BEHIND_DAYS

    @property
    def period(self) -> str:
        return f"week {self.week}" if self.week else "all time"


@dataclass(frozen=True)
class Activity:
    learners: int
    active: tuple[str, ...]  # display names (or user ids), alphabetical
    not_started: tuple[str, ...]
    behind: tuple[str, ...]


@dataclass(frozen=True)
class QuestionFigures:
    question: Question
    answered: int
    correct: int
    self_graded: int
    wrong_choice: tuple[str, int] | None  # the most picked wrong choice's text and count (multiple choice)
    missed: tuple[tuple[str, int], ...]  # the most missed key points by name (short answers)
    partly: int = 0  # first answers the rubric reads as partly right (no point from it)
    hinted: int = 0  # first answers given after a hint
    hints: int = 0  # the hints those answers took

    @property
    def typed(self) -> bool:
        """Whether the question is answered in words (graded on key points: correct, partly right or not yet)."""
        return bool(self.question.key_points())

    @property
    def share_correct(self) -> int:
        return percent(self.correct, self.answered)

    @property
    def share_self_graded(self) -> int:
        return percent(self.self_graded, self.answered)


@dataclass(frozen=True)
class TeachbackFigures:
    prompt: TeachbackPrompt
    attempts: int
    missed: tuple[tuple[str, int], ...]  # the most missed key points by name
    covered: tuple[tuple[str, str, int], ...]  # each key point (id, name) in pack order, with the attempts covering it
    partly: int = 0  # attempts the rubric read as partly right


@dataclass(frozen=True)
class Figures:
    scope: Scope
    activity: Activity
    questions: tuple[QuestionFigures, ...]  # the weakest first; unanswered last
    teachbacks: tuple[TeachbackFigures, ...]
    looked_up: tuple[tuple[str, int], ...]  # glossary terms found, most looked up first
    lacking: tuple[tuple[str, int], ...]  # queries the glossary has no term for
    weeks: tuple[WeekCounts, ...]  # every week from the first with activity to this one (gathered for the report)


def scope(ctx: Context, cohort: Cohort, lesson: Lesson | None, all_time: bool) -> Scope:
    zone = ctx.zone(cohort)
    today = ctx.clock.now().astimezone(zone).date()
    this_week = iso_week(ctx.clock.now(), zone)
    return Scope(cohort, zone, lesson, None if all_time else this_week, this_week,
                 today - timedelta(days=BEHIND_DAYS - 1))


def activity(rows: Iterable[LearnerActivity], scope: Scope) -> Activity:
    since = datetime.combine(scope.behind_since, time(0), scope.zone)
    learners = list(rows)

    def names(which: Iterable[LearnerActivity]) -> tuple[str, ...]:
        return tuple(sorted((r.display_name or r.user_id for r in which), key=str.lower))

    return Activity(len(learners), names(r for r in learners if r.this_week),
                    names(r for r in learners if r.last is None),
                    names(r for r in learners if r.last is not None and r.last < since))


def question_figures(question: Question, counts: QuestionCounts | None) -> QuestionFigures:
    counts = counts or QuestionCounts(question.id)
    items = question.items()
    wrong = None
    if counts.wrong_choices:
        index, n = min(counts.wrong_choices.items(), key=lambda kv: (-kv[1], kv[0]))
        wrong = (items[index] if index < len(items) else f"choice {index + 1}", n)
    return QuestionFigures(question, counts.answered, counts.correct, counts.self_graded, wrong,
                           most(counts.missed, question.key_points()), counts.partly, counts.hinted, counts.hints)


def teachback_figures(prompt: TeachbackPrompt, counts: TeachbackCounts) -> TeachbackFigures:
    names = {k.id: k.point for k in prompt.key_points}
    return TeachbackFigures(prompt, counts.attempts, most(counts.missed, names),
                            tuple((k, point, counts.covered.get(k, 0)) for k, point in names.items()), counts.partly)


def weeks_between(first: str, last: str) -> list[str]:
    """Every ISO week name from `first` to `last`, both included."""
    day = date.fromisocalendar(int(first[:4]), int(first[6:]), 1)
    end = date.fromisocalendar(int(last[:4]), int(last[6:]), 1)
    names = []
    while day <= end:
        year, week, _ = day.isocalendar()
        names.append(f"{year}-W{week:02d}")
        day += timedelta(weeks=1)
    return names


def every_week(counts: Iterable[WeekCounts], this_week: str) -> tuple[WeekCounts, ...]:
    """The weeks with activity, the quiet weeks between them filled in, up to this week."""
    found = {w.week: w for w in counts}
    if not found:
        return ()
    return tuple(found.get(w, WeekCounts(w, 0, 0)) for w in weeks_between(min(found), max(this_week, max(found))))


async def gather(ctx: Context, cohort: Cohort, lesson: Lesson | None = None, all_time: bool = True, *,
                 weekly: bool = False) -> Figures:
    """The figures of one cohort (only that cohort's learners), for one lesson or all, this week or all time;
    the weeks only with `weekly` (the report draws them, the chat reply does not)."""
    where = scope(ctx, cohort, lesson, all_time)
    lesson_id = lesson.id if lesson else None
    store = ctx.store.insights
    lessons = [lesson] if lesson else list(ctx.library.lessons.values())
    by_question = {c.question_id: c for c in await store.questions(cohort, lesson_id, where.week)}
    questions = [question_figures(q, by_question.get(q.id)) for les in lessons for q in les.questions]
    questions.sort(key=lambda f: (f.answered == 0, f.share_correct))
    by_prompt = {c.prompt_id: c for c in await store.teachbacks(cohort, lesson_id, where.week)}
    teachbacks = [teachback_figures(p, by_prompt.get(p.id, TeachbackCounts(p.id))) for les in lessons
                  for p in les.prompts]
    found = await store.lookups(cohort, True, where.week, TERMS if lesson is None else len(ctx.library.terms))
    if lesson is not None:  # lookups are counted by term, so a lesson's are those of its own terms
        own = {term.term for term in lesson.terms}
        found = [(name, n) for name, n in found if name in own][:TERMS]
    return Figures(
        where,
        activity(await store.activity(cohort, where.this_week, lesson_id), where),
        tuple(questions),
        tuple(teachbacks),
        tuple(found),
        tuple(await store.lookups(cohort, False, where.week, TERMS)),
        every_week(await store.weeks(cohort, lesson_id), where.this_week) if weekly else (),
    )


def score_shares(correct: Mapping[str, int], questions: int) -> list[int]:
    """Each learner's score as a percentage of the questions in scope, from their correct first answers."""
    return [percent(n, questions) for n in correct.values()]


def histogram(shares: Iterable[int], width: int = 10) -> list[tuple[str, int]]:
    """Learners per band of scores: 0–9%, 10–19%, … 90–100% (100% goes in the last band)."""
    bands = Counter(min(s // width, 100 // width - 1) for s in shares)
    top = 100 // width
    return [(f"{n * width}–{n * width + width - 1 if n < top - 1 else 100}%", bands.get(n, 0)) for n in range(top)]
