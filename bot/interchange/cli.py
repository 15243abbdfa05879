"""The `studybot import` and `studybot export` subcommands: their arguments, and what each runs
(`adapters/cli_interchange.py` declares them). The readers and writers are imported when one runs,
so that every other command starts without them."""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path

from bot.core.config import Settings
from bot.core.errors import SetupError
from bot.interchange.model import CARD_TARGETS, EXPORT_FORMATS, IMPORT_FORMATS, Found, ImportRefused, printable


def import_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("files", nargs="+", type=Path, metavar="FILE",
                   help="GIFT, Moodle XML, Anki .apkg/.colpkg, QTI (XML or zip), CSV/TSV flashcards")
    p.add_argument("--pack", required=True, type=Path, help="the pack folder to write, such as content/biology")
    p.add_argument("--format", choices=IMPORT_FORMATS, help="the files' format (default: found from each file)")
    p.add_argument("--cards", choices=CARD_TARGETS, default="glossary",
                   help="flashcards become glossary terms (default) or practice questions")
    how = p.add_mutually_exclusive_group()
    how.add_argument("--merge", action="store_true", help="add to an existing pack")
    how.add_argument("--replace", action="store_true", help="write an existing pack anew")


def export_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("format", choices=EXPORT_FORMATS)
    p.add_argument("what", nargs="?", metavar="LESSON", help="the lesson id (default: the first lesson); for "
                   "gradebook, the LMS: canvas or moodle")
    p.add_argument("--out", type=Path, help="the file to write (default: beside the current folder, named after it)")
    p.add_argument("--cohort", help="gradebook: the cohort, as platform:id (such as slack:T0001)")


def run_import(settings: Settings, args: argparse.Namespace) -> int:
    from bot.interchange import readers
    from bot.interchange.pack_writer import report_lines, write_pack

    found: list[tuple[str, Found]] = []
    try:
        for path in args.files:
            found.append((str(path), readers.read(path, args.format)))
        every = Found()
        for _, each in found:
            every.extend(each)
        for line in report_lines(found):
            print(line)
        if not every.items:
            raise SetupError("nothing to import: every item was skipped (see above); nothing was written")
        root = settings.content_dir
        written = write_pack(every, args.pack, root, cards=args.cards, merge=args.merge, replace=args.replace)
    except ImportRefused as exc:
        raise SetupError(printable(str(exc))) from None
    except OSError as exc:
        raise SetupError(f"{args.pack}: cannot write the pack ({exc.strerror or exc}); nothing was written") from None
    for skipped in written.skipped:
        print(skipped)
    for warning in written.warnings:
        print(warning)
    for problem in written.problems:
        print(f"does not validate: {problem}")
    c = written.counts
    print(f"wrote {written.folder}: {c['questions']} quiz question(s), {c['practice']} practice question(s), "
          f"{c['terms']} glossary term(s)" + (f"; {len(written.problems)} problem(s) to fix before studybot loads it "
                                               f"(studybot validate {written.folder})" if written.problems else ""))
    return 1 if written.problems else 0


def run_export(settings: Settings, args: argparse.Namespace) -> int:
    if args.format == "gradebook":
        from bot.interchange.gradebook_export import export_gradebook

        return asyncio.run(export_gradebook(settings, args.cohort, args.what, args.out))
    from bot.interchange.exporters import export_lesson

    return export_lesson(settings.content_dir, args.format, args.what, args.out)
