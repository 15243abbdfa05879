"""Write a lesson in another format: `anki` (.apkg), `gift`, `moodle-xml`; and the cohort's `gradebook`."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from bot.content.loader import check_library
from bot.content.model import Lesson
from bot.core.errors import ContentErrors, SetupError
from bot.core.suggest import did_you_mean
from bot.interchange.exporters import anki, gift, moodle_xml

WRITERS: dict[str, tuple[Callable[[Lesson], tuple[bytes, list[str]]], str]] = {
    "anki": (anki.write, ".apkg"), "gift": (gift.write, ".gift.txt"), "moodle-xml": (moodle_xml.write, ".xml"),
}


def lesson_named(content_dir: Path, name: str | None) -> Lesson:
    report = check_library(content_dir)
    if report.problems:
        raise ContentErrors(report.problems)
    lesson = report.library.lesson(name)
    if lesson is None:
        lessons = list(report.library.lessons)
        raise SetupError(f"no lesson '{(name or '')[:40]}' in {content_dir}{did_you_mean(name or '', lessons)}; "
                         f"lessons: {', '.join(lessons) or 'none'}")
    return lesson


def write_file(target: Path, data: bytes) -> None:
    """Written beside the target and renamed: a reader never sees half a file."""
    staged = target.with_name(f".{target.name}.new")
    try:
        staged.write_bytes(data)
        os.replace(staged, target)
    except OSError as exc:
        staged.unlink(missing_ok=True)
        raise SetupError(f"cannot write {target}: {exc.strerror or exc}; choose another --out") from None


def export_lesson(content_dir: Path, fmt: str, name: str | None, out: Path | None) -> int:
    lesson = lesson_named(content_dir, name)
    writer, suffix = WRITERS[fmt]
    data, left_out = writer(lesson)
    target = out or Path(f"{lesson.id}{suffix}")
    write_file(target, data)
    kept = len(lesson.questions) - len(left_out)
    terms = f" and {len(lesson.terms)} glossary terms" if fmt == "anki" else ""
    print(f"wrote {target}: {kept} question(s){terms} of lesson {lesson.id}"
          + (f"; left out {len(left_out)} that {fmt} cannot hold: {', '.join(left_out)}" if left_out else ""))
    return 0
