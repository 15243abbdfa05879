"""Review settings on the console: a cohort's daily limit of new cards and its exam, as a learner meets them."""

import io
from pathlib import Path

from support import CORE_PACK

from adapters.console import ConsoleChat
from bot.content.loader import load_library
from bot.core.clock import FixedClock
from bot.core.config import Settings
from bot.runtime.app import StudyBot


async def test_one_new_card_a_day_and_an_exam_ahead_on_the_console(tmp_path: Path) -> None:
    """One new card a day: the second /review says today's are used up; /progress names the exam day, the cards
    due before it and the predicted recall on the day; the next day brings the next new card."""
    lesson = next(iter(load_library(CORE_PACK).lessons.values()))
    mc = lesson.questions[0]
    settings = Settings(db_path=tmp_path / "bot.db", content_dir=CORE_PACK, results_dir=tmp_path / "results")
    review = {"desired_retention": 0.9, "new_cards_per_day": 1, "exam": "2026-12-20"}
    settings = settings.with_config({"cohorts": {"local": {"platform": "console", "timezone": "Europe/Berlin",
                                                           "review": review}}})
    clock = FixedClock("2026-11-30T08:00:00+00:00")
    bot = await StudyBot.start(settings, clock)
    out = io.StringIO()
    chat = ConsoleChat(bot, out)
    seen = 0

    async def typed(line: str) -> str:
        nonlocal seen
        await chat.line(line)
        printed, seen = out.getvalue()[seen:], len(out.getvalue())
        return printed

    try:
        asked = await typed("/review")
        assert asked.startswith("Review · new card · none due now · Core basics\n") and mc.prompt in asked
        right = mc.choices[mc.correct_index].text
        assert "✅" in await typed(next(line[0] for line in asked.splitlines() if line.endswith(right)))
        assert (await typed("/review")).startswith("Nothing is due in Core basics right now, and today's new cards "
                                                   "are used up (1 a day in this cohort): more tomorrow.")
        progress = await typed("/progress")
        assert ("  exam Sun 20 Dec 2026: 1 of your 1 card due before it; predicted recall on the day "
                in progress)
        assert "as things stand, 90% or more once each is answered right when due (/review core-basics)" in progress
        clock.advance(16 * 3600)  # midnight in Berlin: a new day there
        assert (await typed("/review")).startswith("Review · new card · none due now · Core basics\n")
    finally:
        await bot.close()
