"""The core's settings, from the environment and the optional STUDYBOT_CONFIG YAML file.

Platform settings (tokens, URLs, ports) are not here: each platform reads its own from the
environment and from its section of the config file (`Settings.section`), and tells the
core which sections are its (`Settings.from_env(..., sections=...)`), so that a misspelt
top-level key is caught without this module knowing any platform.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, field, replace
from datetime import time
from pathlib import Path
from typing import Any, NoReturn
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import yaml

from bot.core import yamlfile
from bot.core.errors import ConfigError
from bot.core.messages import Cohort, Place
from bot.core.suggest import did_you_mean
from bot.grading.scoring import SelfGraded

WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
VARIABLES = ("STUDYBOT_DB", "STUDYBOT_CONTENT", "STUDYBOT_RESULTS_DIR", "STUDYBOT_CONFIG", "STUDYBOT_LOG_LEVEL",
             "STUDYBOT_LOG_FORMAT", "STUDYBOT_METRICS_PORT", "STUDYBOT_METRICS_HOST")
CORE_SECTIONS = ("instructors", "rounds", "cohorts", "leaderboard")
LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
LOG_FORMATS = ("text", "json")
INSTRUCTOR_KEYS = ("everywhere", "slack_admins", "discord_roles", "console")
PLATFORM_NAMES = ("slack", "discord", "console")  # the old instructors.<platform> lists
COHORT_KEYS = ("platform", "timezone", "leaderboard", "daily", "instructors")
LEADERBOARD_KEYS = ("channel", "weekday", "time")
DAILY_KEYS = ("channel", "time", "lesson", "reveal")
ROUNDS_KEYS = ("seconds", "shortest", "longest", "instructors_only")


class Secret(str):
    """A string that never shows itself in a repr, a log line or a traceback."""

    def __repr__(self) -> str:
        return "<secret>"

    __str__ = __repr__

    def reveal(self) -> str:
        return str.__str__(self)


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
class CohortSettings:
    timezone: ZoneInfo = field(default_factory=lambda: ZoneInfo("UTC"))
    leaderboard: LeaderboardSchedule | None = None
    daily: DailyQuestion | None = None
    instructors: frozenset[str] = frozenset()  # user ids


@dataclass(frozen=True)
class Instructors:
    """Who is an instructor: user ids listed per cohort (`cohorts.<id>.instructors`) or, only when
    said explicitly, in every cohort (`instructors.everywhere.<platform>`); and each platform's
    own rules (flags)."""

    per_cohort: Mapping[Cohort, frozenset[str]] = field(default_factory=dict)
    everywhere: Mapping[str, frozenset[str]] = field(default_factory=dict)  # platform -> user ids
    slack_admins: bool = False
    discord_roles: frozenset[str] = frozenset()
    console: bool = True

    def listed(self, cohort: Cohort, user_id: str) -> bool:
        return (user_id in self.per_cohort.get(cohort, frozenset())
                or user_id in self.everywhere.get(cohort.platform, frozenset()))


@dataclass(frozen=True)
class Settings:
    db_path: Path = Path("data/studybot.db")
    content_dir: Path = Path("content")
    results_dir: Path = Path("data/results")
    log_level: str = "INFO"
    log_format: str = "text"  # or json: one object per line
    metrics_port: int | None = None  # where /metrics is served besides Slack's HTTP port
    metrics_host: str = "127.0.0.1"  # and on which address (0.0.0.0 in a container)
    instructors: Instructors = Instructors()
    round_seconds: int = 60
    round_seconds_range: tuple[int, int] = (10, 600)  # what `/quiz round seconds:N` may choose
    rounds_instructors_only: bool = False
    cohorts: Mapping[Cohort, CohortSettings] = field(default_factory=dict)
    self_graded: SelfGraded = SelfGraded.MARK  # how self-graded points enter leaderboards
    config: Mapping[str, Any] = field(default_factory=dict)  # the config file, for the platforms' sections
    config_source: str = "STUDYBOT_CONFIG"  # how messages name the config file

    @classmethod
    def from_env(cls, environ: Mapping[str, str], sections: Collection[str] = (),
                 platforms: Collection[str] = ()) -> Settings:
        """The settings from the environment; `sections` are the platforms' own config sections
        and `platforms` their names (the console is always known)."""

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
        settings = cls(
            db_path=Path(get("STUDYBOT_DB") or cls.db_path),
            content_dir=Path(get("STUDYBOT_CONTENT") or cls.content_dir),
            results_dir=Path(get("STUDYBOT_RESULTS_DIR") or cls.results_dir),
            log_level=level,
            log_format=log_format,
            metrics_port=port_number("STUDYBOT_METRICS_PORT", metrics) if metrics else None,
            metrics_host=get("STUDYBOT_METRICS_HOST") or cls.metrics_host,
        )
        config_path = get("STUDYBOT_CONFIG")
        if config_path:
            settings = replace(settings, config_source=config_path)
            settings = settings.with_config(read_config(Path(config_path)), sections, platforms)
        return settings

    def with_config(self, data: Any, sections: Collection[str] = (), platforms: Collection[str] = ()) -> Settings:
        """Apply the STUDYBOT_CONFIG schema (see the README) on top of these settings."""
        where = _Where(self.config_source)
        if not isinstance(data, Mapping):
            where.fail("(document)", "must be a mapping of settings (key: value lines); "
                       "start from config/studybot.example.yaml")
        where.keys(data, "", (*CORE_SECTIONS, *sections))
        known_platforms = ("console", *platforms) if platforms else ()  # none given: names are not checked
        teach = where.section(data, "instructors")
        rounds = where.section(data, "rounds", ROUNDS_KEYS)
        cohorts = where.section(data, "cohorts")
        board = where.section(data, "leaderboard", ("self_graded",))
        policy = board.get("self_graded", SelfGraded.MARK)
        if policy not in SelfGraded.__members__.values():
            where.fail("leaderboard.self_graded", f"{_shown(policy)} is not a policy"
                       f"{did_you_mean(str(policy), list(SelfGraded))}; write count, mark or exclude")
        seconds, shortest, longest = (_seconds(where, rounds, key, default) for key, default in
                                      (("seconds", 60), ("shortest", 10), ("longest", 600)))
        if not shortest <= seconds <= longest:
            where.fail("rounds.seconds", f"must lie between rounds.shortest ({shortest}) and rounds.longest "
                       f"({longest}), not {seconds}")
        for key in (k for k in teach if k not in INSTRUCTOR_KEYS):
            name = str(key)[:40]
            if key in (*PLATFORM_NAMES, *platforms):
                where.fail(f"instructors.{name}", "is not a setting; list instructors per cohort under "
                           f"cohorts.<id>.instructors, or for every cohort under instructors.everywhere.{name}")
            where.fail(f"instructors.{name}", f"unknown key{did_you_mean(name, INSTRUCTOR_KEYS)}; the keys under "
                       f"instructors are {', '.join(INSTRUCTOR_KEYS)}")
        everywhere = where.section(teach, "everywhere", known_platforms or None, prefix="instructors.")
        parsed = dict(_cohort(where, str(k), v, known_platforms) for k, v in cohorts.items())
        return replace(
            self,
            instructors=Instructors(
                per_cohort={c: s.instructors for c, s in parsed.items() if s.instructors},
                everywhere={str(k): where.ids(everywhere, f"instructors.everywhere.{k}") for k in everywhere},
                slack_admins=where.flag(teach, "instructors.slack_admins", False),
                discord_roles=where.ids(teach, "instructors.discord_roles"),
                console=where.flag(teach, "instructors.console", True),
            ),
            round_seconds=seconds,
            round_seconds_range=(shortest, longest),
            rounds_instructors_only=where.flag(rounds, "rounds.instructors_only", False),
            self_graded=SelfGraded(policy),
            cohorts=parsed,
            config=data,
        )

    def cohort(self, cohort: Cohort) -> CohortSettings:
        return self.cohorts.get(cohort) or CohortSettings()

    def channels(self, platform: str) -> list[tuple[str, Place]]:
        """The channels this platform's cohorts post to on a schedule, as (config key, place)."""
        found = []
        for cohort, chosen in self.cohorts.items():
            for what, plan in (("leaderboard", chosen.leaderboard), ("daily", chosen.daily)):
                if cohort.platform == platform and plan is not None:
                    found.append((f"cohorts.{cohort.id}.{what}.channel", Place(platform, cohort.id, plan.channel)))
        return found

    def section(self, name: str, keys: Collection[str] | None = None) -> Mapping[str, Any]:
        """A platform's section of the config file (empty when absent); with `keys`, any other
        key in it is a ConfigError with a did-you-mean."""
        return _Where(self.config_source).section(self.config, name, keys)

    def config_error(self, key: str, message: str) -> ConfigError:
        """A problem with one key of the config file, named as every config message names it."""
        return _Where(self.config_source).error(key, message)


def port_number(variable: str, text: str) -> int:
    """A TCP port from an environment variable; ConfigError names the variable otherwise."""
    if not text.isdecimal() or not 1 <= int(text) <= 65535:
        raise ConfigError(f"{variable}: '{text[:20]}' is not a port number; set a free port from 1 to 65535, "
                          "such as 3000")
    return int(text)


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


class _Where:
    """The config file being read: every problem names the file and the key, and says what to do."""

    def __init__(self, source: str) -> None:
        self.source = source

    def error(self, key: str, message: str) -> ConfigError:
        return ConfigError(f"{self.source}: {key}: {message}")

    def fail(self, key: str, message: str) -> NoReturn:
        raise self.error(key, message)

    def keys(self, data: Mapping, prefix: str, allowed: Collection[str]) -> None:
        for key in data:
            if key not in allowed:
                name = str(key)[:40]
                self.fail(prefix + name, f"unknown key{did_you_mean(name, allowed)}; "
                          f"the keys {'under ' + prefix.rstrip('.') if prefix else 'here'} are {', '.join(allowed)}")

    def section(self, data: Mapping, key: str, allowed: Collection[str] | None = None, prefix: str = "") -> Mapping:
        value = data.get(key) or {}
        if not isinstance(value, Mapping):
            self.fail(prefix + key, f"must be a mapping (indented key: value lines), not {_shown(value)}")
        if allowed is not None:
            self.keys(value, prefix + key + ".", allowed)
        return value

    def ids(self, section: Mapping, key: str) -> frozenset[str]:
        value = section.get(key.rsplit(".", 1)[-1]) or []
        if not isinstance(value, list) or any(isinstance(v, bool | list | dict) or v is None for v in value):
            self.fail(key, "must be a list of ids, like [U0TEACH1, U0TEACH2]")
        return frozenset(str(v) for v in value)

    def flag(self, section: Mapping, key: str, default: bool) -> bool:
        value = section.get(key.rsplit(".", 1)[-1], default)
        if not isinstance(value, bool):
            self.fail(key, f"must be true or false, not {_shown(value)}")
        return value


def _shown(value: object) -> str:
    """A value as a message may show it: a short scalar, or what kind of thing it is."""
    if isinstance(value, str):
        return f"'{value[:20]}'"
    if isinstance(value, bool | int | float) or value is None:
        return "null" if value is None else str(value).lower() if isinstance(value, bool) else str(value)
    return "a list" if isinstance(value, list) else "a mapping"


def _seconds(where: _Where, section: Mapping, key: str, default: int) -> int:
    value = section.get(key, default)
    if not isinstance(value, int) or isinstance(value, bool) or not 5 <= value <= 3600:
        where.fail(f"rounds.{key}", f"must be a whole number of seconds from 5 to 3600, not {_shown(value)}")
    return value


def _cohort(where: _Where, cohort_id: str, data: object,
            platforms: Collection[str]) -> tuple[Cohort, CohortSettings]:
    key = f"cohorts.{cohort_id[:40]}"
    if not isinstance(data, Mapping):
        where.fail(key, f"must be a mapping with platform, timezone, leaderboard and instructors, not {_shown(data)}")
    where.keys(data, key + ".", COHORT_KEYS)
    platform = data.get("platform")
    if not isinstance(platform, str) or not platform:
        where.fail(f"{key}.platform", "is missing: say which platform the cohort is on "
                   f"({', '.join(platforms) or 'slack, discord or console'})")
    if platforms and platform not in platforms:
        where.fail(f"{key}.platform", f"'{platform[:20]}' is not a platform{did_you_mean(platform, platforms)}; "
                   f"write one of {', '.join(platforms)}")
    try:
        zone = ZoneInfo(str(data.get("timezone", "UTC")))
    except (ZoneInfoNotFoundError, ValueError):
        where.fail(f"{key}.timezone", f"{_shown(data.get('timezone'))} is unknown; use a name such as Europe/Berlin")
    board = data.get("leaderboard")
    schedule = None
    if board is not None:
        at = f"{key}.leaderboard"
        if not isinstance(board, Mapping):
            where.fail(at, 'needs channel, weekday and time, like {channel: C0001, weekday: monday, time: "09:00"}')
        where.keys(board, at + ".", LEADERBOARD_KEYS)
        channel = _channel(where, f"{at}.channel", board.get("channel"))
        weekday = str(board.get("weekday", "monday")).lower()
        if weekday not in WEEKDAYS:
            where.fail(f"{at}.weekday", f"'{weekday[:20]}' is not a weekday{did_you_mean(weekday, WEEKDAYS)}; "
                       f"write one of {', '.join(WEEKDAYS)}")
        schedule = LeaderboardSchedule(channel, WEEKDAYS.index(weekday), _time(where, f"{at}.time",
                                                                                  board.get("time", "09:00")))
    return Cohort(platform, cohort_id), CohortSettings(timezone=zone, leaderboard=schedule,
                                                       daily=_daily(where, f"{key}.daily", data.get("daily")),
                                                       instructors=where.ids(data, f"{key}.instructors"))


def _daily(where: _Where, key: str, data: object) -> DailyQuestion | None:
    if data is None:
        return None
    if not isinstance(data, Mapping):
        where.fail(key, 'needs channel and time, like {channel: C0001, time: "09:00", lesson: meta-llm-scale}')
    where.keys(data, key + ".", DAILY_KEYS)
    channel = _channel(where, f"{key}.channel", data.get("channel"))
    lesson = data.get("lesson")
    if lesson is not None and not isinstance(lesson, str):
        where.fail(f"{key}.lesson", f"{_shown(lesson)} is not a lesson id; write one such as lesson: meta-llm-scale")
    at = _time(where, f"{key}.time", data.get("time", "09:00"))
    reveal = None if data.get("reveal") is None else _time(where, f"{key}.reveal", data.get("reveal"))
    if reveal is not None and reveal <= at:  # it would find no question of that day yet, and never reveal
        where.fail(f"{key}.reveal", f"{reveal:%H:%M} is not after the question is posted (time: {at:%H:%M}); write "
                   "a later time of that day, or leave reveal out to reveal each question at the next day's post")
    return DailyQuestion(channel, at, lesson, reveal)


def _channel(where: _Where, key: str, value: object) -> str:
    """A channel id (YAML may read a Discord id as a number)."""
    if not isinstance(value, str | int) or isinstance(value, bool) or not str(value).strip():
        where.fail(key, f"is {'empty' if value is None else _shown(value)}; write the channel's id, like "
                   "channel: C0123456789")
    return str(value)


def _time(where: _Where, key: str, value: object) -> time:
    """A time of day written "HH:MM". Unquoted, YAML 1.1 reads 20:00 as the number 1200 (base 60)."""
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 24 * 60:
        hours, minutes = divmod(value, 60)
        where.fail(key, f'YAML reads an unquoted {hours}:{minutes:02d} as the number {value}; '
                   f'quote it: time: "{hours:02d}:{minutes:02d}"')
    try:
        return time.fromisoformat(value) if isinstance(value, str) else time.fromisoformat("")
    except ValueError:
        where.fail(key, f'{_shown(value)} is not a time of day; write it in quotes, like time: "09:00"')
