"""cohort_report.html in a real browser: headless Chromium with the network shut loads nothing but
the file itself, draws every chart with the expected number of bars, fits a phone's width and
prints. Measured in the page, on a wide screen and on a phone: each chart fills its column, no
printed value touches a line of the chart, and no two axis labels overlap. A screenshot is saved in
the test's tmp folder; with STUDYBOT_WRITE_DOCS=1 the README's picture (docs/insights.png) is
written too."""

from __future__ import annotations

import os
from collections import Counter
from datetime import UTC, date, datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from headless import INSTALL, Browser, binary
from simulated_cohort import simulate, start
from support import CONTENT, REPO

from bot.content.loader import load_library
from bot.core.messages import Actor, Cohort, Command, Place
from bot.reports import cohort_report
from bot.reports.cohort_figures import Activity, Figures, Scope, histogram, question_figures, teachback_figures
from bot.store.cohort_stats import QuestionCounts, TeachbackCounts, WeekCounts

needs_chromium = pytest.mark.skipif(binary() is None, reason=f"Chromium is not installed; install it with: {INSTALL}")

TEACHER = Actor("slack", "T1", "UTEACH", "Teacher", True)
DOC_PICTURE = REPO / "docs" / "insights.png"
SCREENS = ((800, False), (390, True))  # (width, mobile): a laptop's window and a phone
SHOWN = "(f => Array.from(f.querySelectorAll('svg')).find(svg => svg.getClientRects().length))"  # a figure's drawing
FIGURES = "Array.from(document.querySelectorAll('figure'))"
BARS = f"{FIGURES}.map(f => [f.id, {SHOWN}(f).querySelectorAll('rect.rect').length])"
LAYOUT = """(() => {
  const shown = el => el.getClientRects().length > 0 && getComputedStyle(el).opacity !== '0'
    && getComputedStyle(el).visibility !== 'hidden';
  // an element's box on the screen as four corners, turned with it when its label is rotated
  const corners = el => { const b = el.getBBox(), m = el.getScreenCTM();
    return [[b.x, b.y], [b.x + b.width, b.y], [b.x + b.width, b.y + b.height], [b.x, b.y + b.height]]
      .map(([x, y]) => new DOMPoint(x, y).matrixTransform(m)); };
  // two boxes are apart when one of their edges' normals separates them (the separating axis theorem)
  const apart = (p, q) => [p, q].some(box => box.some((a, i) => {
    const b = box[(i + 1) % 4], nx = a.y - b.y, ny = b.x - a.x;
    const [P, Q] = [p, q].map(s => s.map(c => c.x * nx + c.y * ny));
    return Math.max(...P) <= Math.min(...Q) || Math.max(...Q) <= Math.min(...P); }));
  const meet = (a, b) => a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom;
  const stroke = r => ({left: r.left - 1, right: r.right + 1, top: r.top - 1, bottom: r.bottom + 1});
  return Array.from(document.querySelectorAll('figure')).map(figure => {
    const svg = Array.from(figure.querySelectorAll('svg')).find(shown);
    const overlapping = axis => {
      const labels = Array.from(svg.querySelectorAll(`.axis.${axis} text`))
        .filter(t => t.textContent.trim() && shown(t));
      return labels.flatMap((a, i) => labels.slice(i + 1).filter(b => !apart(corners(a), corners(b)))
        .map(b => [a.textContent, b.textContent])); };
    const lines = Array.from(svg.querySelectorAll('path')).filter(l => shown(l) && !l.closest('.series'));
    const values = Array.from(svg.querySelectorAll('text.value')).filter(shown);
    const crosses = v => lines.some(l => meet(v.getBoundingClientRect(), stroke(l.getBoundingClientRect())));
    return {chart: figure.id, share: svg.getBoundingClientRect().width / figure.parentElement.clientWidth,
            values: values.length, lines: lines.length, x: overlapping('x'), y: overlapping('y'),
            crossed: values.filter(crosses).map(v => v.textContent)};
  });
})()"""


def outside(requests: list[str], page: Path) -> list[str]:
    """The requests a page made for anything but itself."""
    return [url for url in requests if url != page.resolve().as_uri()]


async def check_layout(browser: Browser, report: Path) -> list[dict]:
    """The report's charts as a laptop and a phone show them: each fills its column, prints its values
    clear of every line it draws (the axes; grid lines, if any), and keeps its axis labels apart."""
    measured = []
    for width, mobile in SCREENS:
        page = await browser.open(report, width=width, height=1000, mobile=mobile)
        measured += [{"screen": width, **chart} for chart in await page.evaluate(LAYOUT)]
    assert all(c["values"] and c["lines"] for c in measured), measured  # something to measure
    narrow = [(c["screen"], c["chart"], round(c["share"], 2)) for c in measured if c["share"] < 0.9]
    crossed = [(c["screen"], c["chart"], c["crossed"]) for c in measured if c["crossed"]]
    crowded = [(c["screen"], c["chart"], c["x"] + c["y"]) for c in measured if c["x"] or c["y"]]
    assert not (narrow or crossed or crowded), {"narrower than 90%": narrow, "values on a line": crossed,
                                                "labels overlapping": crowded}
    return measured


async def export_report(bot, folder: Path) -> Path:
    replies = await bot.handle(Command("insights", "export", TEACHER, Place("slack", "T1", "C1")))
    report = folder / "cohort_report.html"
    report.write_bytes(next(r.file.content for r in replies if r.file and r.file.filename == report.name))
    return report


@needs_chromium
async def test_the_report_renders_offline_with_every_chart(tmp_path) -> None:
    bot, clock = await start(tmp_path)
    try:
        sims = await simulate(bot, clock)
        report = await export_report(bot, tmp_path)
        lesson = next(iter(bot.library.lessons.values()))
        answered = {g.question_id for s in sims for g in s.first}
        explained = {p for s in sims for p, _ in s.teachbacks}
    finally:
        await bot.close()
    key_points = sum(len(p.key_points) for p in lesson.prompts if p.id in explained)
    async with Browser.launch(tmp_path) as browser:
        page = await browser.open(report, width=800, height=1000)
        assert outside(page.requests, report) == []
        assert await page.evaluate("performance.getEntriesByType('resource').length") == 0
        bars = dict(await page.evaluate(BARS))
        assert bars == {"chart-questions": len(answered), "chart-active": 3, "chart-points": 3, "chart-scores": 10,
                        "chart-teachbacks": key_points}
        assert await page.evaluate(f"{FIGURES}.filter(f => {SHOWN}(f)).length") == 5
        assert await page.evaluate("document.querySelectorAll('svg').length") == 10  # each drawn wide and narrow
        assert await page.evaluate("document.querySelectorAll('script').length") == 0
        # the weakest question's bar is drawn first from the top, with its value printed as text
        questions = f"{SHOWN}(document.getElementById('chart-questions'))"
        top = await page.evaluate(f"Array.from({questions}.querySelectorAll('.axis text'))"
                                  ".sort((a, b) => a.getBoundingClientRect().top - b.getBoundingClientRect().top)"
                                  ".map(t => t.textContent).filter(t => t.startsWith('core-'))")
        rows = await page.evaluate("Array.from(document.querySelectorAll('#questions tbody tr'))"
                                   ".map(r => r.cells[0].textContent.split(' · ')[0])")
        assert top == rows[: len(top)] and len(top) == len(answered)
        values = await page.evaluate(f"Array.from({questions}.querySelectorAll('text.value'))"
                                     ".map(t => t.textContent)")
        assert len(values) == len(answered) and all(v.endswith("%") for v in values)
        shot = await page.screenshot(tmp_path / "cohort_report.png", 800)
        assert shot.stat().st_size > 10_000
        if os.environ.get("STUDYBOT_WRITE_DOCS"):
            await page.screenshot(DOC_PICTURE, 800, 1500)
        assert (await page.pdf()).startswith(b"%PDF")

        phone = await browser.open(report, width=390, height=844, mobile=True)
        assert await phone.evaluate("document.documentElement.scrollWidth") <= 390
        await phone.screenshot(tmp_path / "cohort_report_phone.png", 390, 1600)


@needs_chromium
async def test_the_offline_check_sees_a_page_that_reaches_out(tmp_path) -> None:
    """The check above can fail: a page with an image, a style sheet and a script from the web."""
    page_file = tmp_path / "leaky.html"
    page_file.write_text('<!doctype html><link rel="stylesheet" href="https://fonts.example.com/a.css">'
                         '<img src="http://example.com/x.png"><script src="https://cdn.example.com/x.js"></script>')
    async with Browser.launch(tmp_path) as browser:
        page = await browser.open(page_file)
    assert sorted(outside(page.requests, page_file)) == ["http://example.com/x.png",
                                                         "https://cdn.example.com/x.js",
                                                         "https://fonts.example.com/a.css"]


def test_the_readmes_picture_is_small() -> None:
    """Made by the test above with STUDYBOT_WRITE_DOCS=1."""
    assert DOC_PICTURE.exists() and DOC_PICTURE.stat().st_size < 150_000


@needs_chromium
async def test_a_small_cohorts_charts_count_in_whole_numbers(tmp_path) -> None:
    """Three learners: the count charts' axes read 0 1 2 3, not 1 1 1 1 1 0 0 0 (fractional ticks
    rounded), and each chart's highest printed value stands above its top grid line's label."""
    bot, clock = await start(tmp_path)
    try:
        await simulate(bot, clock, learners=3)
        report = await export_report(bot, tmp_path)
    finally:
        await bot.close()
    async with Browser.launch(tmp_path) as browser:
        page = await browser.open(report, width=800, height=1000)
        for chart in ("chart-active", "chart-points", "chart-scores"):
            drawn = f"{SHOWN}(document.getElementById('{chart}'))"
            ticks = await page.evaluate(f"Array.from({drawn}.querySelectorAll('.axis.y text'))"
                                        ".map(t => t.textContent.trim()).filter(t => t)")
            assert ticks and all(t.isdecimal() for t in ticks), (chart, ticks)
            numbers = [int(t) for t in ticks]
            assert numbers == sorted(set(numbers)) and numbers[0] == 0, (chart, ticks)  # distinct, rising
            values = await page.evaluate(f"Array.from({drawn}.querySelectorAll('text.value'))"
                                         ".map(t => Number(t.textContent))")
            assert max(values) <= numbers[-1], (chart, values, ticks)
        await page.screenshot(tmp_path / "cohort_report_3.png", 800, 1500)
        measured = await check_layout(browser, report)
    assert {c["chart"] for c in measured} == {"chart-questions", "chart-active", "chart-points", "chart-scores",
                                              "chart-teachbacks"}


@needs_chromium
async def test_the_bundled_lessons_long_names_keep_the_charts_readable(tmp_path) -> None:
    """The bundled lesson's teach-back key points have long names ("meta-tb5/knowledge-vs-capability"):
    the teach-back chart still keeps its axis labels apart and its values clear of its lines, on a
    laptop and on a phone (three learners' made-up counts, every prompt attempted)."""
    lesson = next(iter(load_library(CONTENT).lessons.values()))
    questions = tuple(question_figures(q, QuestionCounts(q.id, 3, n % 4)) for n, q in enumerate(lesson.questions))
    teachbacks = tuple(teachback_figures(p, TeachbackCounts(p.id, 3, Counter({k.id: n % 4 for n, k in
                                                                                 enumerate(p.key_points)})))
                       for p in lesson.prompts)
    scope = Scope(Cohort("slack", "T1"), ZoneInfo("UTC"), None, None, "2026-W49", date(2026, 11, 26))
    figures = Figures(scope, Activity(3, ("Ada",), (), ("Bo",)), questions, teachbacks, (), (),
                      (WeekCounts("2026-W48", 2, 3), WeekCounts("2026-W49", 1, 2)))
    report = tmp_path / "cohort_report.html"
    report.write_bytes(cohort_report.render(figures, histogram([0, 50, 100]), datetime(2026, 12, 2, tzinfo=UTC)))
    longest = max((f"{p.id}/{k.id}" for p in lesson.prompts for k in p.key_points), key=len)
    assert len(longest) > 30  # long enough to crowd a chart's axis
    async with Browser.launch(tmp_path) as browser:
        measured = await check_layout(browser, report)
    assert [c["values"] for c in measured if c["chart"] == "chart-teachbacks"] == [
        sum(len(p.key_points) for p in lesson.prompts)] * len(SCREENS)
