"""Slack for many workspaces: slack_sdk's installation and OAuth state stores over studybot's own
database (`bot.store.installs`, async on both engines), and each workspace's bot token for every
Web API call, refreshed before it expires.

Bolt rotates tokens only while authorizing an incoming request; studybot's timers post with no
request behind them, so `Workspaces.token` rotates for both. A refresh runs under a lock named
for the workspace, held across processes on PostgreSQL (`Engine.exclusive`), and re-reads the
install once it holds the lock: a peer that refreshed first is used, never refreshed twice.
"""

from __future__ import annotations

import logging
import secrets
import time
from collections.abc import Callable
from dataclasses import replace
from datetime import timedelta
from typing import Any

from slack_bolt.authorization import AuthorizeResult
from slack_bolt.authorization.async_authorize import AsyncAuthorize
from slack_sdk.errors import SlackApiError, SlackTokenRotationError
from slack_sdk.oauth.installation_store import Bot, Installation
from slack_sdk.oauth.installation_store.async_installation_store import AsyncInstallationStore
from slack_sdk.oauth.state_store.async_state_store import AsyncOAuthStateStore
from slack_sdk.oauth.token_rotation.async_rotator import AsyncTokenRotator
from slack_sdk.web.async_client import AsyncWebClient

from adapters.log_guard import clean
from adapters.slack_payloads import PLATFORM
from bot.core.errors import DeliveryFailed
from bot.store import Store
from bot.store.installs import Install

log = logging.getLogger("studybot.slack")

STATE_TTL = timedelta(seconds=600)  # how long an "Add to Slack" click may take to come back
MOST_STATES = 10_000  # unused install states kept at once, from every address
CACHE_SECONDS = 60.0  # how long a process trusts the install it read (an uninstall elsewhere shows within this)


def cohort_of(enterprise_id: str | None, team_id: str | None, is_enterprise_install: bool | None) -> str:
    """The cohort an install belongs to: the workspace, or the organization of an org-wide install."""
    return (enterprise_id if is_enterprise_install else team_id) or team_id or enterprise_id or ""


def as_bot(install: Install) -> Bot:
    assert install.bot_token is not None
    return Bot(app_id=install.app_id, enterprise_id=install.enterprise_id, team_id=install.cohort,
               team_name=install.team_name, bot_token=install.bot_token, bot_id=install.bot_id or "",
               bot_user_id=install.bot_user_id or "", bot_scopes=install.bot_scopes,
               bot_refresh_token=install.refresh_token, bot_token_expires_at=install.token_expires_at,
               is_enterprise_install=install.is_enterprise_install,
               installed_at=install.installed_at.timestamp() if install.installed_at else time.time())


class InstallationStore(AsyncInstallationStore):
    """Bolt's installation store (bot tokens only: studybot asks for no user token). `changed` is told
    the cohort of every install saved or removed (this process's cached tokens are dropped)."""

    def __init__(self, store: Store, changed: Callable[[str], None] = lambda cohort: None) -> None:
        self._installs = store.installs
        self._changed = changed

    @property
    def logger(self) -> logging.Logger:
        return log

    async def async_save(self, installation: Installation) -> None:
        cohort = cohort_of(installation.enterprise_id, installation.team_id, installation.is_enterprise_install)
        first = await self._installs.save(Install(
            platform=PLATFORM, cohort=cohort, bot_token=installation.bot_token, bot_id=installation.bot_id,
            bot_user_id=installation.bot_user_id, bot_scopes=",".join(installation.bot_scopes or ()),
            refresh_token=installation.bot_refresh_token, token_expires_at=installation.bot_token_expires_at,
            installer_id=installation.user_id or "", team_name=installation.team_name or "",
            app_id=installation.app_id, enterprise_id=installation.enterprise_id,
            is_enterprise_install=bool(installation.is_enterprise_install)))
        self._changed(cohort)
        log.info("slack workspace %s (%s) installed studybot", clean(cohort, 30), clean(installation.team_name, 60))
        if first and first != (installation.user_id or ""):
            log.warning("slack workspace %s: studybot installed again by %s; its first installer %s stays its "
                        "instructor", clean(cohort, 30), clean(installation.user_id, 30), clean(first, 30))

    async def async_save_bot(self, bot: Bot) -> None:
        cohort = cohort_of(bot.enterprise_id, bot.team_id, bot.is_enterprise_install)
        await self._installs.rotated(PLATFORM, cohort, bot.bot_token, bot.bot_refresh_token, bot.bot_token_expires_at)
        self._changed(cohort)

    async def async_find_bot(self, *, enterprise_id: str | None, team_id: str | None,
                             is_enterprise_install: bool | None = False) -> Bot | None:
        install = await self._installs.find(PLATFORM, cohort_of(enterprise_id, team_id, is_enterprise_install))
        return as_bot(install) if install is not None and install.bot_token else None

    async def async_find_installation(self, *, enterprise_id: str | None, team_id: str | None,
                                      user_id: str | None = None,
                                      is_enterprise_install: bool | None = False) -> Installation | None:
        if user_id is not None:
            return None  # no user tokens are kept
        install = await self._installs.find(PLATFORM, cohort_of(enterprise_id, team_id, is_enterprise_install))
        if install is None or not install.bot_token:
            return None
        return Installation(app_id=install.app_id, enterprise_id=install.enterprise_id, team_id=team_id,
                            team_name=install.team_name, bot_token=install.bot_token, bot_id=install.bot_id,
                            bot_user_id=install.bot_user_id, bot_scopes=install.bot_scopes,
                            bot_refresh_token=install.refresh_token, bot_token_expires_at=install.token_expires_at,
                            user_id=install.installer_id, is_enterprise_install=install.is_enterprise_install)

    async def async_delete_bot(self, *, enterprise_id: str | None, team_id: str | None) -> None:
        await self._uninstall(enterprise_id, team_id)

    async def async_delete_installation(self, *, enterprise_id: str | None, team_id: str | None,
                                        user_id: str | None = None) -> None:
        if user_id is None:  # a user's tokens being revoked leaves the workspace installed
            await self._uninstall(enterprise_id, team_id)

    async def async_delete_all(self, *, enterprise_id: str | None, team_id: str | None) -> None:
        await self._uninstall(enterprise_id, team_id)

    async def _uninstall(self, enterprise_id: str | None, team_id: str | None) -> None:
        """Remove the one install the event is about: a workspace's own when it names a workspace (in an
        Enterprise Grid too: the organization-wide install stays), else the organization's."""
        cohort = team_id or enterprise_id
        if not cohort:
            return
        self._changed(cohort)
        if await self._installs.uninstall(PLATFORM, cohort):
            log.info("slack workspace %s uninstalled studybot; its scores are kept", clean(cohort, 30))


class TooManyStates(Exception):
    """An install page was asked for while `OAuthStates.most` states wait unused."""


class OAuthStates(AsyncOAuthStateStore):
    """One-time states of installs in progress, in the database (any process may see the redirect),
    at most `most` unused at once (TooManyStates past that)."""

    def __init__(self, store: Store, most: int = MOST_STATES) -> None:
        self._installs = store.installs
        self.most = most

    @property
    def logger(self) -> logging.Logger:
        return log

    async def async_issue(self, *args: Any, **kwargs: Any) -> str:
        state = secrets.token_urlsafe(24)
        if not await self._installs.issue_state(state, STATE_TTL, self.most):
            raise TooManyStates
        return state

    async def async_consume(self, state: str) -> bool:
        return await self._installs.consume_state(state)


class Workspaces:
    """Each installed workspace's bot token, for Web API calls with or without a request behind them."""

    def __init__(self, store: Store, rotator: AsyncTokenRotator, rotate_minutes: int) -> None:
        self._store = store
        self._rotator = rotator
        self._rotate_minutes = rotate_minutes
        self._cache: dict[str, tuple[Install, float]] = {}
        self.refreshes = 0  # tokens this process refreshed (for logs and tests)

    async def install(self, cohort: str) -> Install:
        """The workspace's install with a token good for at least a while; DeliveryFailed (permanent)
        when studybot is not installed there."""
        now = time.monotonic()
        cached = self._cache.get(cohort)
        install = cached[0] if cached and cached[1] > now else await self._store.installs.find(PLATFORM, cohort)
        if install is None or not install.bot_token:
            self._cache.pop(cohort, None)
            raise DeliveryFailed(f"studybot is not installed in the Slack workspace {clean(cohort, 30)}",
                                 permanent=True)
        if self._expiring(install):
            install = await self._refresh(cohort)
        self._cache[cohort] = (install, now + CACHE_SECONDS)
        return install

    async def token(self, cohort: str) -> str:
        install = await self.install(cohort)
        assert install.bot_token is not None
        return install.bot_token

    def forget(self, cohort: str) -> None:
        """Drop the cached install: the next call reads it again."""
        self._cache.pop(cohort, None)

    async def refused(self, cohort: str, token: str) -> str | None:
        """Slack refused `token`: a newer one (a peer refreshed it, the workspace reinstalled), or a
        refreshed one when the token rotates; None when there is none (the refusal stands)."""
        self.forget(cohort)
        install = await self._store.installs.find(PLATFORM, cohort)
        if install is None or not install.bot_token:
            return None
        if install.bot_token != token:
            return install.bot_token
        if install.refresh_token is None:
            return None
        fresh = await self._refresh(cohort, refused=token)
        self._cache[cohort] = (fresh, time.monotonic() + CACHE_SECONDS)
        return fresh.bot_token if fresh.bot_token != token else None

    def _expiring(self, install: Install) -> bool:
        expires = install.token_expires_at
        return expires is not None and expires <= time.time() + self._rotate_minutes * 60

    async def _refresh(self, cohort: str, refused: str | None = None) -> Install:
        """Refresh the token that expires soon (or that Slack `refused`), unless a peer did meanwhile."""
        async with self._store.engine.exclusive(f"slack-rotate:{cohort}"):
            install = await self._store.installs.find(PLATFORM, cohort)  # a peer may have refreshed it
            if install is None or not install.bot_token:
                raise DeliveryFailed(f"studybot was uninstalled from the Slack workspace {clean(cohort, 30)}",
                                     permanent=True)
            due = install.bot_token == refused or self._expiring(install)
            if not due:
                return install
            try:
                bot = await self._rotator.perform_bot_token_rotation(
                    bot=as_bot(replace(install, token_expires_at=0) if refused else install),
                    minutes_before_expiration=self._rotate_minutes)
            except SlackTokenRotationError as exc:
                error = exc.api_error.response.get("error") if isinstance(exc.api_error, SlackApiError) else None
                log.warning("slack refused to refresh workspace %s's token (%s)", clean(cohort, 30), clean(error, 40))
                raise DeliveryFailed(f"Slack refused to refresh the token of workspace {clean(cohort, 30)}",
                                     permanent=error in ("invalid_refresh_token", "token_revoked")) from None
            if bot is None:
                return install
            await self._store.installs.rotated(PLATFORM, cohort, bot.bot_token, bot.bot_refresh_token,
                                               bot.bot_token_expires_at)
            self.refreshes += 1
            log.info("slack workspace %s: token refreshed", clean(cohort, 30))
            return replace(install, bot_token=bot.bot_token, refresh_token=bot.bot_refresh_token,
                           token_expires_at=bot.bot_token_expires_at)


class InstallsAuthorize(AsyncAuthorize):
    """Bolt's authorization of each request: the workspace's install, its token refreshed the same way
    (and under the same lock) as a timer's."""

    def __init__(self, workspaces: Workspaces) -> None:
        self.workspaces = workspaces

    async def __call__(self, *, context: Any, enterprise_id: str | None, team_id: str | None,
                       user_id: str | None, **_: Any) -> AuthorizeResult | None:
        for cohort in (team_id, enterprise_id):
            if not cohort:
                continue
            try:
                install = await self.workspaces.install(cohort)
            except DeliveryFailed:
                continue
            return AuthorizeResult(enterprise_id=enterprise_id, team_id=team_id, bot_token=install.bot_token,
                                   bot_id=install.bot_id, bot_user_id=install.bot_user_id,
                                   bot_scopes=install.bot_scopes, user_id=user_id)
        return None


def rotator(client_id: str, client_secret: str, base_url: str) -> AsyncTokenRotator:
    return AsyncTokenRotator(client_id=client_id, client_secret=client_secret,
                             client=AsyncWebClient(base_url=base_url))
