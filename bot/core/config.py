"""The core's settings, from the environment and the optional STUDYBOT_CONFIG YAML file.

Platform settings (tokens, URLs, ports) are not here: each platform reads its own from the
environment and from its section of the config file (`Settings.section`), and tells the
core which sections are its (`Settings.from_env(..., sections=...)`), so that a misspelt
top-level key is caught without this module knowing any platform.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import date, time
from functools import cache
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import yaml
from cryptography.fernet import Fernet

from bot.core import yamlfile
from bot.core.errors import ConfigError
from bot.core.i18n import SHIPPED, SOURCE, language_of
from bot.core.messages import Cohort
from bot.core.suggest import did_you_mean
from bot.core.yamlcheck import Checker, FieldPath, Invalid, field_name, shown
from bot.grading.scoring import SelfGraded

READER_VARIABLES = ("STUDYBOT_READER_URL", "STUDYBOT_READER_MODEL", "STUDYBOT_READER_KEY", "STUDYBOT_READER_TIMEOUT",
                    "STUDYBOT_READER_REDACT", "STUDYBOT_READER_PER_LEARNER", "STUDYBOT_READER_PER_COHORT")
WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
VARIABLES = ("STUDYBOT_DB", "STUDYBOT_DATABASE_URL", "STUDYBOT_CONTENT", "STUDYBOT_RESULTS_DIR", "STUDYBOT_CONFIG",
             "STUDYBOT_LOG_LEVEL", "STUDYBOT_LOG_FORMAT", "STUDYBOT_METRICS_PORT", "STUDYBOT_METRICS_HOST",
             "STUDYBOT_TIMER_LEASE", "STUDYBOT_UNINSTALLED_RETENTION_DAYS", "STUDYBOT_SECRET_KEY",
             "STUDYBOT_PROCESS_NAME", *READER_VARIABLES)
CORE_SECTIONS = ("instructors", "rounds", "cohorts", "leaderboard")
LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
LOG_FORMATS = ("text", "json")
INSTRUCTOR_KEYS = ("everywhere", "console")  # with each platform's own keys between them (its instructor rule)
PLATFORM_NAMES = ("slack", "discord", "console")  # the old instructors.<platform> lists
COHORT_KEYS = ("platform", "timezone", "leaderboard", "daily", "instructors", "gradebook", "track", "reader",
               "review", "streaks", "teams", "team_join", "confidence",
               "language")
TEAM_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,23}$")  # a team's name, as /team join NAME takes it
LEADERBOARD_KEYS = ("channel", "weekday", "time")
DAILY_KEYS = ("channel", "time", "lesson", "reveal")
ROUNDS_KEYS = ("seconds", "shortest", "longest", "instructors_only")
TRACK_KINDS = ("quiz", "teachback", "review", "message")  # what a track step delivers: one of these per step
TRACK_DAYS = 366  # a step's day offset is below this
REVIEW_KEYS = ("desired_retention", "new_cards_per_day", "exam")
RETENTION_RANGE = (0.70, 0.97)  # what desired_retention may be
TRACK_MESSAGE = 1800  # characters of a message step: one chat message, with its "Your track · day N: "


class Secret(str):
    """A string that never shows itself in a repr, a log line or a traceback."""

    def __repr__(self) -> str:
        return "<secret>"

    __str__ = __repr__

    def reveal(self) -> str:
        return str.__str__(self)


SECRET_KEY_HOW = ("generate one with: python -c \"from cryptography.fernet import Fernet; "
                  "print(Fernet.generate_key().decode())\"")


def secret_keys(value: str | None) -> tuple[Secret, ...]:
    """STUDYBOT_SECRET_KEY: Fernet keys, comma-separated, the one to encrypt with first (older ones after
    it still decrypt, while rows are re-encrypted at start); ConfigError names a key that is not one."""
    keys = tuple(Secret(k.strip()) for k in (value or "").split(",") if k.strip())
    for number, key in enumerate(keys, 1):
        try:
            Fernet(key.reveal())
        except ValueError:
            raise ConfigError(f"STUDYBOT_SECRET_KEY: key {number} is not a Fernet key (32 bytes, URL-safe "
                              f"base64, 44 characters); {SECRET_KEY_HOW}") from None
    return keys


@dataclass(frozen=True)
class LeaderboardSchedule:
    channel: str
    weekday: int  # Monday is 0
    at: time


@dataclass(frozen=True)
class DailyQuestion:
    """A public question of the day, posted at a local time; revealed at the next post, or at `reveal`."""

    channel: str
    at: time
    lesson: str | None = None  # the first lesson when not said
    reveal: time | None = None


@dataclass(frozen=True)
class TrackStep:
    """One step of a cohort's track: on day `day` after a learner's start, at `at` their local time,
    a lesson's quiz, a teach-back prompt, a review session or a message (`kind`, naming `what`)."""

    day: int
    at: time
    kind: str  # one of TRACK_KINDS
    what: str  # the lesson id (quiz, review), the prompt id (teachback) or the message's text


@dataclass(frozen=True)
class ReaderSettings:
    """The second reader: an OpenAI-compatible endpoint that advises on free-text answers (never grades)."""

    url: str  # the /v1 base URL
    model: str
    key: Secret | None = None
    timeout: float = 2.0  # seconds; then the verdict goes out without it
    redact: re.Pattern[str] | None = None  # a pattern of personal data redacted besides e-mail, phone and card
    per_learner: int = 20  # calls a day per learner
    per_cohort: int = 300  # calls a day per cohort


def reader_settings(get: Callable[[str], str | None]) -> ReaderSettings | None:
    """STUDYBOT_READER_*: None unless STUDYBOT_READER_URL is set; ConfigError names a wrong value."""
    url = get("STUDYBOT_READER_URL")
    if url is None:
        return None
    if not re.fullmatch(r"https?://[^\s/]+(/\S*)?", url):
        raise ConfigError(f"STUDYBOT_READER_URL: '{url[:40]}' is not an http(s) URL; write the endpoint's /v1 base, "
                          "like http://127.0.0.1:11434/v1, or unset it to keep the second reader off")
    model = get("STUDYBOT_READER_MODEL")
    if model is None:
        raise ConfigError("STUDYBOT_READER_MODEL: not set; name the model the endpoint serves, like llama3.1:8b")
    timeout = get("STUDYBOT_READER_TIMEOUT") or "2"
    try:
        seconds = float(timeout)
    except ValueError:
        seconds = -1.0
    if not 0.5 <= seconds <= 30:
        raise ConfigError(f"STUDYBOT_READER_TIMEOUT: '{timeout[:20]}' is not a number of seconds; set 0.5 to 30 "
                          "(default 2)")
    redact = get("STUDYBOT_READER_REDACT")
    try:
        pattern = re.compile(redact) if redact else None
    except re.error as exc:
        raise ConfigError(f"STUDYBOT_READER_REDACT: not a regular expression ({exc}); write one such as "
                          r"'s\d{7}' for student numbers") from None
    per_learner = _calls_a_day("STUDYBOT_READER_PER_LEARNER", get("STUDYBOT_READER_PER_LEARNER") or "20")
    per_cohort = _calls_a_day("STUDYBOT_READER_PER_COHORT", get("STUDYBOT_READER_PER_COHORT") or "300")
    key = get("STUDYBOT_READER_KEY")
    return ReaderSettings(url.rstrip("/"), model, Secret(key) if key else None, seconds, pattern, per_learner,
                          per_cohort)


def _calls_a_day(variable: str, text: str) -> int:
    if not text.isdecimal() or int(text) > 1_000_000:
        raise ConfigError(f"{variable}: '{text[:20]}' is not a number of calls a day; set 0 or more")
    return int(text)


@dataclass(frozen=True)
class ReviewSettings:
    """A cohort's spaced repetition: the recall FSRS aims for, how many new cards a learner is shown a
    day (None: no limit), and the exam day, for every lesson (`exam`) or per lesson (`lesson_exams`)."""

    desired_retention: float = 0.9
    new_cards_per_day: int | None = None
    exam: date | None = None
    lesson_exams: Mapping[str, date] = field(default_factory=dict)

    def exam_of(self, lesson_id: str) -> date | None:
        return self.lesson_exams.get(lesson_id, self.exam)


@dataclass(frozen=True)
class CohortSettings:
    timezone: ZoneInfo = field(default_factory=lambda: ZoneInfo("UTC"))
    leaderboard: LeaderboardSchedule | None = None
    daily: DailyQuestion | None = None
    instructors: frozenset[str] = frozenset()  # user ids
    gradebook: Mapping[str, str] = field(default_factory=dict)  # user id -> the LMS's id (gradebook CSVs)
    track: tuple[TrackStep, ...] = ()  # as the config lists them, each timed from a learner's start
    reader: bool = True  # the second reader may advise here (when one is set up); off: never (an exam)
    review: ReviewSettings = ReviewSettings()
    streaks: bool = True  # False: no learner of the cohort is shown a streak
    teams: Mapping[str, frozenset[str]] = field(default_factory=dict)  # team name -> user ids, as configured
    team_join: bool = False  # learners may /team join a team themselves
    confidence: bool = False  # "How sure were you?" after each answer
    language: str = SOURCE  # public posts (rounds, the question of the day, the weekly board) are in it


@dataclass(frozen=True)
class Instructors:
    """Who is an instructor: user ids listed per cohort (`cohorts.<id>.instructors`) or, only when
    said explicitly, in every cohort (`instructors.everywhere.<platform>`). A platform's own rule
    (Slack's workspace admins, Discord's roles) is its keys under `instructors`, read by the platform."""

    per_cohort: Mapping[Cohort, frozenset[str]] = field(default_factory=dict)
    everywhere: Mapping[str, frozenset[str]] = field(default_factory=dict)  # platform -> user ids
    console: bool = True

    def listed(self, cohort: Cohort, user_id: str) -> bool:
        return (user_id in self.per_cohort.get(cohort, frozenset())
                or user_id in self.everywhere.get(cohort.platform, frozenset()))


@dataclass(frozen=True)
class Settings:
    db_path: Path = Path("data/studybot.db")
    database_url: str | None = None  # postgresql://… for many processes; None: the SQLite file db_path
    timer_lease: int = 90  # seconds a process holds a timer it claimed: after a crash, another fires it then
    uninstalled_retention_days: int | None = None  # an uninstalled workspace's scores are deleted after; None: kept
    content_dir: Path = Path("content")
    results_dir: Path = Path("data/results")
    log_level: str = "INFO"
    log_format: str = "text"  # or json: one object per line
    metrics_port: int | None = None  # where /metrics is served besides Slack's HTTP port
    metrics_host: str = "127.0.0.1"  # and on which address (0.0.0.0 in a container)
    secret_keys: tuple[Secret, ...] = ()  # STUDYBOT_SECRET_KEY: Fernet keys for the stored tokens, newest first
    process_name: str | None = None  # how `health` names this process (default: the host name)
    instructors: Instructors = Instructors()
    round_seconds: int = 60
    round_seconds_range: tuple[int, int] = (10, 600)  # what `/quiz round seconds:N` may choose
    rounds_instructors_only: bool = False
    cohorts: Mapping[Cohort, CohortSettings] = field(default_factory=dict)
    self_graded: SelfGraded = SelfGraded.MARK  # how self-graded points enter leaderboards
    config: Mapping[str, Any] = field(default_factory=dict)  # the config file, for the platforms' sections
    reader: ReaderSettings | None = None  # the optional second reader (STUDYBOT_READER_*); None: off
    config_source: str = "STUDYBOT_CONFIG"  # how messages name the config file

    @property
    def database(self) -> Path | str:
        """Where the store is: the PostgreSQL URL when one is set, else the SQLite file."""
        return self.database_url or self.db_path

    @classmethod
    def from_env(cls, environ: Mapping[str, str], sections: Collection[str] = (),
                 platforms: Collection[str] = (), instructor_keys: Collection[str] = ()) -> Settings:
        """The settings from the environment; `sections` are the platforms' own config sections,
        `platforms` their names (the console is always known) and `instructor_keys` their own keys
        under `instructors`."""

        def get(name: str) -> str | None:
            value = environ.get(name, "").strip()
            return value or None

        level = (get("STUDYBOT_LOG_LEVEL") or "INFO").upper()
        if level not in LOG_LEVELS:
            raise ConfigError(f"STUDYBOT_LOG_LEVEL: '{level[:20]}' is not a level; set DEBUG, INFO, WARNING or ERROR")
        log_format = (get("STUDYBOT_LOG_FORMAT") or "text").lower()
        if log_format not in LOG_FORMATS:
            raise ConfigError(f"STUDYBOT_LOG_FORMAT: '{log_format[:20]}' is not a format"
                              f"{did_you_mean(log_format, LOG_FORMATS)}; set text or json")
        metrics = get("STUDYBOT_METRICS_PORT")
        url = get("STUDYBOT_DATABASE_URL")
        if url and not url.startswith(("postgresql://", "postgres://")):
            raise ConfigError("STUDYBOT_DATABASE_URL: not a PostgreSQL URL; write postgresql://user:password@host/db, "
                              "or unset it to keep the SQLite file STUDYBOT_DB")
        lease = get("STUDYBOT_TIMER_LEASE") or str(cls.timer_lease)
        if not lease.isdecimal() or not 1 <= int(lease) <= 3600:
            raise ConfigError(f"STUDYBOT_TIMER_LEASE: '{lease[:20]}' is not a number of seconds; set 1 to 3600 "
                              f"(default {cls.timer_lease})")
        retention = get("STUDYBOT_UNINSTALLED_RETENTION_DAYS")
        if retention is not None and not (retention.isdecimal() and int(retention) <= 36500):
            raise ConfigError(f"STUDYBOT_UNINSTALLED_RETENTION_DAYS: '{retention[:20]}' is not a number of days; set "
                              "0 or more, or unset it to keep an uninstalled workspace's scores")
        name = get("STUDYBOT_PROCESS_NAME")
        if name is not None and not re.fullmatch(r"[A-Za-z0-9_.:-]{1,80}", name):
            raise ConfigError(f"STUDYBOT_PROCESS_NAME: '{name[:20]}' is not a name; use up to 80 letters, digits, "
                              "'.', '_', ':' or '-', like replica-1")
        settings = cls(
            db_path=Path(get("STUDYBOT_DB") or cls.db_path),
            secret_keys=secret_keys(get("STUDYBOT_SECRET_KEY")),
            process_name=name,
            database_url=url,
            timer_lease=int(lease),
            uninstalled_retention_days=int(retention) if retention is not None else None,
            content_dir=Path(get("STUDYBOT_CONTENT") or cls.content_dir),
            results_dir=Path(get("STUDYBOT_RESULTS_DIR") or cls.results_dir),
            log_level=level,
            log_format=log_format,
            metrics_port=port_number("STUDYBOT_METRICS_PORT", metrics) if metrics else None,
            metrics_host=get("STUDYBOT_METRICS_HOST") or cls.metrics_host,
            reader=reader_settings(get),
        )
        config_path = get("STUDYBOT_CONFIG")
        if config_path:
            settings = replace(settings, config_source=config_path)
            settings = settings.with_config(read_config(Path(config_path)), sections, platforms, instructor_keys)
        return settings

    def with_config(self, data: Any, sections: Collection[str] = (), platforms: Collection[str] = (),
                    instructor_keys: Collection[str] = ()) -> Settings:
        """Apply the STUDYBOT_CONFIG schema (see the README) on top of these settings."""
        with self._named():
            return self._with_config(_checker(), data, sections, platforms,
                                     (INSTRUCTOR_KEYS[0], *instructor_keys, *INSTRUCTOR_KEYS[1:]))

    def _with_config(self, c: Checker, data: Any, sections: Collection[str], platforms: Collection[str],
                     instructor_keys: Collection[str]) -> Settings:
        if not isinstance(data, Mapping):
            c.stop((), "must be a mapping of settings (key: value lines); start from config/studybot.example.yaml")
        c.known_keys(data, (), (*CORE_SECTIONS, *sections))
        known_platforms = ("console", *platforms) if platforms else ()  # none given: names are not checked
        teach = c.section(data, "instructors", ())
        rounds = c.section(data, "rounds", (), ROUNDS_KEYS)
        cohorts = c.section(data, "cohorts", ())
        board = c.section(data, "leaderboard", (), ("self_graded",))
        policy = board.get("self_graded", SelfGraded.MARK)
        if policy not in SelfGraded.__members__.values():
            c.stop(("leaderboard", "self_graded"), f"{shown(policy)} is not a policy"
                   f"{did_you_mean(str(policy), list(SelfGraded))}; write count, mark or exclude")
        seconds, shortest, longest = (_seconds(c, rounds, key, default) for key, default in
                                      (("seconds", 60), ("shortest", 10), ("longest", 600)))
        if not shortest <= seconds <= longest:
            c.stop(("rounds", "seconds"), f"must lie between rounds.shortest ({shortest}) and rounds.longest "
                   f"({longest}), not {seconds}")
        for key in (k for k in teach if k not in instructor_keys):
            name = str(key)[:40]
            if key in (*PLATFORM_NAMES, *platforms):
                c.stop(("instructors", name), "is not a setting; list instructors per cohort under "
                       f"cohorts.<id>.instructors, or for every cohort under instructors.everywhere.{name}")
            c.known_keys({key: None}, ("instructors",), instructor_keys)
        everywhere = c.section(teach, "everywhere", ("instructors",), known_platforms or None)
        parsed = dict(_cohort(c, str(k), v, known_platforms) for k, v in cohorts.items())
        return replace(
            self,
            instructors=Instructors(
                per_cohort={cohort: chosen.instructors for cohort, chosen in parsed.items() if chosen.instructors},
                everywhere={str(k): c.ids(everywhere, k, ("instructors", "everywhere")) for k in everywhere},
                console=c.flag(teach, "console", ("instructors",), True),
            ),
            round_seconds=seconds,
            round_seconds_range=(shortest, longest),
            rounds_instructors_only=c.flag(rounds, "instructors_only", ("rounds",), False),
            self_graded=SelfGraded(policy),
            cohorts=parsed,
            config=data,
        )

    def cohort(self, cohort: Cohort) -> CohortSettings:
        return self.cohorts.get(cohort) or _unconfigured_cohort()

    def section(self, name: str, keys: Collection[str] | None = None) -> Mapping[str, Any]:
        """A platform's section of the config file (empty when absent); with `keys`, any other
        key in it is a ConfigError with a did-you-mean."""
        with self._named():
            return _checker().section(self.config, name, (), keys)

    def flag(self, key: str, default: bool) -> bool:
        """A true-or-false setting of the config file by its dotted key, like instructors.slack_admins."""
        section, _, name = key.rpartition(".")
        with self._named():
            return _checker().flag(self.section(section), name, tuple(section.split(".")), default)

    def ids(self, key: str) -> frozenset[str]:
        """A list of ids in the config file by its dotted key, like instructors.discord_roles."""
        section, _, name = key.rpartition(".")
        with self._named():
            return _checker().ids(self.section(section), name, tuple(section.split(".")))

    def config_error(self, key: str, message: str) -> ConfigError:
        """A problem with one key of the config file, named as every config message names it."""
        return ConfigError(f"{self.config_source}: {key}: {message}")

    @contextmanager
    def _named(self) -> Iterator[None]:
        """The first problem the config's Checker finds, as a ConfigError naming the file and the key."""
        try:
            yield
        except Invalid as exc:
            raise self.config_error(field_name(exc.path), exc.message) from None


def _checker() -> Checker:
    """How the config file is checked: it is refused at its first problem, which lists the keys allowed."""
    return Checker(list_keys=True, stop_at_first=True)


def port_number(variable: str, text: str) -> int:
    """A TCP port from an environment variable; ConfigError names the variable otherwise."""
    if not text.isdecimal() or not 1 <= int(text) <= 65535:
        raise ConfigError(f"{variable}: '{text[:20]}' is not a port number; set a free port from 1 to 65535, "
                          "such as 3000")
    return int(text)


def flag_variable(variable: str, text: str | None) -> bool:
    """An on/off environment variable (1/0, true/false, yes/no, on/off; unset is off); ConfigError otherwise."""
    word = (text or "0").strip().lower()
    if word not in ("1", "true", "yes", "on", "0", "false", "no", "off"):
        raise ConfigError(f"{variable}: '{word[:20]}' is neither on nor off; set it to 1 or 0")
    return word in ("1", "true", "yes", "on")


def read_config(path: Path) -> Any:
    """The config file as plain data (a regular UTF-8 file, no anchors or aliases)."""
    if not path.exists():
        raise ConfigError(f"STUDYBOT_CONFIG: {path} does not exist; create it (start from "
                          "config/studybot.example.yaml) or unset STUDYBOT_CONFIG")
    try:
        return yamlfile.load(yamlfile.read_text(path)) or {}
    except yamlfile.FileRefused as exc:
        raise ConfigError(f"{path}: line {exc.line}: {exc.message}") from exc
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
        problem = getattr(exc, "problem", None) or "cannot be read"
        raise ConfigError(f"{path}: line {mark.line + 1 if mark else 1}: not valid YAML ({problem}); "
                          "fix that line (quote values that hold a colon)") from exc


def _seconds(c: Checker, section: Mapping, key: str, default: int) -> int:
    value = section.get(key, default)
    if not isinstance(value, int) or isinstance(value, bool) or not 5 <= value <= 3600:
        c.stop(("rounds", key), f"must be a whole number of seconds from 5 to 3600, not {shown(value)}")
    return value


def _cohort(c: Checker, cohort_id: str, data: object,
            platforms: Collection[str]) -> tuple[Cohort, CohortSettings]:
    path: FieldPath = ("cohorts", cohort_id[:40])
    if not isinstance(data, Mapping):
        c.stop(path, f"must be a mapping with platform, timezone, leaderboard and instructors, not {shown(data)}")
    c.known_keys(data, path, COHORT_KEYS)
    platform = data.get("platform")
    if not isinstance(platform, str) or not platform:
        c.stop((*path, "platform"), "is missing: say which platform the cohort is on "
               f"({', '.join(platforms) or 'slack, discord or console'})")
    if platforms and platform not in platforms:
        c.stop((*path, "platform"), f"'{platform[:20]}' is not a platform{did_you_mean(platform, platforms)}; "
               f"write one of {', '.join(platforms)}")
    try:
        zone = ZoneInfo(str(data.get("timezone", "UTC")))
    except (ZoneInfoNotFoundError, ValueError):
        c.stop((*path, "timezone"), f"{shown(data.get('timezone'))} is unknown; use a name such as Europe/Berlin")
    return Cohort(platform, cohort_id), CohortSettings(
        timezone=zone, leaderboard=_leaderboard(c, (*path, "leaderboard"), data.get("leaderboard")),
        daily=_daily(c, (*path, "daily"), data.get("daily")), instructors=c.ids(data, "instructors", path),
        gradebook=_gradebook(c, (*path, "gradebook"), data.get("gradebook")),
        track=_track(c, (*path, "track"), data.get("track")),
        reader=c.flag(data, "reader", path, True),
        review=_review(c, (*path, "review"), data.get("review")),
        streaks=c.flag(data, "streaks", path, True), teams=_teams(c, (*path, "teams"), data.get("teams")),
        team_join=c.flag(data, "team_join", path, False),
        confidence=c.flag(data, "confidence", path, False),
        language=_language(c, (*path, "language"), data.get("language", SOURCE)))


def _language(c: Checker, path: FieldPath, value: object) -> str:
    """A cohort's language: one studybot ships (its posts are written in it)."""
    if not isinstance(value, str) or language_of(value) not in SHIPPED:
        c.stop(path, f"{shown(value)} is not a language studybot ships; write one of {', '.join(SHIPPED)}")
    return str(language_of(value))


def _track(c: Checker, path: FieldPath, data: object) -> tuple[TrackStep, ...]:
    """A track's steps, each `{day: N, time: "HH:MM", <one of> quiz | teachback | review | message}`."""
    if data is None:
        return ()
    if not isinstance(data, list):
        c.stop(path, 'must be a list of steps, like [{day: 0, time: "09:00", quiz: meta-llm-scale}]')
    steps = []
    for n, step in enumerate(data):
        here: FieldPath = (*path, n)
        if not isinstance(step, Mapping):
            c.stop(here, f'{shown(step)} is not a step; write one like {{day: 2, time: "09:00", teachback: meta-tb1}}')
        c.known_keys(step, here, ("day", "time", *TRACK_KINDS))
        day = step.get("day")
        if not isinstance(day, int) or isinstance(day, bool) or not 0 <= day < TRACK_DAYS:
            c.stop((*here, "day"), f"must be a whole number of days after the learner's start, 0 to {TRACK_DAYS - 1},"
                   f" not {shown(day)}")
        kinds = [k for k in TRACK_KINDS if k in step]
        if len(kinds) != 1:
            c.stop(here, f"needs exactly one of {', '.join(TRACK_KINDS)}"
                   + (f", not {' and '.join(kinds)}" if kinds else "") + "; one step delivers one thing")
        what = step[kinds[0]]
        if not isinstance(what, str) or not what.strip():
            c.stop((*here, kinds[0]), f"{shown(what)} is not " + ("a text; write the message in quotes"
                   if kinds[0] == "message" else "an id; write one such as meta-llm-scale"))
        if len(what.strip()) > TRACK_MESSAGE:
            c.stop((*here, kinds[0]), f"{len(what.strip())} characters are more than one message holds "
                   f"({TRACK_MESSAGE}); shorten it")
        steps.append(TrackStep(day, _time(c, (*here, "time"), step.get("time", "09:00")), kinds[0], what.strip()))
    return tuple(steps)


def _review(c: Checker, path: FieldPath, data: object) -> ReviewSettings:
    if data is None:
        return ReviewSettings()
    if not isinstance(data, Mapping):
        c.stop(path, 'needs its settings, like {desired_retention: 0.9, new_cards_per_day: 10, exam: "2027-01-15"}')
    c.known_keys(data, path, REVIEW_KEYS)
    retention = data.get("desired_retention", ReviewSettings.desired_retention)
    low, high = RETENTION_RANGE
    if not isinstance(retention, int | float) or isinstance(retention, bool) or not low <= retention <= high:
        c.stop((*path, "desired_retention"), f"must be a share of cards recalled from {low:.2f} to {high:.2f}, "
               f"like 0.9, not {shown(retention)}")
    new = data.get("new_cards_per_day")
    if new is not None and (not isinstance(new, int) or isinstance(new, bool) or new < 0):
        c.stop((*path, "new_cards_per_day"), f"must be a whole number of cards, 0 or more, like 10, not {shown(new)}")
    exam = data.get("exam")
    exams = exam if isinstance(exam, Mapping) else {}
    return ReviewSettings(
        desired_retention=float(retention), new_cards_per_day=new,
        exam=None if exam is None or exams else _date(c, (*path, "exam"), exam),
        lesson_exams={str(k): _date(c, (*path, "exam", str(k)[:40]), v) for k, v in exams.items()})


def _date(c: Checker, path: FieldPath, value: object) -> date:
    """A day written as an ISO date, "2027-01-15" (unquoted, YAML reads it as a date already)."""
    if type(value) is date:
        return value
    try:
        return date.fromisoformat(value) if isinstance(value, str) else date.fromisoformat("")
    except ValueError:
        c.stop(path, f'{shown(value)} is not a date; write it as year-month-day, like exam: "2027-01-15", '
               "or per lesson, like exam: {meta-llm-scale: \"2027-01-15\"}")


def _teams(c: Checker, path: FieldPath, data: object) -> Mapping[str, frozenset[str]]:
    """Each team's members by user id; a learner is in one team only."""
    if data is None:
        return {}
    if not isinstance(data, Mapping):
        c.stop(path, f"must map team names to user ids, like {{red: [U1, U2], blue: [U3]}}, not {shown(data)}")
    teams: dict[str, frozenset[str]] = {}
    for name, listed in data.items():
        if not isinstance(name, str) or not TEAM_NAME.match(name):
            c.stop((*path, str(name)[:40]), "is not a team name; use up to 24 lower-case letters, digits, - or _, "
                   "like red or study-group-1")
        if not isinstance(listed, list) or not listed or any(isinstance(v, bool | list | dict) or v is None
                                                             for v in listed):
            c.stop((*path, name), f"must list the team's members by user id, like [U1, U2], not {shown(listed)}")
        member_ids = frozenset(str(v) for v in listed)
        for other, others in teams.items():
            if twice := sorted(member_ids & others):
                c.stop((*path, name), f"{twice[0][:40]} is already in team {other}; a learner is in one team only")
        teams[name] = member_ids
    return teams


def _gradebook(c: Checker, path: FieldPath, data: object) -> Mapping[str, str]:
    """Each learner's id in the LMS gradebook, by chat user id; two learners never share one."""
    if data is None:
        return {}
    if not isinstance(data, Mapping):
        c.stop(path, f"must map chat user ids to LMS ids, like {{U0001: s1234567}}, not {shown(data)}")
    out: dict[str, str] = {}
    for user, lms in data.items():
        if not isinstance(lms, str | int) or isinstance(lms, bool) or not str(lms).strip():
            c.stop((*path, str(user)[:40]), f"{shown(lms)} is not an LMS id; write the learner's SIS or ID number, "
                   "quoted if it starts with 0")
        if str(lms) in out.values():
            c.stop((*path, str(user)[:40]), f"'{str(lms)[:40]}' is already the id of another learner; each learner "
                   "needs their own")
        out[str(user)] = str(lms)
    return out


def _leaderboard(c: Checker, path: FieldPath, data: object) -> LeaderboardSchedule | None:
    if data is None:
        return None
    if not isinstance(data, Mapping):
        c.stop(path, 'needs channel, weekday and time, like {channel: C0001, weekday: monday, time: "09:00"}')
    c.known_keys(data, path, LEADERBOARD_KEYS)
    channel = _channel(c, (*path, "channel"), data.get("channel"))
    weekday = str(data.get("weekday", "monday")).lower()
    if weekday not in WEEKDAYS:
        c.stop((*path, "weekday"), f"'{weekday[:20]}' is not a weekday{did_you_mean(weekday, WEEKDAYS)}; "
               f"write one of {', '.join(WEEKDAYS)}")
    return LeaderboardSchedule(channel, WEEKDAYS.index(weekday), _time(c, (*path, "time"), data.get("time", "09:00")))


def _daily(c: Checker, path: FieldPath, data: object) -> DailyQuestion | None:
    if data is None:
        return None
    if not isinstance(data, Mapping):
        c.stop(path, 'needs channel and time, like {channel: C0001, time: "09:00", lesson: meta-llm-scale}')
    c.known_keys(data, path, DAILY_KEYS)
    channel = _channel(c, (*path, "channel"), data.get("channel"))
    lesson = data.get("lesson")
    if lesson is not None and not isinstance(lesson, str):
        c.stop((*path, "lesson"), f"{shown(lesson)} is not a lesson id; write one such as lesson: meta-llm-scale")
    at = _time(c, (*path, "time"), data.get("time", "09:00"))
    reveal = None if data.get("reveal") is None else _time(c, (*path, "reveal"), data.get("reveal"))
    if reveal is not None and reveal <= at:  # it would find no question of that day yet, and never reveal
        c.stop((*path, "reveal"), f"{reveal:%H:%M} is not after the question is posted (time: {at:%H:%M}); write "
               "a later time of that day, or leave reveal out to reveal each question at the next day's post")
    return DailyQuestion(channel, at, lesson, reveal)


def _channel(c: Checker, path: FieldPath, value: object) -> str:
    """A channel id (YAML may read a Discord id as a number)."""
    if not isinstance(value, str | int) or isinstance(value, bool) or not str(value).strip():
        c.stop(path, f"is {'empty' if value is None else shown(value)}; write the channel's id, like "
               "channel: C0123456789")
    return str(value)


def _time(c: Checker, path: FieldPath, value: object) -> time:
    """A time of day written "HH:MM". Unquoted, YAML 1.1 reads 20:00 as the number 1200 (base 60)."""
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 24 * 60:
        hours, minutes = divmod(value, 60)
        c.stop(path, f'YAML reads an unquoted {hours}:{minutes:02d} as the number {value}; '
               f'quote it: time: "{hours:02d}:{minutes:02d}"')
    try:
        return time.fromisoformat(value) if isinstance(value, str) else time.fromisoformat("")
    except ValueError:
        c.stop(path, f'{shown(value)} is not a time of day; write it in quotes, like time: "09:00"')


@cache
def _unconfigured_cohort() -> CohortSettings:
    """The settings of a cohort the config file does not name, made once: every event asks for them."""
    return CohortSettings()
