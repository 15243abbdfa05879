"""cohort_report.html: the figures of `/insights` on one self-contained page, with charts.

The charts are pygal's SVG, inlined, with its script turned off; the styles are inline and the
fonts the reader's own, so the page opens from a direct-message attachment with no network.
Every chart is one series with its values printed beside the bars and a table of the same numbers
below it, so nothing is carried by colour alone, and it reads the same on a phone and on paper.
A chart fills the column: each is drawn twice, wide and narrow, and the page shows the one that
fits the screen, so that its labels read at about the page's own size on both. The printed values
stand in for the grid, which is left out: no line runs through a value. Counts and the pack's own
words only (question and key-point names, the short form of a prompt): never an answer's text.

The page's markup and styles are the Jinja2 template `templates/cohort_report.html` (autoescaped); this
module computes what fills it: the glance, the tables' rows and the charts' SVG."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache, partial
from html import escape
from typing import Any

import pygal
from jinja2 import Environment, PackageLoader, StrictUndefined, Template
from markupsafe import Markup
from pygal.style import Style

from bot.core.messages import fit
from bot.reports.cohort_figures import Figures, QuestionFigures, percent, titled

FILENAME = "cohort_report.html"  # the file sent, and its template in TEMPLATES
TEMPLATES = "templates"  # beside this module, shipped in the wheel


@dataclass(frozen=True)
class Size:
    """One drawing of the charts: its width in SVG units (the page scales it to the column) and how many
    characters of a label it shows (a cut label has the whole name as its tooltip)."""

    width: int
    label: int


WIDE = Size(720, 36)  # a screen wider than 40rem, and paper: labels read at 13 to 18 pixels
NARROW = Size(480, 24)  # a phone: labels read at about 11 pixels
FONT_SIZE = 15  # of labels and printed values, in SVG units
GLYPH = 0.65  # a character's width in ems, a little over what the usual sans-serif fonts take
MARGIN = 16
Y_LABELS = 60  # room a vertical chart keeps left of its bars for the count axis (up to four digits)
PERCENT_SPAN = 115  # a horizontal chart's axis runs to 115% so that "100%" fits beside a full bar
FONT = "system-ui, -apple-system, 'Segoe UI', Roboto, 'Helvetica Neue', Arial, sans-serif"
STYLE = Style(
    background="white", plot_background="white", foreground="#222", foreground_strong="#000",
    foreground_subtle="#888", colors=("#2f4b7c",), opacity="1", opacity_hover="1", value_colors=("#000",),
    font_family=FONT, title_font_size=18, label_font_size=FONT_SIZE, major_label_font_size=FONT_SIZE,
    value_font_size=FONT_SIZE, value_label_font_size=FONT_SIZE, no_data_font_size=18, transition="none",
)
def _static(root: Any, tips: Mapping[str, str]) -> Any:
    """pygal's SVG without its scripts (a config for its tooltips, unused), comments (its credits) or grid
    lines; a label's tooltip is its entry in `tips` (pygal's own is a number for a horizontal chart's label)."""
    for parent in list(root.iter()):
        for child in list(parent):
            if callable(child.tag) or child.tag == "script" or (
                    child.tag == "path" and "guide" in child.get("class", "").split()):
                parent.remove(child)
        label, tip = parent.find("text"), parent.find("title")
        if label is not None and tip is not None and label.text in tips:
            tip.text = tips[label.text]
    return root


def _cut(labels: Sequence[str], width: int) -> list[str]:
    """Labels cut to `width` characters, each still its own: where two would read alike cut at the end,
    their middles go instead ("core-tb1/data-par…syncs-gradients")."""
    shown = [fit(label, width) for label in labels]
    alike = {cut for cut in shown if shown.count(cut) > 1}
    head = (width - 1) // 2
    return [label[:head] + "…" + label[len(label) - (width - 1 - head):] if cut in alike and len(label) > width
            else cut for label, cut in zip(labels, shown, strict=True)]


def _text_width(labels: Iterable[str]) -> float:
    """About how wide the longest of `labels` is drawn, in SVG units."""
    return max((len(label) for label in labels), default=0) * GLYPH * FONT_SIZE


def _side_by_side(labels: Sequence[str], size: Size) -> bool:
    """Whether a vertical chart's labels fit under their bars unrotated, none touching the next."""
    room = (size.width - 2 * MARGIN - Y_LABELS) / max(len(labels), 1)
    return _text_width(fit(label, size.label) for label in labels) + FONT_SIZE / 2 <= room


def _percent_ticks(shown: Sequence[str], size: Size) -> list[int]:
    """A horizontal chart's ticks: every 25% where they fit side by side right of its labels, else every 50%."""
    bars = (size.width - 2 * MARGIN - _text_width(shown) - FONT_SIZE) * 100 / PERCENT_SPAN
    return [0, 25, 50, 75, 100] if _text_width(["100%"]) + FONT_SIZE / 2 <= bars / 4 else [0, 50, 100]


def _chart(kind: type[pygal.graph.graph.Graph], title: str, labels: Sequence[str], values: Sequence[float],
           size: Size, unit: str = "", bar_height: int = 0, tips: Sequence[str] = ()) -> str:
    """One single-series chart as inline SVG, `size` wide, its values printed, no script. Counts get
    whole-number ticks (a cohort of 3 reads 0 1 2 3, never 0.5 rounded to 1), with room above the
    highest bar for its printed value. A horizontal chart (`bar_height` per bar) cuts its labels to
    `size.label` characters, with `tips` (each label's full name) as their tooltips."""
    rows = len(labels)
    shown = _cut(labels, size.label) if bar_height else list(labels)
    if unit == "%":
        ticks = _percent_ticks(shown, size) if bar_height else [0, 25, 50, 75, 100]
        span: tuple[float, float] = (0, PERCENT_SPAN if bar_height else 100)
    else:
        ticks = count_ticks(max(values, default=0))
        span = (0, ticks[-1] + max(ticks[1] - ticks[0], 1) * 0.6)
    chart = kind(
        title=title, style=STYLE, js=[], disable_xml_declaration=True, show_legend=False, print_values=True,
        width=size.width, height=max(260, 100 + bar_height * rows) if bar_height else 340, truncate_label=size.label,
        value_formatter=lambda v: f"{v:.0f}{unit}", margin=MARGIN, spacing=6, show_x_guides=bool(bar_height),
        x_label_rotation=0 if bar_height or _side_by_side(labels, size) else 40,
        range=span, y_labels=ticks, print_zeroes=True, print_values_position="top",
    )
    chart.x_labels = shown
    chart.add(title, list(values))
    chart.add_xml_filter(partial(_static, tips=dict(zip(shown, tips, strict=False))))
    return chart.render(is_unicode=True)


def count_ticks(highest: float, most: int = 6) -> list[int]:
    """Whole-number ticks from 0 to at least `highest`, at most `most` of them, in steps of 1, 2, 5, 10, 20, …"""
    step = 1
    while -(-highest // step) > most - 1:
        step = step * 5 // 2 if str(step).startswith("2") else step * 2
    top = max(1, int(-(-highest // step))) * step
    return list(range(0, top + 1, step))


@dataclass(frozen=True)
class Table:
    """A table of the numbers; with `cards`, each row becomes a labelled card on a narrow screen."""

    head: Sequence[str]
    rows: Sequence[Sequence[object]]
    numeric: frozenset[int] = frozenset()  # the columns of numbers, set right
    cards: bool = False


def _table(head: Sequence[str], body: Iterable[Sequence[object]], numeric: Iterable[int] = (),
           cards: bool = False) -> Table:
    return Table(tuple(head), [tuple(row) for row in body], frozenset(numeric), cards)


@dataclass(frozen=True)
class Figure:
    """A chart drawn wide and narrow; the page shows the one that fits the screen."""

    anchor: str
    wide: Markup
    narrow: Markup
    horizontal: bool = False


def _figure(anchor: str, draw: Callable[[Size], str], horizontal: bool = False) -> Figure:
    return Figure(anchor, Markup(draw(WIDE)), Markup(draw(NARROW)), horizontal)  # pygal's SVG, its text escaped


def _question_row(f: QuestionFigures) -> list[object]:
    wrong = f"{f.wrong_choice[0]} ({percent(f.wrong_choice[1], f.answered)}%)" if f.wrong_choice else "–"
    missed = "; ".join(f"{name} ({n})" for name, n in f.missed) or "–"
    shares = (f"{f.share_correct}%", f"{f.share_self_graded}%") if f.answered else ("–", "–")
    partly = f.partly if f.typed and f.answered else "–"
    return [titled(f.question.id, f.question.prompt), f.question.kind, f.answered, shares[0], partly, wrong, missed,
            shares[1]]


def _hbar(anchor: str, title: str, rows: Sequence[tuple[str, float, str]]) -> Figure | None:
    """A horizontal chart of (label, percent, tooltip) rows, the first row on top; None without rows."""
    if not rows:
        return None
    bottom_up = rows[::-1]
    return _figure(anchor, partial(_chart, pygal.HorizontalBar, title, [r[0] for r in bottom_up],
                                   [r[1] for r in bottom_up], unit="%", bar_height=34,
                                   tips=[r[2] for r in bottom_up]), True)


def _bars(anchor: str, title: str, rows: Sequence[tuple[str, float]]) -> Figure | None:
    """A vertical chart of (label, count) rows; None without rows."""
    if not rows:
        return None
    return _figure(anchor, partial(_chart, pygal.Bar, title, [r[0] for r in rows], [r[1] for r in rows]))


def _questions(figures: Figures) -> dict[str, Any]:
    weakest = sorted((f for f in figures.questions if f.answered), key=lambda f: f.share_correct)
    return {
        "questions_chart": _hbar("chart-questions", "Share correct on the first answer",
                                 [(f.question.id, f.share_correct, titled(f.question.id, f.question.prompt))
                                  for f in weakest]),
        "questions_table": _table(("question", "type", "answered", "correct", "partly right",
                                   "most picked wrong choice", "most missed key points", "self-graded"),
                                  (_question_row(f) for f in figures.questions), (2, 3, 4, 7), cards=True),
    }


def _weeks(figures: Figures) -> dict[str, Any]:
    weeks = figures.weeks
    return {
        "active_chart": _bars("chart-active", "Active learners per week", [(w.week, w.active) for w in weeks]),
        "points_chart": _bars("chart-points", "Points per week", [(w.week, w.points) for w in weeks]),
        "weeks_table": _table(("week", "active learners", "points"), ((w.week, w.active, w.points) for w in weeks),
                              (1, 2)),
    }


def _scores(scores: Sequence[tuple[str, int]]) -> dict[str, Any]:
    started = sum(n for _, n in scores)
    return {
        "started": started,
        "scores_chart": _bars("chart-scores", "Learners per score band", scores) if started else None,
        "scores_table": _table(("score", "learners"), scores, (1,)),
    }


def _teachbacks(figures: Figures) -> dict[str, Any]:
    coverage = [(f"{t.prompt.id}/{key}", point, percent(n, t.attempts), n)
                for t in figures.teachbacks if t.attempts for key, point, n in t.covered]
    return {
        "teachbacks_chart": _hbar("chart-teachbacks", "Share of attempts covering each key point",
                                  [(c[0], c[2], f"{c[0]} · {c[1]}") for c in coverage]),
        "prompts_table": _table(("prompt", "attempts", "partly right", "most missed key points"),
                                ((titled(t.prompt.id, t.prompt.prompt), t.attempts, t.partly if t.attempts else "–",
                                  "; ".join(f"{p} ({n})" for p, n in t.missed) or "–") for t in figures.teachbacks),
                                (1, 2), cards=True),
        "coverage_table": _table(("prompt/key point", "key point", "covered", "attempts covering it"),
                                 ((c[0], c[1], f"{c[2]}%", c[3]) for c in coverage), (2, 3), cards=True),
    }


def _glance(figures: Figures) -> dict[str, Any]:
    s, a = figures.scope, figures.activity
    since = s.behind_since.strftime("%a %d %b")
    return {
        "glance": (("Learners", a.learners), (f"Active this week ({s.this_week})", len(a.active)),
                   ("Not started", len(a.not_started)), (f"Behind (nothing since {since})", len(a.behind))),
        "not_started": ", ".join(a.not_started), "behind": ", ".join(a.behind),
        "behind_label": f"Behind (nothing since {since})",
    }


def render(figures: Figures, scores: Sequence[tuple[str, int]], generated: datetime) -> bytes:
    """The report page: `scores` are learners per band of scores (`cohort_figures.histogram`)."""
    s = figures.scope
    page = _page().render(
        cohort=str(s.cohort), lesson=s.lesson.title if s.lesson else "every lesson", period=s.period, zone=s.zone.key,
        generated=f"{generated:%Y-%m-%d %H:%M}", **_glance(figures), **_questions(figures), **_weeks(figures),
        **_scores(scores), **_teachbacks(figures), looked_up_table=_table(("term looked up", "lookups"),
                                                                        figures.looked_up, (1,)),
        lacking_table=_table(("searched for, not in the glossary", "searches"), figures.lacking, (1,)))
    return page.encode()


def _escaped(value: object) -> object:
    """Every value escaped with the entities the page has always used (`&quot;`, `&#x27;`); Markup (a chart's
    SVG, a macro's output) as it is."""
    return value if isinstance(value, Markup) else Markup(escape(str(value)))


@lru_cache(maxsize=1)
def _page() -> Template:
    environment = Environment(loader=PackageLoader("bot.reports", TEMPLATES), autoescape=True, finalize=_escaped,
                              undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True,
                              keep_trailing_newline=True)
    return environment.get_template(FILENAME)
