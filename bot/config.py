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
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import yaml

from bot.errors import ConfigError
from bot.messages import Cohort
from bot.scoring import SelfGraded
from bot.suggest import did_you_mean

WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
VARIABLES = ("STUDYBOT_DB", "STUDYBOT_CONTENT", "STUDYBOT_RESULTS_DIR", "STUDYBOT_CONFIG", "STUDYBOT_LOG_LEVEL")
CORE_SECTIONS = ("instructors", "rounds", "cohorts", "leaderboard")
INSTRUCTOR_KEYS = ("everywhere", "slack_admins", "discord_roles", "console")
PLATFORM_NAMES = ("slack", "discord", "console")  # the old instructors.<platform> lists


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
class CohortSettings:
    timezone: ZoneInfo = field(default_factory=lambda: ZoneInfo("UTC"))
    leaderboard: LeaderboardSchedule | None = None
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
    instructors: Instructors = Instructors()
    round_seconds: int = 60
    rounds_instructors_only: bool = False
    cohorts: Mapping[Cohort, CohortSettings] = field(default_factory=dict)
    self_graded: SelfGraded = SelfGraded.MARK  # how self-graded points enter leaderboards
    config: Mapping[str, Any] = field(default_factory=dict)  # the config file, for the platforms' sections

    @classmethod
    def from_env(cls, environ: Mapping[str, str], sections: Collection[str] = ()) -> Settings:
        """The settings from the environment; `sections` are the platforms' own config sections."""

        def get(name: str) -> str | None:
            value = environ.get(name, "").strip()
            return value or None

        level = (get("STUDYBOT_LOG_LEVEL") or "INFO").upper()
        if level not in ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"):
            raise ConfigError(f"STUDYBOT_LOG_LEVEL must be DEBUG, INFO, WARNING or ERROR, not {level[:20]!r}")
        settings = cls(
            db_path=Path(get("STUDYBOT_DB") or cls.db_path),
            content_dir=Path(get("STUDYBOT_CONTENT") or cls.content_dir),
            results_dir=Path(get("STUDYBOT_RESULTS_DIR") or cls.results_dir),
            log_level=level,
        )
        config_path = get("STUDYBOT_CONFIG")
        if config_path:
            settings = settings.with_config(read_config(Path(config_path)), sections)
        return settings

    def with_config(self, data: Mapping, sections: Collection[str] = ()) -> Settings:
        """Apply the STUDYBOT_CONFIG schema (see the README) on top of these settings."""
        if not isinstance(data, Mapping):
            raise ConfigError("STUDYBOT_CONFIG must be a mapping of settings")
        known = (*CORE_SECTIONS, *sections)
        for key in data:
            if key not in known:
                raise ConfigError(f"STUDYBOT_CONFIG: unknown key '{str(key)[:40]}'{did_you_mean(str(key), known)}; "
                                  f"the keys are {', '.join(known)}")
        teach = _section(data, "instructors")
        rounds = _section(data, "rounds")
        cohorts = _section(data, "cohorts")
        board = _section(data, "leaderboard")
        policy = str(board.get("self_graded", SelfGraded.MARK))
        if policy not in SelfGraded.__members__.values():
            raise ConfigError(f"STUDYBOT_CONFIG: leaderboard.self_graded must be count, mark or exclude, "
                              f"not {policy[:20]!r}")
        seconds = rounds.get("seconds", 60)
        if not isinstance(seconds, int) or isinstance(seconds, bool) or not 5 <= seconds <= 3600:
            raise ConfigError("STUDYBOT_CONFIG: rounds.seconds must be a whole number of seconds from 5 to 3600")
        for key in teach:
            if key not in INSTRUCTOR_KEYS:
                raise ConfigError(f"STUDYBOT_CONFIG: instructors.{str(key)[:40]} is not a setting; list instructors "
                                  f"per cohort under cohorts.<id>.instructors, or for every cohort under "
                                  f"instructors.everywhere.{str(key)[:40]}" if key in PLATFORM_NAMES else
                                  f"STUDYBOT_CONFIG: unknown key instructors.{str(key)[:40]}"
                                  f"{did_you_mean(str(key), INSTRUCTOR_KEYS)}")
        everywhere = _section(teach, "everywhere")
        parsed = dict(_cohort(str(k), v) for k, v in cohorts.items())
        return replace(
            self,
            instructors=Instructors(
                per_cohort={c: s.instructors for c, s in parsed.items() if s.instructors},
                everywhere={str(k): _ids(everywhere, str(k)) for k in everywhere},
                slack_admins=_flag(teach, "slack_admins", False),
                discord_roles=_ids(teach, "discord_roles"),
                console=_flag(teach, "console", True),
            ),
            round_seconds=seconds,
            rounds_instructors_only=_flag(rounds, "instructors_only", False),
            self_graded=SelfGraded(policy),
            cohorts=parsed,
            config=data,
        )

    def cohort(self, cohort: Cohort) -> CohortSettings:
        return self.cohorts.get(cohort) or CohortSettings()

    def section(self, name: str) -> Mapping[str, Any]:
        """A platform's section of the config file (empty when absent)."""
        return _section(self.config, name)


def read_config(path: Path) -> Any:
    try:
        return yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except OSError as exc:
        raise ConfigError(f"STUDYBOT_CONFIG: cannot read {path}: {exc.strerror}") from exc
    except yaml.YAMLError as exc:
        raise ConfigError(f"STUDYBOT_CONFIG: {path} is not valid YAML: {exc}") from exc


def _section(data: Mapping, key: str) -> Mapping:
    value = data.get(key) or {}
    if not isinstance(value, Mapping):
        raise ConfigError(f"STUDYBOT_CONFIG: {key} must be a mapping")
    return value


def _ids(section: Mapping, key: str) -> frozenset[str]:
    value = section.get(key) or []
    if not isinstance(value, list):
        raise ConfigError(f"STUDYBOT_CONFIG: {key} must be a list")
    return frozenset(str(v) for v in value)


def _flag(section: Mapping, key: str, default: bool) -> bool:
    value = section.get(key, default)
    if not isinstance(value, bool):
        raise ConfigError(f"STUDYBOT_CONFIG: {key} must be true or false")
    return value


def _cohort(cohort_id: str, data: object) -> tuple[Cohort, CohortSettings]:
    where = f"STUDYBOT_CONFIG: cohorts.{cohort_id}"
    if not isinstance(data, Mapping):
        raise ConfigError(f"{where} must be a mapping")
    platform = data.get("platform")
    if not isinstance(platform, str) or not platform:
        raise ConfigError(f"{where}.platform is missing: say which platform the cohort is on "
                          "(slack, discord or console)")
    try:
        zone = ZoneInfo(str(data.get("timezone", "UTC")))
    except (ZoneInfoNotFoundError, ValueError) as exc:
        raise ConfigError(f"{where}.timezone is unknown; use a name such as Europe/Berlin") from exc
    board = data.get("leaderboard")
    schedule = None
    if board is not None:
        where = f"{where}.leaderboard"
        if not isinstance(board, Mapping) or "channel" not in board:
            raise ConfigError(f"{where} needs channel, weekday and time")
        weekday = str(board.get("weekday", "monday")).lower()
        if weekday not in WEEKDAYS:
            raise ConfigError(f"{where}.weekday must be one of {', '.join(WEEKDAYS)}")
        try:
            at = time.fromisoformat(str(board.get("time", "09:00")))
        except ValueError as exc:
            raise ConfigError(f'{where}.time must look like "09:00"') from exc
        schedule = LeaderboardSchedule(str(board["channel"]), WEEKDAYS.index(weekday), at)
    return Cohort(platform, cohort_id), CohortSettings(timezone=zone, leaderboard=schedule,
                                                       instructors=_ids(data, "instructors"))
