"""cohort_report.html: the figures of `/insights` on one self-contained page, with charts.

The charts are pygal's SVG, inlined, with its script turned off; the styles are inline and the
fonts the reader's own, so the page opens from a direct-message attachment with no network.
Every chart is one series with its values printed beside the bars and a table of the same numbers
below it, so nothing is carried by colour alone, and it reads the same on a phone and on paper.
A chart fills the column: each is drawn twice, wide and narrow, and the page shows the one that
fits the screen, so that its labels read at about the page's own size on both. The printed values
stand in for the grid, which is left out: no line runs through a value. Counts and the pack's own
words only (question and key-point names, the short form of a prompt): never an answer's text."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import partial
from html import escape
from typing import Any

import pygal
from pygal.style import Style

from bot.core.messages import fit
from bot.reports.cohort_figures import Figures, QuestionFigures, percent, titled

FILENAME = "cohort_report.html"


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
PAGE_CSS = """
body{margin:0;font:16px/1.5 system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;color:#111;background:#fff}
main{max-width:56rem;margin:0 auto;padding:1rem}
h1{font-size:1.6rem;margin:.2rem 0}h2{font-size:1.25rem;margin:1.6rem 0 .4rem;border-bottom:2px solid #222}
.meta{color:#333;margin:0 0 1rem}
.glance{display:grid;grid-template-columns:repeat(auto-fit,minmax(9rem,1fr));gap:.5rem;margin:0;padding:0}
.glance div{border:2px solid #222;padding:.4rem .6rem}.glance dt{font-size:.9rem}.glance dd{margin:0;font-size:1.6rem;
font-weight:700}
figure{margin:.5rem 0}svg{display:block;width:100%;height:auto}.narrow{display:none}
@media (max-width:40rem){.wide{display:none}.narrow{display:block}}
figure text.value{transform:translateY(-5px)}.hbar text.value{text-anchor:start;transform:translateX(4px)}
.scroll{overflow-x:auto}table{border-collapse:collapse;width:100%;font-size:.95rem}
th,td{border:1px solid #999;padding:.25rem .45rem;text-align:left;vertical-align:top}th{background:#eee}
td.n{text-align:right;white-space:nowrap}
@media (max-width:40rem){.cards table,.cards tbody,.cards tr,.cards td{display:block}.cards thead{display:none}
.cards tr{border:1px solid #999;margin:0 0 .5rem}.cards td{border:0;border-top:1px solid #ddd;text-align:left}
.cards td::before{content:attr(data-label) ": ";font-weight:700}}
@media print{main{max-width:none;padding:0}section,figure,tr{break-inside:avoid}h2{break-after:avoid}
.scroll{overflow:visible}}
"""


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


def _table(head: Sequence[str], body: Iterable[Sequence[object]], numeric: Iterable[int] = (),
           cards: bool = False) -> str:
    """A table of the numbers; with `cards`, each row becomes a labelled card on a narrow screen."""
    right = set(numeric)

    def cell(i: int, value: object) -> str:
        kind = ' class="n"' if i in right else ""
        return f'<td{kind} data-label="{escape(head[i])}">{escape(str(value))}</td>'

    rows = "".join("<tr>" + "".join(cell(i, v) for i, v in enumerate(row)) + "</tr>" for row in body)
    heads = "".join(f"<th>{escape(h)}</th>" for h in head)
    return (f'<div class="scroll{" cards" if cards else ""}"><table><thead><tr>{heads}</tr></thead>'
            f"<tbody>{rows}</tbody></table></div>")


def _names(label: str, names: Sequence[str]) -> str:
    return f"<p><strong>{escape(label)}:</strong> {escape(', '.join(names))}</p>" if names else ""


def _question_row(f: QuestionFigures) -> list[object]:
    wrong = f"{f.wrong_choice[0]} ({percent(f.wrong_choice[1], f.answered)}%)" if f.wrong_choice else "–"
    missed = "; ".join(f"{name} ({n})" for name, n in f.missed) or "–"
    shares = (f"{f.share_correct}%", f"{f.share_self_graded}%") if f.answered else ("–", "–")
    return [titled(f.question.id, f.question.prompt), f.question.kind, f.answered, shares[0], wrong, missed, shares[1]]


def _section(anchor: str, title: str, *parts: str) -> str:
    return f'<section id="{anchor}"><h2>{escape(title)}</h2>{"".join(parts)}</section>'


def _figure(anchor: str, draw: Callable[[Size], str], horizontal: bool = False) -> str:
    """A chart drawn wide and narrow; the page shows the one that fits the screen."""
    kind = ' class="hbar"' if horizontal else ""
    return (f'<figure id="{anchor}"{kind}><div class="wide">{draw(WIDE)}</div>'
            f'<div class="narrow">{draw(NARROW)}</div></figure>')


def render(figures: Figures, scores: Sequence[tuple[str, int]], generated: datetime) -> bytes:
    """The report page: `scores` are learners per band of scores (`cohort_figures.histogram`)."""
    s, a = figures.scope, figures.activity
    lesson = s.lesson.title if s.lesson else "every lesson"
    since = s.behind_since.strftime("%a %d %b")
    glance = "".join(f"<div><dt>{escape(k)}</dt><dd>{v}</dd></div>" for k, v in (
        ("Learners", a.learners), (f"Active this week ({s.this_week})", len(a.active)),
        ("Not started", len(a.not_started)), (f"Behind (nothing since {since})", len(a.behind))))
    answered = [f for f in figures.questions if f.answered]
    weakest = sorted(answered, key=lambda f: f.share_correct)
    questions = _section(
        "questions", "Share correct per question (first answers, weakest first)",
        _figure("chart-questions", partial(_chart, pygal.HorizontalBar, "Share correct on the first answer",
                                           [f.question.id for f in weakest][::-1],
                                           [f.share_correct for f in weakest][::-1], unit="%", bar_height=34,
                                           tips=[titled(f.question.id, f.question.prompt) for f in weakest][::-1]),
                True)
        if weakest else "<p>No answers yet.</p>",
        _table(("question", "type", "answered", "correct", "most picked wrong choice", "most missed key points",
                "self-graded"), (_question_row(f) for f in figures.questions), (2, 3, 6), cards=True))
    weeks = figures.weeks
    weekly = _section(
        "weeks", "Weekly active learners and points",
        _figure("chart-active", partial(_chart, pygal.Bar, "Active learners per week", [w.week for w in weeks],
                                        [w.active for w in weeks])) if weeks else "<p>No activity yet.</p>",
        _figure("chart-points", partial(_chart, pygal.Bar, "Points per week", [w.week for w in weeks],
                                        [w.points for w in weeks])) if weeks else "",
        _table(("week", "active learners", "points"), ((w.week, w.active, w.points) for w in weeks), (1, 2)))
    started = sum(n for _, n in scores)
    distribution = _section(
        "scores", f"Distribution of learners' scores ({started} learners who started)",
        _figure("chart-scores", partial(_chart, pygal.Bar, "Learners per score band", [b for b, _ in scores],
                                        [n for _, n in scores])) if started else "<p>No learner has started.</p>",
        _table(("score", "learners"), scores, (1,)))
    coverage = [(f"{t.prompt.id}/{key}", point, percent(n, t.attempts), n)
                for t in figures.teachbacks if t.attempts for key, point, n in t.covered]
    teachbacks = _section(
        "teachbacks", "Teach-back coverage per key point",
        _figure("chart-teachbacks", partial(_chart, pygal.HorizontalBar, "Share of attempts covering each key point",
                                            [c[0] for c in coverage][::-1], [c[2] for c in coverage][::-1], unit="%",
                                            bar_height=34, tips=[f"{c[0]} · {c[1]}" for c in coverage][::-1]), True)
        if coverage else "<p>No teach-back attempts yet.</p>",
        _table(("prompt", "attempts", "most missed key points"),
               ((titled(t.prompt.id, t.prompt.prompt), t.attempts, "; ".join(f"{p} ({n})" for p, n in t.missed) or "–")
                for t in figures.teachbacks),
               (1,), cards=True),
        _table(("prompt/key point", "key point", "covered", "attempts covering it"),
               ((c[0], c[1], f"{c[2]}%", c[3]) for c in coverage), (2, 3), cards=True))
    glossary = _section(
        "glossary", "Glossary lookups (counts only)",
        _table(("term looked up", "lookups"), figures.looked_up, (1,)),
        _table(("searched for, not in the glossary", "searches"), figures.lacking, (1,)))
    body = (f"<h1>Cohort report</h1><p class=\"meta\">Cohort {escape(str(s.cohort))} · {escape(lesson)} · "
            f"{escape(s.period)} · time zone {escape(s.zone.key)} · generated {generated:%Y-%m-%d %H:%M} UTC</p>"
            + _section("glance", "At a glance", f'<dl class="glance">{glance}</dl>',
                       _names("Not started", a.not_started), _names(f"Behind (nothing since {since})", a.behind))
            + questions + weekly + distribution + teachbacks + glossary)
    return ("<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            f"<title>Cohort report · {escape(str(s.cohort))}</title><style>{PAGE_CSS}</style></head>"
            f"<body><main>{body}</main></body></html>\n").encode()
