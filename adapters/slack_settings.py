"""Slack's settings and its entry in the platform registry (no SDK import, so that the CLI
can read them without loading slack-bolt)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from adapters.platform import Platform
from bot.core.config import Secret, Settings, port_number


@dataclass(frozen=True)
class SlackSettings:
    bot_token: Secret | None = None
    app_token: Secret | None = None  # with it, Socket Mode; without, HTTP mode with the signing secret
    signing_secret: Secret | None = None
    api_url: str = "https://slack.com/api/"
    http_host: str = "0.0.0.0"
    http_port: int = 3000
    admins_are_instructors: bool = False  # instructors.slack_admins: workspace admins and owners are instructors

    @classmethod
    def from_env(cls, environ: Mapping[str, str], settings: Settings | None = None) -> SlackSettings:
        def get(name: str) -> str | None:
            return environ.get(name, "").strip() or None

        def secret(name: str) -> Secret | None:
            value = get(name)
            return Secret(value) if value else None

        return cls(bot_token=secret("SLACK_BOT_TOKEN"), app_token=secret("SLACK_APP_TOKEN"),
                   signing_secret=secret("SLACK_SIGNING_SECRET"), api_url=get("SLACK_API_URL") or cls.api_url,
                   http_host=get("STUDYBOT_HTTP_HOST") or cls.http_host,
                   http_port=port_number("STUDYBOT_HTTP_PORT", get("STUDYBOT_HTTP_PORT") or "3000"),
                   admins_are_instructors=admins_are_instructors(settings) if settings else False)

    @property
    def configured(self) -> bool:
        return bool(self.bot_token and (self.app_token or self.signing_secret))

    @property
    def listens(self) -> tuple[tuple[str, int, str], ...]:
        """HTTP mode's address, and the variable that sets its port (Socket Mode listens nowhere)."""
        return () if self.app_token else ((self.http_host, self.http_port, "STUDYBOT_HTTP_PORT"),)


def admins_are_instructors(settings: Settings) -> bool:
    """Slack's instructor rule: with `instructors.slack_admins: true`, workspace admins and owners too."""
    return settings.flag("instructors.slack_admins", False)


SLACK = Platform(
    name="slack",
    variables=("SLACK_BOT_TOKEN", "SLACK_APP_TOKEN", "SLACK_SIGNING_SECRET", "SLACK_API_URL",
               "STUDYBOT_HTTP_HOST", "STUDYBOT_HTTP_PORT"),
    secrets=(r"xox[abposr]-[A-Za-z0-9-]+", r"xapp-[A-Za-z0-9-]+"),
    noisy_loggers=("slack_bolt", "slack_sdk"),
    sections=(),
    read=SlackSettings.from_env,
    configured=lambda s: bool(s.configured),
    listens=lambda s: s.listens,
    instructor_keys=("slack_admins",),
    instructor_rule=admins_are_instructors,
    needs="SLACK_BOT_TOKEN (with SLACK_APP_TOKEN or SLACK_SIGNING_SECRET)",
    adapter="adapters.slack_app:SlackAdapter",
)
