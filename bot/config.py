"""Settings from the environment and the optional STUDYBOT_CONFIG YAML file."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import time
from pathlib import Path
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import yaml

WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
VARIABLES = (
    "SLACK_BOT_TOKEN", "SLACK_APP_TOKEN", "SLACK_SIGNING_SECRET", "SLACK_API_URL", "DISCORD_TOKEN",
    "DISCORD_API_URL", "DISCORD_GATEWAY_URL", "STUDYBOT_HTTP_HOST", "STUDYBOT_HTTP_PORT", "STUDYBOT_DB",
    "STUDYBOT_CONTENT", "STUDYBOT_RESULTS_DIR", "STUDYBOT_CONFIG", "STUDYBOT_LOG_LEVEL",
)
PLATFORM_VARIABLES = "SLACK_BOT_TOKEN (with SLACK_APP_TOKEN or SLACK_SIGNING_SECRET) or DISCORD_TOKEN"


class ConfigError(Exception):
    """The settings cannot be used; the message names the variable or key to fix."""


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


@dataclass(frozen=True)
class Instructors:
    slack: frozenset[str] = frozenset()
    slack_admins: bool = False
    discord: frozenset[str] = frozenset()
    discord_roles: frozenset[str] = frozenset()
    console: bool = True


@dataclass(frozen=True)
class Settings:
    slack_bot_token: Secret | None = None
    slack_app_token: Secret | None = None
    slack_signing_secret: Secret | None = None
    slack_api_url: str = "https://slack.com/api/"
    discord_token: Secret | None = None
    discord_api_url: str = "https://discord.com/api/v10"
    discord_gateway_url: str = "wss://gateway.discord.gg/"
    http_host: str = "0.0.0.0"
    http_port: int = 3000
    db_path: Path = Path("data/studybot.db")
    content_dir: Path = Path("content")
    results_dir: Path = Path("data/results")
    log_level: str = "INFO"
    instructors: Instructors = Instructors()
    round_seconds: int = 60
    rounds_instructors_only: bool = False
    cohorts: Mapping[str, CohortSettings] = field(default_factory=dict)
    discord_sync_guilds: tuple[int, ...] = ()

    @classmethod
    def from_env(cls, environ: Mapping[str, str]) -> Settings:
        def get(name: str) -> str | None:
            value = environ.get(name, "").strip()
            return value or None

        def secret(name: str) -> Secret | None:
            value = get(name)
            return Secret(value) if value else None

        port = get("STUDYBOT_HTTP_PORT") or "3000"
        if not port.isdigit():
            raise ConfigError(f"STUDYBOT_HTTP_PORT must be a port number, not {port!r}")
        level = (get("STUDYBOT_LOG_LEVEL") or "INFO").upper()
        if level not in ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"):
            raise ConfigError(f"STUDYBOT_LOG_LEVEL must be DEBUG, INFO, WARNING or ERROR, not {level!r}")
        settings = cls(
            slack_bot_token=secret("SLACK_BOT_TOKEN"),
            slack_app_token=secret("SLACK_APP_TOKEN"),
            slack_signing_secret=secret("SLACK_SIGNING_SECRET"),
            slack_api_url=get("SLACK_API_URL") or cls.slack_api_url,
            discord_token=secret("DISCORD_TOKEN"),
            discord_api_url=(get("DISCORD_API_URL") or cls.discord_api_url).rstrip("/"),
            discord_gateway_url=get("DISCORD_GATEWAY_URL") or cls.discord_gateway_url,
            http_host=get("STUDYBOT_HTTP_HOST") or cls.http_host,
            http_port=int(port),
            db_path=Path(get("STUDYBOT_DB") or cls.db_path),
            content_dir=Path(get("STUDYBOT_CONTENT") or cls.content_dir),
            results_dir=Path(get("STUDYBOT_RESULTS_DIR") or cls.results_dir),
            log_level=level,
        )
        config_path = get("STUDYBOT_CONFIG")
        if config_path:
            settings = settings.with_config_file(Path(config_path))
        return settings

    def with_config_file(self, path: Path) -> Settings:
        try:
            data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        except OSError as exc:
            raise ConfigError(f"STUDYBOT_CONFIG: cannot read {path}: {exc.strerror}") from exc
        except yaml.YAMLError as exc:
            raise ConfigError(f"STUDYBOT_CONFIG: {path} is not valid YAML: {exc}") from exc
        return self.with_config(data)

    def with_config(self, data: Mapping) -> Settings:
        """Apply the STUDYBOT_CONFIG schema (see the README) on top of these settings."""
        if not isinstance(data, Mapping):
            raise ConfigError("STUDYBOT_CONFIG must be a mapping of settings")
        teach = _section(data, "instructors")
        rounds = _section(data, "rounds")
        discord = _section(data, "discord")
        cohorts = _section(data, "cohorts")
        seconds = rounds.get("seconds", 60)
        if not isinstance(seconds, int) or isinstance(seconds, bool) or not 5 <= seconds <= 3600:
            raise ConfigError("rounds.seconds must be a whole number of seconds from 5 to 3600")
        return replace(
            self,
            instructors=Instructors(
                slack=_ids(teach, "slack"),
                slack_admins=_flag(teach, "slack_admins", False),
                discord=_ids(teach, "discord"),
                discord_roles=_ids(teach, "discord_roles"),
                console=_flag(teach, "console", True),
            ),
            round_seconds=seconds,
            rounds_instructors_only=_flag(rounds, "instructors_only", False),
            cohorts={str(k): _cohort(str(k), v) for k, v in cohorts.items()},
            discord_sync_guilds=tuple(int(g) for g in _ids(discord, "sync_guilds")),
        )

    def cohort(self, cohort_id: str) -> CohortSettings:
        return self.cohorts.get(cohort_id) or CohortSettings()

    @property
    def platforms(self) -> list[str]:
        """The platforms whose credentials are set."""
        found = []
        if self.slack_bot_token and (self.slack_app_token or self.slack_signing_secret):
            found.append("slack")
        if self.discord_token:
            found.append("discord")
        return found


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


def _cohort(cohort_id: str, data: object) -> CohortSettings:
    if not isinstance(data, Mapping):
        raise ConfigError(f"STUDYBOT_CONFIG: cohorts.{cohort_id} must be a mapping")
    try:
        zone = ZoneInfo(str(data.get("timezone", "UTC")))
    except (ZoneInfoNotFoundError, ValueError) as exc:
        raise ConfigError(f"STUDYBOT_CONFIG: cohorts.{cohort_id}.timezone is unknown") from exc
    board = data.get("leaderboard")
    schedule = None
    if board is not None:
        where = f"STUDYBOT_CONFIG: cohorts.{cohort_id}.leaderboard"
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
    return CohortSettings(timezone=zone, leaderboard=schedule)
