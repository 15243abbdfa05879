""""Add to Slack": Bolt's OAuth flow over studybot's installs (`adapters.slack_installs`), its two
pages (`/slack/install`, then Slack's redirect back with a code), and who an install makes an
instructor.

The install page is unauthenticated and each visit stores a one-time state, so visits are bounded per
address (`Limits.install_pages_per_client` within the state's lifetime) and unused states expire
(`STATE_TTL`, and at most `MOST_STATES` at once): a flood is answered 429 or 503 and stores nothing.
"""

from __future__ import annotations

import logging
from urllib.parse import urljoin

from aiohttp import web
from slack_bolt.adapter.aiohttp import to_aiohttp_response
from slack_bolt.async_app import AsyncApp
from slack_bolt.oauth.async_oauth_flow import AsyncOAuthFlow
from slack_bolt.oauth.async_oauth_settings import AsyncOAuthSettings
from slack_bolt.request.async_request import AsyncBoltRequest

from adapters.http_guard import Allowance, Limits
from adapters.log_guard import RefusalLog
from adapters.slack_installs import (
    MOST_STATES,
    STATE_TTL,
    InstallationStore,
    InstallsAuthorize,
    OAuthStates,
    TooManyStates,
    Workspaces,
    rotator,
)
from adapters.slack_payloads import PLATFORM
from adapters.slack_settings import INSTALL_PATH, SlackSettings
from bot.core.config import Instructors
from bot.core.errors import DeliveryFailed
from bot.core.messages import Cohort
from bot.store import Store

log = logging.getLogger("studybot.slack")

ROTATE_MINUTES = 120  # a rotating token is refreshed this long before it expires (Bolt's default)


class InstallFlow:
    """Installs in many workspaces: Bolt's OAuth settings and authorization, and the install pages."""

    def __init__(self, store: Store, settings: SlackSettings, base_url: str, limits: Limits,
                 bolt_log: logging.Logger) -> None:
        assert settings.client_id is not None and settings.client_secret is not None
        client_secret = settings.client_secret.reveal()
        self.settings = settings
        self.installs = store.installs
        self.workspaces = Workspaces(store, rotator(settings.client_id, client_secret, base_url), ROTATE_MINUTES)
        self.authorize = InstallsAuthorize(self.workspaces)
        self.oauth = AsyncOAuthSettings(
            client_id=settings.client_id, client_secret=client_secret, scopes=list(settings.scopes),
            redirect_uri=settings.redirect_url, install_path=INSTALL_PATH, redirect_uri_path=settings.redirect_path,
            authorization_url=urljoin(base_url, "/oauth/v2/authorize"),
            installation_store=InstallationStore(store, changed=self.workspaces.forget),
            installation_store_bot_only=True, state_store=OAuthStates(store),
            token_rotation_expiration_minutes=ROTATE_MINUTES, logger=bolt_log)
        self._pages = Allowance(limits.install_pages_per_client, STATE_TTL.total_seconds())
        self._refused = RefusalLog(log)
        self._app: AsyncApp | None = None

    def serve(self, server: web.Application, app: AsyncApp) -> None:
        """Add the install page and the redirect back to `server`, answered by `app`'s OAuth flow."""
        self._app = app
        server.router.add_get(INSTALL_PATH, self._install_page)
        server.router.add_get(self.settings.redirect_path, self._redirected)

    async def installed(self) -> int:
        """How many workspaces have studybot installed now."""
        return sum(1 for i in await self.installs.listed(PLATFORM) if i.installed)

    async def teaches(self, team: str, user: str, instructors: Instructors) -> bool:
        """Whether `user` is the workspace's instructor by having installed studybot there first: only
        with `instructors.slack_installer`, and only while the workspace has no instructors configured
        (`cohorts.<team id>.instructors`: those win)."""
        if not (self.settings.installer_is_instructor and user):
            return False
        if instructors.per_cohort.get(Cohort(PLATFORM, team)):
            return False
        try:
            return (await self.workspaces.install(team)).installer_id == user
        except DeliveryFailed:
            return False

    async def _install_page(self, request: web.Request) -> web.StreamResponse:
        if not self._pages.take(request.remote or ""):
            self._refused("slack HTTP 429: install pages from one address past the limit")
            return web.Response(status=429, text="Too many install attempts from this address; try again later.",
                                headers={"Retry-After": str(int(STATE_TTL.total_seconds()))})
        try:
            return await to_aiohttp_response(await self._flow.handle_installation(_bolt(request)))
        except TooManyStates:
            self._refused(f"slack HTTP 503: {MOST_STATES} install states unused")
            return web.Response(status=503, text="Too many installs in progress; try again later.")

    async def _redirected(self, request: web.Request) -> web.StreamResponse:
        return await to_aiohttp_response(await self._flow.handle_callback(_bolt(request)))

    @property
    def _flow(self) -> AsyncOAuthFlow:
        assert self._app is not None and self._app.oauth_flow is not None
        return self._app.oauth_flow


def _bolt(request: web.Request) -> AsyncBoltRequest:
    return AsyncBoltRequest(body="", query=request.query_string, headers=request.headers)  # type: ignore[arg-type]
