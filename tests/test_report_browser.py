"""cohort_report.html in a real browser: headless Chromium with the network shut loads nothing but
the file itself, draws every chart with the expected number of bars, fits a phone's width and
prints. A screenshot is saved in the test's tmp folder; with STUDYBOT_WRITE_DOCS=1 the README's
picture (docs/insights.png) is written too."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from headless import INSTALL, Browser, binary
from simulated_cohort import simulate, start
from support import REPO

from bot.core.messages import Actor, Command, Place

needs_chromium = pytest.mark.skipif(binary() is None, reason=f"Chromium is not installed; install it with: {INSTALL}")

TEACHER = Actor("slack", "T1", "UTEACH", "Teacher", True)
DOC_PICTURE = REPO / "docs" / "insights.png"
BARS = "Array.from(document.querySelectorAll('figure')).map(f => [f.id, f.querySelectorAll('rect.rect').length])"


def outside(requests: list[str], page: Path) -> list[str]:
    """The requests a page made for anything but itself."""
    return [url for url in requests if url != page.resolve().as_uri()]


@needs_chromium
async def test_the_report_renders_offline_with_every_chart(tmp_path) -> None:
    bot, clock = await start(tmp_path)
    try:
        sims = await simulate(bot, clock)
        replies = await bot.handle(Command("insights", "export", TEACHER, Place("slack", "T1", "C1")))
        report = tmp_path / "cohort_report.html"
        report.write_bytes(next(r.file.content for r in replies if r.file and r.file.filename == report.name))
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
        assert await page.evaluate("document.querySelectorAll('svg').length") == 5
        assert await page.evaluate("document.querySelectorAll('script').length") == 0
        # the weakest question's bar is drawn first from the top, with its value printed as text
        top = await page.evaluate("Array.from(document.querySelectorAll('#chart-questions .axis text'))"
                                  ".sort((a, b) => a.getBoundingClientRect().top - b.getBoundingClientRect().top)"
                                  ".map(t => t.textContent).filter(t => t.startsWith('core-'))")
        rows = await page.evaluate("Array.from(document.querySelectorAll('#questions tbody tr'))"
                                   ".map(r => r.cells[0].textContent)")
        assert top == rows[: len(top)] and len(top) == len(answered)
        values = await page.evaluate("Array.from(document.querySelectorAll('#chart-questions text.value'))"
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
        replies = await bot.handle(Command("insights", "export", TEACHER, Place("slack", "T1", "C1")))
        report = tmp_path / "cohort_report.html"
        report.write_bytes(next(r.file.content for r in replies if r.file and r.file.filename == report.name))
    finally:
        await bot.close()
    async with Browser.launch(tmp_path) as browser:
        page = await browser.open(report, width=800, height=1000)
        for chart in ("chart-active", "chart-points", "chart-scores"):
            ticks = await page.evaluate(f"Array.from(document.querySelectorAll('#{chart} .axis.y text'))"
                                        ".map(t => t.textContent.trim()).filter(t => t)")
            assert ticks and all(t.isdecimal() for t in ticks), (chart, ticks)
            numbers = [int(t) for t in ticks]
            assert numbers == sorted(set(numbers)) and numbers[0] == 0, (chart, ticks)  # distinct, rising
            values = await page.evaluate(f"Array.from(document.querySelectorAll('#{chart} text.value'))"
                                         ".map(t => Number(t.textContent))")
            assert max(values) <= numbers[-1], (chart, values, ticks)
        await page.screenshot(tmp_path / "cohort_report_3.png", 800, 1500)
