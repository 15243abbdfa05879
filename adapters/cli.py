"""studybot: run, console, validate, render, backup, health."""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from collections.abc import Mapping
from datetime import timedelta
from pathlib import Path
from typing import Any

from adapters.platform import Platform
from adapters.platforms import PLATFORMS
from bot.app import StudyBot
from bot.clock import SystemClock
from bot.config import Settings
from bot.content.loader import QUIZ_MD, check_library
from bot.errors import ConfigError, ContentErrors, SetupError, StoreUnavailable
from bot.logs import configure
from bot.render import render_quiz
from bot.store import Store

HEALTHY_WITHIN = timedelta(seconds=90)


def _settings() -> Settings:
    try:
        return Settings.from_env(os.environ, sections=[s for p in PLATFORMS for s in p.sections])
    except ConfigError as exc:
        sys.exit(f"studybot: {exc}")


def configured_platforms(settings: Settings, environ: Mapping[str, str]) -> dict[Platform, Any]:
    """Each platform whose credentials are set, with its settings."""
    found = {}
    for platform in PLATFORMS:
        own = platform.read(environ, settings)
        if platform.configured(own):
            found[platform] = own
    return found


def validate(folder: Path) -> int:
    report = check_library(folder)
    for problem in (*report.problems, *report.warnings):
        print(problem)
    if report.problems:
        print(f"{len(report.problems)} problem(s) found.", file=sys.stderr)
        return 1
    library = report.library
    print(f"OK: {len(library.lessons)} lesson(s), {len(library.questions)} questions, "
          f"{len(library.terms)} glossary terms, {len(library.prompts)} teach-back prompts"
          + (f"; {len(report.warnings)} warning(s)." if report.warnings else "."))
    return 0


def render(folder: Path) -> int:
    report = check_library(folder)
    if report.problems:
        print(ContentErrors(report.problems))
        return 1
    for lesson in report.library.lessons.values():
        target = lesson.path / QUIZ_MD
        target.write_text(render_quiz(lesson), encoding="utf-8")
        print(f"wrote {target}")
    return 0


async def _start(settings: Settings) -> StudyBot:
    try:
        return await StudyBot.start(settings)
    except ContentErrors as exc:
        sys.exit(f"studybot: the lesson packs have problems:\n{exc}")
    except SetupError as exc:
        sys.exit(f"studybot: {exc}")


async def console(settings: Settings) -> None:
    from adapters.console import run_console

    try:
        settings.db_path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        sys.exit(f"studybot: cannot create the database folder {settings.db_path.parent} ({exc.strerror}); "
                 "make its parent writable or set STUDYBOT_DB")
    bot = await _start(settings)
    try:
        await run_console(bot)
    finally:
        await bot.close()


async def run(settings: Settings, or_console: bool) -> int:
    try:
        platforms = configured_platforms(settings, os.environ)
    except ConfigError as exc:
        sys.exit(f"studybot: {exc}")
    if not platforms:
        if or_console:
            print("No platform token is set: starting the console chat on the bundled lesson.")
            await console(settings)
            return 0
        needs = " or ".join(p.needs for p in PLATFORMS)
        print(f"studybot run: no platform is configured. Set {needs}, "
              "or try the console with `studybot console`.", file=sys.stderr)
        return 1
    from adapters.runner import run_platforms

    bot = await _start(settings)
    try:
        await run_platforms(bot, platforms)
    finally:
        await bot.close()
    return 0


async def backup(settings: Settings, target: Path) -> int:
    try:
        store = await Store.open(settings.db_path, SystemClock())
    except StoreUnavailable as exc:
        print(f"studybot backup: {exc}", file=sys.stderr)
        return 1
    try:
        await store.backup(target)
    finally:
        await store.close()
    print(f"backed up {settings.db_path} to {target}")
    return 0


async def health(settings: Settings) -> int:
    """Exit 0 when the database opens and the scheduler's heartbeat is fresh (Docker's healthcheck)."""
    clock = SystemClock()
    try:
        store = await Store.open(settings.db_path, clock)
    except StoreUnavailable as exc:
        print(f"unhealthy: {exc}", file=sys.stderr)
        return 1
    try:
        beat = await store.last_beat()
    finally:
        await store.close()
    if beat is None or clock.now() - beat > HEALTHY_WITHIN:
        print(f"unhealthy: the scheduler's last heartbeat was {beat or 'never'}", file=sys.stderr)
        return 1
    print(f"healthy: heartbeat {int((clock.now() - beat).total_seconds())} s ago")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="studybot", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("run", help="start every platform whose token is set")
    p.add_argument("--or-console", action="store_true", help="start the console chat when no platform is set")
    sub.add_parser("console", help="the terminal chat (no network, no token)")
    for name, what in (("validate", "check the lesson packs"), ("render", "write quiz.md from quiz.yaml")):
        p = sub.add_parser(name, help=what)
        p.add_argument("folder", nargs="?", type=Path, help="lesson packs (default: STUDYBOT_CONTENT or content/)")
    p = sub.add_parser("backup", help="a consistent copy of the database, safe while the bot runs")
    p.add_argument("path", type=Path)
    sub.add_parser("health", help="exit 0 when the database opens and the scheduler is alive")
    return parser


def main(argv: list[str] | None = None) -> None:
    args = build_parser().parse_args(argv)

    settings = _settings()
    configure(settings.log_level if args.command == "run" else "WARNING",
              secrets=[s for p in PLATFORMS for s in p.secrets],
              noisy=[n for p in PLATFORMS for n in p.noisy_loggers])
    if args.command in ("validate", "render"):
        folder = args.folder or settings.content_dir
        sys.exit((validate if args.command == "validate" else render)(folder))
    if args.command == "console":
        asyncio.run(console(settings))
    elif args.command == "run":
        sys.exit(asyncio.run(run(settings, args.or_console)))
    elif args.command == "backup":
        sys.exit(asyncio.run(backup(settings, args.path)))
    elif args.command == "health":
        sys.exit(asyncio.run(health(settings)))


if __name__ == "__main__":
    main()
