"""`studybot export gradebook canvas|moodle --cohort platform:id`: the cohort's scores from the database."""

from __future__ import annotations

from pathlib import Path

from bot.content.loader import check_library
from bot.core.clock import SystemClock
from bot.core.config import Settings
from bot.core.errors import ContentErrors, SetupError, StoreUnavailable
from bot.core.messages import Cohort
from bot.interchange.exporters import write_file
from bot.reports import gradebook
from bot.store import Store


def cohort_of(text: str | None) -> Cohort:
    platform, _, cohort_id = (text or "").partition(":")
    if not platform or not cohort_id:
        raise SetupError("say which cohort with --cohort platform:id, such as --cohort slack:T0001 or "
                         "--cohort console:console")
    return Cohort(platform, cohort_id)


async def export_gradebook(settings: Settings, cohort_text: str | None, lms: str | None, out: Path | None) -> int:
    if lms not in gradebook.LMS:
        raise SetupError(f"say which gradebook: studybot export gradebook {'|'.join(gradebook.LMS)} --cohort ...")
    cohort = cohort_of(cohort_text)
    if not settings.database_url and not settings.db_path.exists():
        raise StoreUnavailable(f"the database {settings.db_path} does not exist; set STUDYBOT_DB to studybot's "
                               "database")
    report = check_library(settings.content_dir)
    if report.problems:
        raise ContentErrors(report.problems)
    store = await Store.open(settings.database, SystemClock())
    try:
        learners = await store.learners.of_cohort(cohort)
        answers = await store.insights.summaries(cohort)
    finally:
        await store.close()
    book = gradebook.build(lms, learners, answers, report.library, settings.cohort(cohort).gradebook)
    target = out or Path(gradebook.FILENAMES[lms])
    write_file(target, book.data)
    print(f"wrote {target}: {book.learners} learner(s), {len(report.library.lessons)} lesson column(s)")
    if book.unmapped:
        print(f"left out {len(book.unmapped)} learner(s) without a gradebook id (set cohorts.{cohort.id}.gradebook in "
              f"{settings.config_source}): {', '.join(book.unmapped[:20])}")
    return 0
