"""Slack's HTTP mode: the listener (`http_guard.CappedSite`) and each request's way to Bolt.

A request's body is read within time and size limits, its signature checked before the body is
parsed, a replay acknowledged and not done again, and only then is it decoded, once
(`slack_payloads.read_body`, its JSON nesting bounded), and dispatched by Bolt. The same listener serves the
install pages (`adapters.slack_install_flow`) and `/metrics`.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from aiohttp import web
from slack_bolt.adapter.aiohttp import to_aiohttp_response
from slack_bolt.async_app import AsyncApp
from slack_sdk.signature import SignatureVerifier

from adapters import metrics_http
from adapters.http_guard import CappedSite, Limits, ReplayGuard, idle_once_answered
from adapters.log_guard import RefusalLog
from adapters.slack_install_flow import InstallFlow
from adapters.slack_payloads import TooDeep, bolt_request, read_body, routable
from adapters.slack_settings import SlackSettings
from bot.core.errors import PlatformUnreachable
from bot.runtime.app import StudyBot

log = logging.getLogger("studybot.slack")

EVENTS_PATH = "/slack/events"


class SlackHttp:
    """The HTTP listener of one Slack app: `start()` listens (on `port`), `stop()` closes it."""

    def __init__(self, app: AsyncApp, bot: StudyBot, settings: SlackSettings, limits: Limits,
                 installs: InstallFlow | None, ignored: RefusalLog) -> None:
        self.app, self.bot, self.settings, self.limits, self.installs = app, bot, settings, limits, installs
        secret = settings.signing_secret
        self._verifier = SignatureVerifier(secret.reveal()) if secret else None
        self._refused = RefusalLog(log)
        self._ignored = ignored
        self._replays = ReplayGuard()
        self._runner: web.AppRunner | None = None
        self.port: int | None = None

    async def start(self) -> None:
        limits = self.limits
        server = web.Application(client_max_size=limits.max_body, middlewares=[idle_once_answered])
        server.router.add_post(EVENTS_PATH, self._events)
        if self.installs is not None:
            self.installs.serve(server, self.app)
        server.router.add_get(metrics_http.PATH, metrics_http.route(self.bot))
        # lingering_time=0: a body left unread (too slow, too large) is not waited for after the answer
        self._runner = web.AppRunner(server, shutdown_timeout=5.0, access_log=None,
                                     keepalive_timeout=limits.header_timeout, lingering_time=0)
        await self._runner.setup()
        site = CappedSite(self._runner, self.settings.http_host, self.settings.http_port, limits,
                          reuse_port=self.settings.reuse_port)
        try:
            await site.start()
        except OSError as exc:
            raise PlatformUnreachable(f"cannot listen on {self.settings.http_host}:{self.settings.http_port} "
                                      f"({exc.strerror}): free the port or set STUDYBOT_HTTP_PORT") from None
        self.port = site.port

    async def stop(self) -> None:
        runner, self._runner = self._runner, None
        if runner is not None:
            await runner.cleanup()

    async def _events(self, request: web.Request) -> web.StreamResponse:
        """Read the body within the limits, check its signature, bound its JSON nesting, and only
        then decode it, once, for Bolt."""
        try:
            async with asyncio.timeout(self.limits.body_timeout):
                raw = await request.read()
        except web.HTTPRequestEntityTooLarge:
            return self._refuse(413, f"a body over {self.limits.max_body} bytes")
        except TimeoutError:
            response = self._refuse(408, "a body that did not arrive in time")
            response.force_close()
            return response
        headers = request.headers
        if self._verifier is not None and not self._signed(raw, headers):
            return self._refuse(401, "a bad or stale signature")
        stamp = (headers.get("X-Slack-Request-Timestamp"), headers.get("X-Slack-Signature"))
        if not self._replays.first_time(*stamp):
            self._ignored("a slack request replayed (same timestamp and signature); acknowledged, not done again")
            return web.Response(status=200, text="")
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            return self._refuse(400, "a body that is not UTF-8")
        try:
            body = read_body(text, request.content_type, self.limits.max_json_depth)
        except TooDeep:
            return self._refuse(400, f"JSON nested deeper than {self.limits.max_json_depth} levels")
        except ValueError as exc:
            return self._refuse(400, f"a body that cannot be parsed ({type(exc).__name__})")
        if not routable(body):
            return self._refuse(400, "an interaction without actions")
        try:
            bolt = bolt_request(text, body, request.query_string, headers)
        except (ValueError, TypeError, AttributeError, KeyError) as exc:
            return self._refuse(400, f"a body that cannot be parsed ({type(exc).__name__})")
        answered = await self.app.async_dispatch(bolt)
        if answered.status < 300:
            self._replays.taken(*stamp)
        return await to_aiohttp_response(answered)

    def _signed(self, raw: bytes, headers: Any) -> bool:
        assert self._verifier is not None
        try:
            return self._verifier.is_valid(raw, headers.get("X-Slack-Request-Timestamp"),
                                           headers.get("X-Slack-Signature"))
        except ValueError:  # a timestamp that is not a number
            return False

    def _refuse(self, status: int, why: str) -> web.Response:
        self._refused(f"slack HTTP {status}: {why}")
        return web.Response(status=status, text="request refused")
