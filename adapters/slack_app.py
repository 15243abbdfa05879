"""The Slack adapter: slack-bolt's AsyncApp in Socket Mode (with SLACK_APP_TOKEN) or HTTP mode.

The order of replies is the shared policy's (`adapters.replies`); here it is translated: a
form's modal opens with views.open while its trigger_id is fresh, the ack answers (only a
command's ack carries a reply), and everything after it (private replies through
`response_url`, posts, edits, files) runs in a background task, so that a slow `response_url`
or a rate-limited Web API cannot hold the ack past Slack's 3 seconds (`process_before_response=True`
makes Bolt answer only when the listener returns). Payloads are read and rendered by
`adapters.slack_payloads`; HTTP mode's requests reach Bolt through `adapters.slack_http`.

With SLACK_BOT_TOKEN it serves that one workspace. With the app's client id and secret it serves
every workspace that installs it through "Add to Slack" (`adapters.slack_install_flow`), each with
its own bot token from `adapters.slack_installs`, requests and timers alike; an uninstall
(`app_uninstalled`, `tokens_revoked`) removes the install.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
import time
from collections.abc import Awaitable, Callable, Iterator
from typing import Any, TypeVar

from aiohttp import ClientError
from slack_bolt.adapter.socket_mode.aiohttp import AsyncSocketModeHandler
from slack_bolt.adapter.socket_mode.async_internals import run_async_bolt_app, send_async_response
from slack_bolt.authorization import AuthorizeResult
from slack_bolt.authorization.async_authorize import AsyncAuthorize
from slack_bolt.error import BoltUnhandledRequestError
from slack_bolt.logger.messages import warning_client_prioritized_and_token_skipped
from slack_bolt.response import BoltResponse
from slack_sdk.errors import SlackApiError
from slack_sdk.http_retry.builtin_async_handlers import (
    AsyncConnectionErrorRetryHandler,
    AsyncRateLimitErrorRetryHandler,
)
from slack_sdk.socket_mode.aiohttp import SocketModeClient
from slack_sdk.socket_mode.request import SocketModeRequest
from slack_sdk.socket_mode.response import SocketModeResponse
from slack_sdk.web.async_client import AsyncWebClient

from adapters.http_guard import Limits
from adapters.log_guard import NoBodies, RefusalLog, Unsaid, clean
from adapters.replies import ChatAdapter, Inbound
from adapters.slack_bolt_app import LeanApp
from adapters.slack_http import EVENTS_PATH, SlackHttp
from adapters.slack_install_flow import InstallFlow
from adapters.slack_installs import Workspaces
from adapters.slack_payloads import (
    ACTION_PREFIX,
    FORM_CALLBACK,
    PLATFORM,
    Json,
    click_event,
    command_event,
    message_for,
    modal_for,
    mrkdwn,
    submit_event,
    user_of,
)
from adapters.slack_response_urls import ResponseUrls
from adapters.slack_settings import INSTALL_PATH, SlackSettings
from bot.core.errors import DeliveryFailed, PlatformRejected, PlatformUnreachable
from bot.core.messages import (
    Actor,
    Audience,
    Cohort,
    MessageRef,
    Place,
    Reply,
)
from bot.runtime.app import StudyBot

log = logging.getLogger("studybot.slack")
T = TypeVar("T")
BOLT_LOG = "slack_bolt.studybot"  # Bolt's and the Socket Mode client's logger: under slack_bolt, bodies withheld

SLACK_FAILURES = (SlackApiError, DeliveryFailed, ClientError, TimeoutError, OSError)
NO_ACCESS = frozenset({  # Web API errors a retry cannot mend: the channel or the person is out of reach
    "channel_not_found", "is_archived", "not_in_channel", "restricted_action", "restricted_action_read_only_channel",
    "cannot_dm_bot", "user_not_found", "user_disabled", "ekm_access_denied", "team_access_not_granted",
    "cant_update_message", "edit_window_closed", "msg_too_long", "invalid_blocks"})
REFUSED = frozenset({"invalid_auth", "not_authed", "account_inactive", "token_revoked", "token_expired",
                     "not_allowed_token_type", "no_permission"})
UNDELIVERABLE = {  # keyed by "was it a public post?"
    True: "I could not post in this channel. Invite studybot (/invite @studybot), then try again.",
    False: "I could not send you a direct message. Open studybot in Slack (Apps) so that it may write to you, "
           "then try again.",
}


def refusal(error: str) -> tuple[str, bool]:
    """(the Web API's error code, whether it means the token itself was refused)."""
    return error, error in REFUSED


class AckingSocketModeHandler(AsyncSocketModeHandler):
    """Acknowledges every Socket Mode envelope, also one no listener takes or Bolt fails on:
    Slack would redeliver an unacknowledged one."""

    async def handle(self, client: SocketModeClient, req: SocketModeRequest) -> None:  # type: ignore[override]
        try:
            response = await run_async_bolt_app(self.app, req)
        except Exception:
            log.exception("slack could not handle a Socket Mode %s envelope", clean(req.type, 30))
            response = BoltResponse(status=500, body="")
        if response.status == 200:
            await send_async_response(client, req, response, time.time())
        else:
            await client.send_socket_mode_response(SocketModeResponse(envelope_id=req.envelope_id))


# ---------------------------------------------------------------- the adapter


class TokenChecked(AsyncAuthorize):
    """Bolt's authorization of each request: the bot token, checked once at start (auth.test).
    An AsyncAuthorize of its own, so that Bolt does not inspect a function's arguments per request."""

    result: AuthorizeResult | None = None

    async def __call__(self, **_: Any) -> AuthorizeResult | None:
        assert self.result is not None, "requests are served only after start()"
        return self.result


class SlackInteraction:
    """A command, click or form submission: `ack` answers it (only a command's ack shows a reply),
    and private replies go through its response_url, else chat.postEphemeral, else a DM."""

    form_answers = False

    def __init__(self, adapter: SlackAdapter, ack: Any, body: Json, respond: Any, channel_id: str | None) -> None:
        self.adapter, self.ack, self.body, self.respond, self.channel_id = adapter, ack, body, respond, channel_id
        self.team = user_of(body)[0]
        self.opens_forms = body.get("type") != "view_submission"
        self.answers: tuple[Audience, ...] = (Audience.PRIVATE,) if "command" in body else ()

    async def open_form(self, reply: Reply) -> bool:
        assert reply.form is not None
        channel = reply.place.channel_id if reply.place else None
        try:
            await self.adapter.quick.views_open(token=await self.adapter.token(self.team),
                                                trigger_id=self.body.get("trigger_id") or "",
                                                view=modal_for(reply.form, channel))
        except SLACK_FAILURES as exc:
            log.warning("views.open failed (%s); telling the user to retry", self.adapter.why(exc))
            return False
        return True

    async def answer(self, reply: Reply | None, *, more: bool) -> bool:
        await (self.ack(**message_for(reply)) if reply is not None else self.ack())
        return True

    async def say(self, reply: Reply) -> None:
        message = message_for(reply)
        if self.respond is not None and self.respond.response_url:
            status = await self.adapter.response_urls.post(
                self.respond.response_url, {**message, "response_type": "ephemeral", "replace_original": False})
            if status == 200:
                return
            log.warning("slack response_url answered HTTP %s; posting the reply instead", status)
        client, user = self.adapter.client, reply.to.user_id if reply.to else ""
        token = await self.adapter.token(self.team)
        if reply.place is not None and reply.place.channel_id:
            await client.chat_postEphemeral(token=token, channel=reply.place.channel_id, user=user, **message)
        else:
            channel = self.channel_id or await self.adapter.dm_channel(self.team, user)
            await client.chat_postMessage(token=token, channel=channel, **message)

    async def fail(self, text: str) -> None:
        if self.ack.response is None:
            await self.ack(text if "command" in self.body else "")


class SlackAdapter(ChatAdapter):
    """Slack for the study bot; also the Outbox the scheduler delivers timers through.

    `limits` bounds HTTP mode's connections, reads and payloads; `admin_ttl` is how long a
    workspace-admin lookup (`instructors.slack_admins`) is trusted; `connect_timeout` bounds
    each step of `start()`."""

    platform = PLATFORM
    title = "Slack"
    failures = SLACK_FAILURES
    undeliverable = UNDELIVERABLE
    follow_up_later = True

    def __init__(self, bot: StudyBot, settings: SlackSettings, *, limits: Limits | None = None,
                 admin_ttl: float = 600.0, connect_timeout: float = 15.0) -> None:
        if settings.bot_token is None and not settings.distributed:
            raise ValueError("SLACK_BOT_TOKEN is not set")
        super().__init__(bot)
        self.settings = settings
        self.limits = limits or Limits()
        self.admin_ttl = admin_ttl
        self.connect_timeout = connect_timeout
        base_url = settings.api_url.rstrip("/") + "/"
        token = settings.bot_token.reveal() if settings.bot_token else None  # None: each call names its workspace's
        self.client = AsyncWebClient(token=token, base_url=base_url, retry_handlers=[
            AsyncConnectionErrorRetryHandler(), AsyncRateLimitErrorRetryHandler(max_retry_count=2)])
        # Calls made before the ack (views.open, users.info) must not wait out a rate limit.
        self.quick = AsyncWebClient(token=token, base_url=base_url, timeout=2,
                                    retry_handlers=[AsyncConnectionErrorRetryHandler()])
        # Start-up calls are retried by the runner, which logs one line per attempt: none of the SDK's own.
        self.starting = AsyncWebClient(token=token, base_url=base_url, retry_handlers=[])
        bolt_log = logging.getLogger(BOLT_LOG)
        if not any(isinstance(f, NoBodies) for f in bolt_log.filters):
            bolt_log.addFilter(NoBodies())
            # the bot token is given per request (`_authorized`); SLACK_BOT_TOKEN in the environment is not unused
            bolt_log.addFilter(Unsaid(warning_client_prioritized_and_token_skipped()))
        secret = settings.signing_secret
        self._authorized = TokenChecked()
        self.installs = (InstallFlow(bot.store, settings, base_url, self.limits, bolt_log)
                         if settings.distributed else None)
        self.workspaces: Workspaces | None = self.installs.workspaces if self.installs else None
        authorize: AsyncAuthorize = self.installs.authorize if self.installs else self._authorized
        oauth = self.installs.oauth if self.installs else None
        self.app = LeanApp(  # Bolt without its per-request client and arguments: see adapters.slack_bolt_app
            client=AsyncWebClient(base_url=base_url),  # Bolt's own: its token comes from `authorize`
            authorize=authorize,  # Bolt takes an AsyncAuthorize as it is
            oauth_settings=oauth,
            installation_store_bot_only=True if oauth else None,
            logger=bolt_log,
            signing_secret=secret.reveal() if secret else "",
            # `SlackHttp` checks every HTTP request's signature before Bolt parses it; Bolt checks it
            # again only when there is no secret, which refuses all (a setup `configured` rejects)
            request_verification_enabled=secret is None and settings.app_token is None,
            process_before_response=True,
            raise_error_for_unhandled_request=True,
        )
        self.app.command(re.compile(r"^/"))(self._on_command)
        self.app.action(re.compile("^" + re.escape(ACTION_PREFIX)))(self._on_click)
        self.app.view(FORM_CALLBACK)(self._on_submit)
        self.app.error(self._on_error)
        if oauth is not None:
            self.app.enable_token_revocation_listeners()  # app_uninstalled, tokens_revoked: the install goes
        self._ignored = RefusalLog(log, verb="ignored")
        self.http = SlackHttp(self.app, bot, settings, self.limits, self.installs, self._ignored)
        self._people: dict[tuple[str, str], tuple[Json, float]] = {}  # users.info, until when it is trusted
        self._dms: dict[tuple[str, str], str] = {}  # (workspace, user) -> DM channel
        self.response_urls = ResponseUrls()  # instead of Bolt's `respond`: see adapters.slack_response_urls
        self._socket: AsyncSocketModeHandler | None = None

    # ------------------------------------------------------------ lifecycle

    @property
    def port(self) -> int | None:
        """The port HTTP mode listens on (once started)."""
        return self.http.port

    async def connect(self) -> None:
        """Check the bot token (auth.test), then connect over Socket Mode when an app token is set,
        else serve HTTP on /slack/events (and, for installs in many workspaces, /slack/install)."""
        if self.installs is not None:
            await self.http.start()
            log.info("slack serving %d installed workspace(s) in HTTP mode on %s:%s (install at %s)",
                     await self.installs.installed(), self.settings.http_host, self.port, INSTALL_PATH)
            return
        who = await self._check_token()
        if self.settings.app_token is not None:
            await self._connect_socket()
            mode = "Socket Mode"
        else:
            await self.http.start()
            mode = f"HTTP mode on {self.settings.http_host}:{self.port}{EVENTS_PATH}"
        log.info("slack connected as @%s in %s (team %s, %s)", clean(who.get("user")), clean(who.get("team")),
                 clean(who.get("team_id")), mode)

    @contextlib.contextmanager
    def _start_call(self, method: str, variable: str, fix: str) -> Iterator[None]:
        """A start-up call's failure as one line: a refused token is PlatformRejected naming its
        variable and `fix`; anything else PlatformUnreachable (starting again later may work)."""
        try:
            yield
        except SlackApiError as exc:
            error, refused = refusal(str(exc.response.get("error")))
            if refused:
                raise PlatformRejected(f"{variable} was refused by Slack ({clean(error, 40)}): {fix}") from None
            raise PlatformUnreachable(f"Slack answered {method} with {clean(error, 40)}; "
                                      "it may be having trouble, try again later") from None
        except (ClientError, TimeoutError, OSError) as exc:
            raise PlatformUnreachable(f"cannot reach Slack at {self.settings.api_url} "
                                      f"({type(exc).__name__}): check the network or SLACK_API_URL") from None

    async def _check_token(self) -> Json:
        with self._start_call("auth.test", "SLACK_BOT_TOKEN", "copy the Bot User OAuth Token again"):
            async with asyncio.timeout(self.connect_timeout):
                response = await self.starting.auth_test()
        self._authorized.result = AuthorizeResult.from_auth_test_response(
            bot_token=self.client.token, auth_test_response=response,
            bot_scopes=response.headers.get("x-oauth-scopes", ""))
        return dict(response.data) if isinstance(response.data, dict) else {}

    async def _connect_socket(self) -> None:
        """Ask for a Socket Mode URL with the app token (refusals are told apart from outages),
        then open it, within `connect_timeout`: the SDK alone would retry forever."""
        assert self.settings.app_token is not None
        app_token = self.settings.app_token.reveal()
        with self._start_call("apps.connections.open", "SLACK_APP_TOKEN",
                              "copy the App-Level Token (connections:write) again"):
            async with asyncio.timeout(self.connect_timeout):
                opened = await self.starting.apps_connections_open(app_token=app_token)
        self._socket = AckingSocketModeHandler(self.app, app_token)
        self._socket.client.wss_uri = opened["url"]
        try:
            async with asyncio.timeout(self.connect_timeout):
                await self._socket.connect_async()
        except TimeoutError:
            raise PlatformUnreachable("cannot open the Slack Socket Mode connection within "
                                      f"{self.connect_timeout:g} s: check the network") from None

    async def disconnect(self) -> None:
        socket, self._socket = self._socket, None
        if socket is not None:
            await socket.close_async()
        await self.http.stop()
        await self.response_urls.close()

    async def _on_error(self, error: Exception) -> BoltResponse:
        """A payload no listener takes (a shortcut, a closed modal, an event) is acknowledged, so
        Slack does not redeliver it; one whose shape Bolt could not match on is a 400."""
        if isinstance(error, BoltUnhandledRequestError):
            self._ignored(f"a slack payload of a kind studybot does not handle ({clean(error.body.get('type'), 30)})")
            return BoltResponse(status=200, body="")
        log.warning("rejected a Slack request Bolt could not route: %s", type(error).__name__)
        return BoltResponse(status=400, body="malformed request")

    # ------------------------------------------------------------ listeners

    async def _on_command(self, ack: Any, body: Json, respond: Any) -> None:
        interaction = SlackInteraction(self, ack, body, respond, body.get("channel_id"))
        await self.handle(interaction, lambda: self._event(command_event, body))

    async def _on_click(self, ack: Any, body: Json, respond: Any) -> None:
        interaction = SlackInteraction(self, ack, body, respond, (body.get("channel") or {}).get("id"))
        await self.handle(interaction, lambda: self._event(click_event, body))

    async def _on_submit(self, ack: Any, body: Json) -> None:
        """A modal's text. The modal closes (plain ack) and the core's reply, feedback or a
        refusal alike, is shown ephemerally where the form came from (a DM when none)."""
        interaction = SlackInteraction(self, ack, body, None, None)
        await self.handle(interaction, lambda: self._event(submit_event, body))

    async def _event(self, build: Callable[[Json, Actor], Inbound], body: Json) -> Inbound:
        return build(body, await self._actor(body))

    # ------------------------------------------------------------ who, and where

    async def _actor(self, body: Json) -> Actor:
        team, user, name = user_of(body)
        info = await self._user_info(team, user) if user else {}
        locale = info.get("locale")
        return Actor(PLATFORM, team, user, name, await self._is_instructor(team, user, info),
                     locale if isinstance(locale, str) else None)

    async def _is_instructor(self, team: str, user: str, info: Json | None = None) -> bool:
        """Listed by id, or (with slack_admins) a workspace admin or owner, as `users.info` says (`info`,
        else looked up)."""
        if self.bot.settings.instructors.listed(Cohort(PLATFORM, team), user):
            return True
        if self.installs is not None and await self.installs.teaches(team, user, self.bot.settings.instructors):
            return True
        if not self.settings.admins_are_instructors or not user:
            return False
        info = info if info is not None else await self._user_info(team, user)
        return bool(info.get("is_admin") or info.get("is_owner"))

    async def _user_info(self, team: str, user: str) -> Json:
        """What `users.info` says of a person (their admin flag, their locale): looked up once per
        `admin_ttl` seconds, before the ack, so the lookup never waits out a rate limit: it fails fast
        and what was last known (or nothing) stands; a demoted admin loses instructor powers, and a
        changed language shows, within that time."""
        now = time.monotonic()
        known = self._people.get((team, user))
        if known is not None and known[1] > now:
            return known[0]
        try:
            info = (await self.quick.users_info(token=await self.token(team), user=user,
                                                include_locale=True))["user"]
        except SLACK_FAILURES as exc:
            log.warning("users.info failed (%s); what was known of the user stands", self.why(exc))
            return known[0] if known else {}
        self._people[(team, user)] = (info, now + self.admin_ttl)
        return info

    async def token(self, team: str) -> str:
        """The bot token for the workspace: SLACK_BOT_TOKEN's, else its install's (refreshed when it
        expires soon); DeliveryFailed (permanent) when studybot is not installed there."""
        if self.workspaces is None:
            assert self.client.token is not None
            return self.client.token
        return await self.workspaces.token(team)

    async def dm_channel(self, team: str, user_id: str) -> str:
        if (team, user_id) not in self._dms:
            opened = await self.client.conversations_open(token=await self.token(team), users=user_id)
            self._dms[(team, user_id)] = opened["channel"]["id"]
        return self._dms[(team, user_id)]

    # ------------------------------------------------------------ Outbox

    async def send(self, reply: Reply) -> MessageRef | None:
        """Public replies in `reply.place`'s channel; private and dm ones (and public ones from a
        direct message) in the DM with `reply.to`. Files are uploaded there with files_upload_v2."""
        public = reply.place.channel_id if reply.place and reply.audience is Audience.PUBLIC else None
        if public is None and reply.to is None:
            log.warning("a reply with neither channel nor recipient was dropped")
            return None
        team = _team(reply)

        async def post(token: str) -> Any:
            channel = public or await self.dm_channel(team, reply.to.user_id if reply.to else "")
            if reply.file is not None:
                return await self.client.files_upload_v2(token=token, channel=channel, filename=reply.file.filename,
                                                         content=reply.file.content,
                                                         initial_comment=mrkdwn(reply.text))
            return await self.client.chat_postMessage(token=token, channel=channel, **message_for(reply))

        with self.refusals(_for_good):
            posted = await self._as(team, post)
        return None if reply.file is not None else MessageRef(PLATFORM, posted["channel"], posted["ts"])

    async def channel_problem(self, place: Place) -> str | None:
        """Why studybot could not post in this channel (conversations.info), else None. The bot token
        is the workspace's own, so a channel of another workspace is not found."""
        channel_id = place.channel_id or ""
        try:
            info = await self.client.conversations_info(token=await self.token(place.cohort), channel=channel_id)
        except DeliveryFailed as exc:
            return str(exc)
        except SlackApiError as exc:
            code = clean(exc.response.get("error"), 40)
            if code == "missing_scope":
                log.warning("cannot check channel %s: the app lacks the channels:read and groups:read scopes "
                            "(add them in the app's settings and reinstall it)", clean(channel_id, 40))
                return None
            return code
        channel = info.get("channel") or {}
        if channel.get("is_archived"):
            return "is_archived"
        if channel.get("is_private") and not channel.get("is_member"):
            return "not_in_channel"
        return None

    async def edit(self, ref: MessageRef, reply: Reply) -> None:
        """Replace an earlier message; one deleted meanwhile is left alone."""
        async def update(token: str) -> Any:
            return await self.client.chat_update(token=token, channel=ref.channel_id, ts=ref.message_id,
                                                 **message_for(reply))

        try:
            with self.refusals(_for_good):
                await self._as(_team(reply), update)
        except SlackApiError as exc:
            if exc.response.get("error") != "message_not_found":
                raise
            log.warning("slack message to edit is gone (message_not_found)")

    def why(self, exc: BaseException) -> str:
        """A failure as a short log token: the Web API's error code, else the exception's type."""
        if isinstance(exc, SlackApiError):
            return clean(exc.response.get("error"), 40)
        return super().why(exc)


    async def _as(self, team: str, call: Callable[[str], Awaitable[T]]) -> T:
        """`call(token)` with the workspace's token; when Slack refuses an install's token, once more
        with a newer or refreshed one, if there is one."""
        token = await self.token(team)
        try:
            return await call(token)
        except SlackApiError as exc:
            if self.workspaces is None or exc.response.get("error") not in REFUSED:
                raise
            fresh = await self.workspaces.refused(team, token)
            if fresh is None:
                raise
        return await call(fresh)


def _for_good(exc: BaseException) -> str | None:
    """The Web API's error code when it refuses for good (NO_ACCESS, REFUSED)."""
    code = clean(exc.response.get("error"), 40) if isinstance(exc, SlackApiError) else None
    return code if code in NO_ACCESS or code in REFUSED else None


def _team(reply: Reply) -> str:
    """The workspace a reply goes to."""
    return reply.place.cohort if reply.place is not None else reply.to.cohort if reply.to is not None else ""
