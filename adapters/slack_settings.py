"""Slack's settings and its entry in the platform registry (no SDK import, so that the CLI
can read them without loading slack-bolt)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

from adapters.platform import Listen, Platform
from bot.core.config import Secret, Settings, flag_variable, port_number
from bot.core.errors import ConfigError

# The bot scopes of slack_manifest.yaml (oauth_config.scopes.bot): what "Add to Slack" asks for.
SCOPES = ("channels:read", "commands", "chat:write", "chat:write.public", "im:write", "files:write", "groups:read",
          "users:read")
INSTALL_PATH = "/slack/install"
REDIRECT_PATH = "/slack/oauth_redirect"


@dataclass(frozen=True)
class SlackSettings:
    bot_token: Secret | None = None
    app_token: Secret | None = None  # with it, Socket Mode; without, HTTP mode with the signing secret
    signing_secret: Secret | None = None
    api_url: str = "https://slack.com/api/"
    http_host: str = "0.0.0.0"
    http_port: int = 3000
    reuse_port: bool = False  # processes on this machine share http_port (SO_REUSEPORT)
    admins_are_instructors: bool = False  # instructors.slack_admins: workspace admins and owners are instructors
    # Distribution ("Add to Slack" for many workspaces): the app's client id and secret turn it on
    client_id: str | None = None
    client_secret: Secret | None = None
    scopes: tuple[str, ...] = SCOPES
    redirect_url: str | None = None  # the app's Redirect URL; its path is served (default /slack/oauth_redirect)
    installer_is_instructor: bool = True  # instructors.slack_installer: whoever installs teaches that workspace

    @classmethod
    def from_env(cls, environ: Mapping[str, str], settings: Settings | None = None) -> SlackSettings:
        def get(name: str) -> str | None:
            return environ.get(name, "").strip() or None

        def secret(name: str) -> Secret | None:
            value = get(name)
            return Secret(value) if value else None

        client_id, client_secret = get("SLACK_CLIENT_ID"), secret("SLACK_CLIENT_SECRET")
        if bool(client_id) != bool(client_secret):
            raise ConfigError("SLACK_CLIENT_ID and SLACK_CLIENT_SECRET go together (the app's Basic Information "
                              "page): set both to install studybot in many workspaces, or neither")
        if client_id and get("SLACK_BOT_TOKEN"):
            raise ConfigError("SLACK_BOT_TOKEN and SLACK_CLIENT_ID are both set: keep SLACK_BOT_TOKEN for one "
                              "workspace, or the client id and secret for installs in many, not both")
        if client_id and get("SLACK_APP_TOKEN"):
            raise ConfigError("installs in many workspaces (SLACK_CLIENT_ID) need HTTP mode: unset SLACK_APP_TOKEN "
                              "and set SLACK_SIGNING_SECRET")
        redirect = get("SLACK_REDIRECT_URL")
        if redirect and not (urlsplit(redirect).scheme in ("http", "https") and urlsplit(redirect).netloc):
            raise ConfigError(f"SLACK_REDIRECT_URL: '{redirect[:60]}' is not a URL; write the app's Redirect URL, "
                              f"like https://studybot.example.com{REDIRECT_PATH}")
        scopes = tuple(s.strip() for s in (get("SLACK_SCOPES") or "").split(",") if s.strip()) or cls.scopes
        return cls(bot_token=secret("SLACK_BOT_TOKEN"), app_token=secret("SLACK_APP_TOKEN"),
                   signing_secret=secret("SLACK_SIGNING_SECRET"), api_url=get("SLACK_API_URL") or cls.api_url,
                   http_host=get("STUDYBOT_HTTP_HOST") or cls.http_host,
                   http_port=port_number("STUDYBOT_HTTP_PORT", get("STUDYBOT_HTTP_PORT") or "3000"),
                   reuse_port=flag_variable("STUDYBOT_REUSE_PORT", get("STUDYBOT_REUSE_PORT")),
                   admins_are_instructors=admins_are_instructors(settings) if settings else False,
                   client_id=client_id, client_secret=client_secret, scopes=scopes, redirect_url=redirect,
                   installer_is_instructor=settings.flag("instructors.slack_installer", True) if settings else True)

    @property
    def distributed(self) -> bool:
        """Installs in many workspaces through "Add to Slack" (each with its own bot token)."""
        return bool(self.client_id and self.client_secret)

    @property
    def redirect_path(self) -> str:
        return (urlsplit(self.redirect_url).path or REDIRECT_PATH) if self.redirect_url else REDIRECT_PATH

    @property
    def configured(self) -> bool:
        if self.distributed:
            return bool(self.signing_secret)
        return bool(self.bot_token and (self.app_token or self.signing_secret))

    @property
    def listens(self) -> tuple[Listen, ...]:
        """HTTP mode's address, and the variable that sets its port (Socket Mode listens nowhere)."""
        if self.app_token:
            return ()
        return (Listen(self.http_host, self.http_port, "STUDYBOT_HTTP_PORT", self.reuse_port),)


def admins_are_instructors(settings: Settings) -> bool:
    """Slack's instructor rule: with `instructors.slack_admins: true`, workspace admins and owners too."""
    return settings.flag("instructors.slack_admins", False)


SLACK = Platform(
    name="slack",
    variables=("SLACK_BOT_TOKEN", "SLACK_APP_TOKEN", "SLACK_SIGNING_SECRET", "SLACK_API_URL",
               "STUDYBOT_HTTP_HOST", "STUDYBOT_HTTP_PORT", "SLACK_CLIENT_ID", "SLACK_CLIENT_SECRET",
               "SLACK_REDIRECT_URL", "SLACK_SCOPES", "STUDYBOT_REUSE_PORT"),
    secrets=(r"xox[abposre]-[A-Za-z0-9-]+", r"xox[abposre]\.xox[abposr]-[A-Za-z0-9-]+", r"xapp-[A-Za-z0-9-]+"),
    noisy_loggers=("slack_bolt", "slack_sdk"),
    sections=(),
    read=SlackSettings.from_env,
    configured=lambda s: bool(s.configured),
    listens=lambda s: s.listens,
    instructor_keys=("slack_admins", "slack_installer"),
    instructor_rule=admins_are_instructors,
    needs="SLACK_BOT_TOKEN (with SLACK_APP_TOKEN or SLACK_SIGNING_SECRET), or SLACK_CLIENT_ID and "
          "SLACK_CLIENT_SECRET with SLACK_SIGNING_SECRET",
    adapter="adapters.slack_app:SlackAdapter",
)
