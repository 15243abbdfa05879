"""studybot: run, console, check, validate, render, backup, restore, migrate-db, health,
disputes export, import, export.

`.env` in the working directory is read first; a variable already in the environment wins.
Every failure is one line on stderr, `studybot: <what>: <what to do>`, with exit status 2
(`validate` exits 1 when it finds problems, `health` 1 when unhealthy); `--debug` shows the
traceback instead. Output cut short by its reader (`studybot health | head -3`) ends quietly with
status 141, as `ls | head` does.
"""

from __future__ import annotations

import argparse
import asyncio
import io
import logging
import os
import re
import select
import signal
import sys
from collections.abc import Coroutine, Mapping, MutableMapping
from datetime import timedelta
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any, NoReturn

from dotenv import dotenv_values

from adapters import cli_interchange, ops_health, platforms
from adapters.platform import Platform
from adapters.runner import (
    RELOAD_CHANNEL,
    check_ports,
    pid_file,
    reload_on_hangup,
    run_platforms,
    running_pid,
    serving_alone,
    stop_signals,
)
from adapters.subcommand import Subcommand
from bot.content.loader import QUIZ_MD, Report, check_library, pack_items, shown
from bot.content.render import render_quiz
from bot.core import yamlfile
from bot.core.clock import SystemClock
from bot.core.config import Settings
from bot.core.errors import ConfigError, ContentErrors, SetupError, StoreUnavailable
from bot.core.logs import configure
from bot.core.suggest import did_you_mean
from bot.features.disputes.examples import by_lesson, examples_yaml
from bot.features.disputes.storage import AREA as DISPUTES
from bot.reports import files
from bot.runtime.app import RELOAD_LOG, StudyBot, feature_areas, settings_problems
from bot.store import Store, moving, pg_url, postgres_engine, sqlite_engine
from bot.store.installs import Install, read_installs
from bot.store.processes import ALIVE_WITHIN

RUNNING_WITHIN = ALIVE_WITHIN  # a process whose last beat is older is not running (killed, or hung)
GIVEN_UP_WITHIN = timedelta(days=1)  # health lists the timers given up this recently
FAILED = 2  # the exit status of every failure
PIPE_CLOSED = 128 + signal.SIGPIPE  # the exit status once stdout's reader went away (a shell's for `ls | head`)
DISPUTES_FOLDER = "@disputes"  # under STUDYBOT_RESULTS_DIR; '@' is escaped in every cohort's folder name
ENV_FILE = Path(".env")
_GIVEN_URLS: list[str] = []  # migrate-db's --to, masked as the environment's URL is


def studybot_version() -> str:
    try:
        return version("studybot")
    except PackageNotFoundError:  # run from a checkout that was never installed
        return "unknown"


def load_env_file(path: Path = ENV_FILE, environ: MutableMapping[str, str] = os.environ) -> None:
    """Add the variables of `path` (a .env file) that the environment does not set already."""
    if not path.exists():
        return
    try:
        text = yamlfile.read_text(path)
    except yamlfile.FileRefused as exc:
        raise ConfigError(f"{path}: {exc.message}") from exc
    for name, value in dotenv_values(stream=io.StringIO(text)).items():
        if value is not None:
            environ.setdefault(name, value)


def configured_platforms(settings: Settings, environ: Mapping[str, str]) -> dict[Platform, Any]:
    """Each platform whose credentials are set, with its settings."""
    found = {}
    for platform in platforms.PLATFORMS:
        own = platform.read(environ, settings)
        if platform.configured(own):
            found[platform] = own
    return found


def checked(folder: Path) -> Report:
    """The lesson packs checked, each problem and warning printed on a line of its own."""
    report = check_library(folder)
    for problem in (*report.problems, *report.warnings):
        print(problem)
    return report


def validate(folder: Path) -> int:
    report = checked(folder)
    if report.problems:
        print(f"{len(report.problems)} problem(s) found.", file=sys.stderr)
        return 1
    library = report.library
    practice = sum(len(lesson.practice) for lesson in library.lessons.values())
    print(f"OK: {len(library.lessons)} lesson(s), {len(library.questions)} questions"
          + (f" ({practice} of them practice)" if practice else "") + ", "
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
        if target.is_symlink() or (target.exists() and not target.is_file()):
            raise SetupError(f"{shown(target)}: is a link or not a regular file; studybot render writes only regular "
                             "files: delete it and run studybot render again")
        staged = target.with_name(f".{QUIZ_MD}.new")
        staged.unlink(missing_ok=True)
        staged.write_text(render_quiz(lesson), encoding="utf-8")
        os.replace(staged, target)  # replaces the file itself, never writes through it
        print(f"wrote {shown(target)}")
    return 0


def check(settings: Settings) -> int:
    """What `studybot run` would find, without starting anything: the settings and config, the
    ports, the lesson packs and the database."""
    found = configured_platforms(settings, os.environ)
    check_ports(found, settings.metrics_port, settings.metrics_host)
    report = check_library(settings.content_dir)
    if report.problems:
        raise ContentErrors(report.problems)
    for warning in report.warnings:
        print(warning)
    library = report.library
    for key, message in settings_problems(settings, library):
        raise settings.config_error(key, message)
    print(f"settings: OK{f' (config {settings.config_source})' if settings.config else ''}")
    print(f"content: OK, {len(library.lessons)} lesson(s), {len(library.questions)} questions in "
          f"{settings.content_dir}")
    if settings.database_url:
        print(f"database: OK, {postgres_engine.examine(settings.database_url)}")
    else:
        print(f"database: OK, {sqlite_engine.examine(settings.db_path)}")
    print(f"results: OK, {files.check_folder(settings.results_dir)} is writable")
    try:
        installs = (postgres_engine.peek(settings.database_url, read_installs) if settings.database_url
                    else sqlite_engine.peek(settings.db_path, read_installs))
    except StoreUnavailable as exc:
        print(f"workspaces: not listed: {exc}")
    else:
        ops_health.open_tokens(installs or [], settings)  # as `run` will
        for line in workspaces(installs or [], settings):
            print(line)
    for line in ops_health.check_lines(settings, found):
        print(line)
    print(f"platforms: {', '.join(p.name for p in found)}" if found else
          f"platforms: none configured ({_needs()}); studybot run would refuse to start")
    return 0


async def console(settings: Settings, language: str | None = None) -> int:
    from adapters.console import run_console

    if not settings.database_url and (problem := sqlite_engine.path_problem(settings.db_path)):
        raise StoreUnavailable(problem)
    try:
        if not settings.database_url:
            settings.db_path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise StoreUnavailable(f"cannot create the database folder {settings.db_path.parent} ({exc.strerror}); "
                               "make its parent writable or set STUDYBOT_DB") from exc
    with serving_alone(settings):
        bot = await StudyBot.start(settings)  # the database's problems first, then the results folder's
        try:
            files.check_folder(settings.results_dir)
            with reload_on_hangup(bot):
                await run_console(bot, language=language)
        finally:
            await bot.close()
    return 0


async def run(settings: Settings, or_console: bool) -> int:
    found = configured_platforms(settings, os.environ)
    if not found:
        if or_console:
            print("No platform token is set: starting the console chat on the bundled lesson.")
            quiet_for_the_console()
            return await console(settings)
        raise SetupError(f"no platform is configured ({_needs()}), or try the console with `studybot console`")
    with stop_signals(asyncio.Event()) as stop, serving_alone(settings):  # SIGTERM and Ctrl-C stop it cleanly
        bot = await StudyBot.start(settings)  # the database's problems first, then the results folder's
        try:
            files.check_folder(settings.results_dir)
            with reload_on_hangup(bot):
                await run_platforms(bot, found, stop, metrics_port=settings.metrics_port,
                                    metrics_host=settings.metrics_host)
        finally:
            await bot.close()
    return 0


def reload_running(settings: Settings) -> int:
    """Check the lesson packs, then ask the running studybot to load them: on SQLite the process its
    pid file names (SIGHUP); on PostgreSQL every process on the database (NOTIFY)."""
    report = checked(settings.content_dir)
    if report.problems:
        raise SetupError(f"{len(report.problems)} problem(s) found, so nothing was reloaded: fix them, then run "
                         "studybot reload again")
    for key, message in settings_problems(settings, report.library):  # the running studybot would refuse
        raise settings.config_error(key, message)
    if settings.database_url:  # every process on the database listens
        postgres_engine.notify(settings.database_url, RELOAD_CHANNEL)
        print(f"asked every studybot process on {postgres_engine.redacted(settings.database_url)} to reload the "
              "lesson packs; their logs say when they are in use")
        return 0
    marker = pid_file(settings.db_path)
    try:
        pid = running_pid(marker)
    except OSError as exc:
        raise SetupError(f"cannot read {marker} ({exc.strerror}); run studybot reload as the user that runs "
                         "studybot, or send that process SIGHUP") from exc
    if pid is None:
        raise SetupError(f"no running studybot found for {settings.db_path} (none holds {marker}); start it with "
                         "studybot run, or set STUDYBOT_DB to the database it runs on")
    try:
        os.kill(pid, signal.SIGHUP)
    except OSError as exc:
        raise SetupError(f"cannot signal studybot (process {pid}): {exc.strerror}; run studybot reload as the user "
                         "that runs studybot") from exc
    print(f"asked studybot (process {pid}) to reload the lesson packs; its log says when they are in use")
    return 0


async def backup(settings: Settings, target: Path) -> int:
    if not settings.database_url and not settings.db_path.exists():
        raise StoreUnavailable(f"the database {settings.db_path} does not exist; set STUDYBOT_DB to the database "
                               "to back up")
    if target.exists() and (settings.database_url or target.resolve() != settings.db_path.resolve()):
        raise SetupError(f"cannot write the backup {target}: it already exists, and a backup never replaces a file; "
                         "choose a new path, or delete that file first")
    store = await Store.open(settings.database, SystemClock(), feature_areas())  # the tables a run has
    try:
        await store.backup(target)
        where = store.engine.where
    finally:
        await store.close()
    print(f"backed up {where} to {target}")
    return 0


def restore_backup(settings: Settings, source: Path) -> int:
    if settings.database_url:
        postgres_engine.restore(source, settings.database_url)
        where = postgres_engine.redacted(settings.database_url)
    else:
        sqlite_engine.restore(source, settings.db_path)
        where = str(settings.db_path)
    print(f"restored {source} to {where}; start studybot again")
    return 0


async def migrate_db(settings: Settings, url: str) -> int:
    """Copy the SQLite database (STUDYBOT_DB) into an empty PostgreSQL database, every count checked."""
    moved = await moving.move(settings.db_path, url, feature_areas())
    for table, rows in moved.counts.items():
        print(f"{table}: {rows} row(s)")
    for table, why in moving.NOT_COPIED.items():
        print(f"{table}: not copied ({why})")
    print(f"copied {moved.rows} row(s) in {len(moved.counts)} tables from {settings.db_path} to "
          f"{postgres_engine.redacted(url)}, every count checked; set STUDYBOT_DATABASE_URL to it and start studybot")
    return 0


async def health(settings: Settings, itself: bool = False) -> int:
    """Exit 0 when the database is sound and the scheduler's heartbeat is fresh (Docker's healthcheck);
    `itself`: only this process's (STUDYBOT_PROCESS_NAME, else this host's), as a replica's check."""
    clock = SystemClock()
    if not settings.database_url and not settings.db_path.exists():
        print(f"unhealthy: the database {settings.db_path} does not exist: start studybot (studybot run) to create "
              "it, or set STUDYBOT_DB to the database it runs on; if it was deleted, restore the latest backup with "
              "`studybot restore BACKUP`", file=sys.stderr)
        return 1
    try:
        store = await Store.open(settings.database, clock)
    except StoreUnavailable as exc:
        print(f"unhealthy: {exc}", file=sys.stderr)
        return 1
    try:
        processes = await store.processes.listed()
        given_up = await store.timers.given_up(clock.now() - GIVEN_UP_WITHIN)
        installs = await store.engine.run(read_installs)  # listed as stored: no token is decrypted
        where = store.engine.where
    finally:
        await store.close()
    variable = "STUDYBOT_DATABASE_URL" if settings.database_url else "STUDYBOT_DB"
    verdict = ops_health.judge(processes, clock.now(), where, variable,
                               (settings.process_name or "") if itself else None)
    if verdict.unhealthy:
        print(f"unhealthy: {verdict.unhealthy}", file=sys.stderr)
        return 1
    print(verdict.healthy)
    for line in verdict.lines:
        print(line)
    for line in workspaces(installs, settings):
        print(line)
    for failed in given_up:  # the process is fine; a channel it cannot post to is the operator's to fix
        reason, at = " ".join(failed.reason.split())[:240], failed.at.isoformat(timespec="seconds")
        if failed.timer.startswith("cohorts."):  # a configured channel, checked at start-up
            print(f"warning: {failed.timer} (checked at {at}): {reason}")
        else:
            print(f"warning: timer {failed.timer} was given up at {at}: {reason}")
    return 0


async def export_disputes(settings: Settings, lesson: str | None, out: Path | None) -> int:
    """Write the settled disputes (of one lesson) as rubric `examples:` entries, a file per lesson."""
    if not settings.database_url and not settings.db_path.exists():
        raise StoreUnavailable(f"the database {settings.db_path} does not exist; set STUDYBOT_DB to studybot's "
                               "database")
    report = check_library(settings.content_dir)
    lessons = report.library.lessons if not report.problems else {}
    if lesson and lessons and lesson not in lessons:
        raise SetupError(f"no lesson '{lesson[:40]}' in {settings.content_dir}{did_you_mean(lesson, list(lessons))}; "
                         f"lessons: {', '.join(lessons)}")
    store = await Store.open(settings.database, SystemClock(), feature_areas())
    try:
        settled = await store.area(DISPUTES).settled(lesson)
    finally:
        await store.close()
    if not settled:
        print(f"no settled disputes{f' of lesson {lesson}' if lesson else ''} yet; nothing written")
        return 0
    folder = out or settings.results_dir / DISPUTES_FOLDER
    items_in_pack = pack_items(report.library)
    for lesson_id, disputes in by_lesson(settled).items():
        target = folder / f"{re.sub(r'[^A-Za-z0-9_-]', '_', lesson_id)}.examples.yaml"
        try:
            folder.mkdir(parents=True, exist_ok=True)
            staged = target.with_name(f".{target.name}.new")
            staged.write_text(examples_yaml(lesson_id, disputes, items_in_pack), encoding="utf-8")
            os.replace(staged, target)
        except OSError as exc:
            raise SetupError(f"cannot write {target}: {exc.strerror or exc}; choose another folder with --out") from exc
        print(f"wrote {target} ({len(disputes)} settled dispute(s))")
    return 0


def workspaces(installs: list[Install], settings: Settings) -> list[str]:
    """One line per workspace that installed studybot ("Add to Slack"), uninstalled ones with how long
    their scores are kept."""
    lines = []
    days = settings.uninstalled_retention_days
    for install in installs:
        name = f"{install.in_cohort}{f' ({install.team_name})' if install.team_name else ''}"
        if install.uninstalled_at is None:
            since = install.installed_at.date().isoformat() if install.installed_at else "?"
            rotates = ", its token rotates" if install.refresh_token else ""
            lines.append(f"workspace {name}: installed since {since} by {install.installer_id or '?'}{rotates}")
            continue
        kept = ("kept" if days is None else
                f"kept until {(install.uninstalled_at + timedelta(days=days)).date().isoformat()}")
        lines.append(f"workspace {name}: uninstalled on {install.uninstalled_at.date().isoformat()}, its scores {kept}"
                     " (STUDYBOT_UNINSTALLED_RETENTION_DAYS)")
    return lines + ops_health.token_lines(installs, settings)


class _Parser(argparse.ArgumentParser):
    """Usage mistakes are one line too."""

    def error(self, message: str) -> NoReturn:
        self.exit(FAILED, f"studybot: {message}; see `studybot --help`\n")


def _folder(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("folder", nargs="?", type=Path, help="lesson packs (default: STUDYBOT_CONTENT or content/)")


def _path(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("path", type=Path)


def _run_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--or-console", action="store_true", help="start the console chat when no platform is set")


def _migrate_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--to", required=True, metavar="URL", help="postgresql://user:password@host/db")


def _export_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("lesson", nargs="?", help="only this lesson's (default: every lesson's)")
    parser.add_argument("--out", type=Path,
                        help=f"the folder to write to (default: STUDYBOT_RESULTS_DIR/{DISPUTES_FOLDER})")


def _console(settings: Settings, args: argparse.Namespace) -> Coroutine[Any, Any, int]:
    quiet_for_the_console()
    return console(settings, args.language)


def _console_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--language", metavar="CODE", help="the chat's language, such as es or de (default: LANG)")


# Every subcommand, in the order `studybot --help` lists them; one in a module of its own is added here
# (see docs/architecture.md, "A CLI subcommand").
def _health_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--self", dest="itself", action="store_true",
                        help="only the process named STUDYBOT_PROCESS_NAME (else this host's): a replica's own check")


SUBCOMMANDS: tuple[Subcommand, ...] = (
    Subcommand("run", "start every platform whose token is set", lambda s, a: run(s, a.or_console),
               _run_arguments, logs=True),
    Subcommand("console", "the terminal chat (no network, no token)", _console, _console_arguments),
    Subcommand("check", "check the settings, config, ports, lesson packs and database; start nothing",
               lambda s, a: check(s)),
    Subcommand("validate", "check the lesson packs", lambda s, a: validate(a.folder or s.content_dir), _folder),
    Subcommand("render", "write quiz.md from quiz.yaml", lambda s, a: render(a.folder or s.content_dir), _folder),
    Subcommand("backup", "a consistent copy of the database, safe while the bot runs", lambda s, a: backup(s, a.path),
               _path),
    Subcommand("restore", "replace the database with a backup (stop the bot first)",
               lambda s, a: restore_backup(s, a.path), _path),
    Subcommand("migrate-db", "copy the SQLite database into an empty PostgreSQL database (bot stopped)",
               lambda s, a: migrate_db(s, a.to), _migrate_arguments),
    Subcommand("reload", "check the lesson packs, then have the running studybot use them (no restart)",
               lambda s, a: reload_running(s)),
    Subcommand("health", "exit 0 when the database is sound and the scheduler is alive",
               lambda s, a: health(s, a.itself), _health_arguments),
    Subcommand("disputes", "the learners' disputes of verdicts", actions=(
        Subcommand("export", "write the settled disputes as rubric examples, a file per lesson",
                   lambda s, a: export_disputes(s, a.lesson, a.out), _export_arguments),
    )),
    cli_interchange.IMPORT,
    cli_interchange.EXPORT,
)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="studybot", description="A study bot for cohorts on Slack, Discord and the console.")
    parser.add_argument("--version", action="version", version=f"studybot {studybot_version()}")
    parser.add_argument("--debug", action="store_true", help="show the traceback of a failure")
    sub = parser.add_subparsers(dest="command", required=True)
    for subcommand in SUBCOMMANDS:
        # `studybot check --debug` as well as `studybot --debug check`
        subcommand.add_to(sub).add_argument("--debug", action="store_true", default=argparse.SUPPRESS,
                                            help="show the traceback of a failure")
    return parser


def quiet_for_the_console() -> None:
    """The console logs warnings only (INFO lines would interleave with the chat), but a reload asked for
    is answered too."""
    logging.getLogger().setLevel(logging.WARNING)
    logging.getLogger(RELOAD_LOG).setLevel(logging.INFO)


def _command(args: argparse.Namespace) -> int:
    """Run the subcommand parsed, with the settings from the environment (and .env)."""
    load_env_file()
    settings = platforms.settings_from_env(os.environ)
    subcommand: Subcommand = args.subcommand
    configure(settings.log_level if subcommand.logs else "WARNING", fmt=settings.log_format,
              secrets=[*(s for p in platforms.PLATFORMS for s in p.secrets),
                       *(re.escape(s) for u in _database_urls() for s in pg_url.secrets_of(u))],
              noisy=[n for p in platforms.PLATFORMS for n in p.noisy_loggers])
    outcome = subcommand.does(settings, args)
    return asyncio.run(outcome) if isinstance(outcome, Coroutine) else outcome


def _needs() -> str:
    """What to set for each platform: "for slack set …; for discord set DISCORD_TOKEN"."""
    return "; ".join(f"for {p.name} set {p.needs}" for p in platforms.PLATFORMS)


def _fail(message: str) -> None:
    print(f"studybot: {pg_url.masked(' '.join(message.split()), *_database_urls())}", file=sys.stderr)


def _database_urls() -> list[str]:
    """The PostgreSQL URLs given (the environment's, and migrate-db's --to): their passwords are masked
    in every failure line and log line."""
    return [u for u in (os.environ.get("STUDYBOT_DATABASE_URL"), *_GIVEN_URLS) if u]


def main(argv: list[str] | None = None) -> None:
    try:
        try:
            code = _main(argv)
        finally:
            sys.stdout.flush()  # output still buffered meets a closed pipe here, not at exit
    except BrokenPipeError:
        code = _reader_gone()
    sys.exit(code)


def _main(argv: list[str] | None) -> int:
    args = build_parser().parse_args(argv)
    _GIVEN_URLS[:] = [args.to] if getattr(args, "to", None) else []
    try:
        return _command(args)
    except KeyboardInterrupt:
        return 0  # Ctrl-C in the console chat
    except BrokenPipeError as exc:
        if _stdout_gone():
            raise  # not a failure: the reader of the output went away (see main)
        return _unexpected(exc, args.debug)  # another pipe (a socket, a child's) broke: a failure like any
    except ContentErrors as exc:
        if args.debug:
            raise
        for problem in exc.problems:
            _fail(str(problem))
        return FAILED
    except SetupError as exc:
        if args.debug:
            raise
        _fail(str(exc))
        return FAILED
    except Exception as exc:
        return _unexpected(exc, args.debug)


def _unexpected(exc: Exception, debug: bool) -> int:
    if debug:
        raise exc
    _fail(f"unexpected {type(exc).__name__}: {str(exc)[:200]}; run it again with --debug to see the traceback, "
          "and report it")
    return FAILED


def _stdout_gone() -> bool:
    """Whether stdout is a pipe whose reader has closed it (its write end then polls as an error)."""
    try:
        poller = select.poll()
        poller.register(sys.stdout.fileno(), select.POLLOUT)
        return any(events & select.POLLERR for _, events in poller.poll(0))
    except (OSError, ValueError):  # no file descriptor (a test's captured output): not a closed pipe
        return False


def _reader_gone() -> int:
    """The reader of stdout went away (`studybot health | head -3`): end quietly, as `ls | head` does, with
    the status a shell shows for it."""
    nowhere = os.open(os.devnull, os.O_WRONLY)
    os.dup2(nowhere, sys.stdout.fileno())  # what is still buffered goes nowhere at exit, with no error
    os.close(nowhere)
    return PIPE_CLOSED


if __name__ == "__main__":
    main()
