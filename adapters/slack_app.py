"""The Slack adapter: slack-bolt's AsyncApp in Socket Mode (with SLACK_APP_TOKEN) or HTTP mode.

Record, acknowledge, then do the rest: each listener calls `bot.handle` (which commits), opens
a form's modal while its trigger_id is fresh, acknowledges, and leaves everything else (private
replies through `response_url`, public posts, edits, files) to a background task, so that a slow
`response_url` or a rate-limited Web API cannot hold the acknowledgement past Slack's 3 seconds
(`process_before_response=True` makes Bolt answer only when the listener returns). A private
reply that comes with posts or files is said after they were delivered, or replaced by what
failed. HTTP requests are read within time and size limits and their signature is checked
before their body is parsed.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import re
import time
from collections.abc import Awaitable, Callable, Coroutine, Iterator
from dataclasses import replace
from typing import Any
from urllib.parse import parse_qsl

from aiohttp import ClientError, web
from slack_bolt.adapter.aiohttp import to_aiohttp_response
from slack_bolt.adapter.socket_mode.aiohttp import AsyncSocketModeHandler
from slack_bolt.adapter.socket_mode.async_internals import run_async_bolt_app, send_async_response
from slack_bolt.async_app import AsyncApp
from slack_bolt.authorization import AuthorizeResult
from slack_bolt.context.async_context import AsyncBoltContext
from slack_bolt.error import BoltUnhandledRequestError
from slack_bolt.request.async_internals import build_async_context
from slack_bolt.request.async_request import AsyncBoltRequest
from slack_bolt.request.internals import extract_enterprise_id, extract_team_id
from slack_bolt.response import BoltResponse
from slack_sdk.errors import SlackApiError
from slack_sdk.http_retry.builtin_async_handlers import (
    AsyncConnectionErrorRetryHandler,
    AsyncRateLimitErrorRetryHandler,
)
from slack_sdk.signature import SignatureVerifier
from slack_sdk.socket_mode.aiohttp import SocketModeClient
from slack_sdk.socket_mode.request import SocketModeRequest
from slack_sdk.socket_mode.response import SocketModeResponse
from slack_sdk.web.async_client import AsyncWebClient

from adapters import metrics_http
from adapters.http_guard import CappedSite, Limits, ReplayGuard, json_depth_within
from adapters.log_guard import NoBodies, RefusalLog, clean
from adapters.slack_settings import SlackSettings
from bot.core.errors import DeliveryFailed, PlatformRejected, PlatformUnreachable, reference_id
from bot.core.messages import (
    CUT_NOTE,
    Actor,
    Audience,
    ChoiceMade,
    Cohort,
    Command,
    Form,
    MessageRef,
    Place,
    Reply,
    TextSubmitted,
)
from bot.runtime.app import StudyBot
from bot.runtime.scheduler import deliver

log = logging.getLogger("studybot.slack")
BOLT_LOG = "slack_bolt.studybot"  # Bolt's and the Socket Mode client's logger: under slack_bolt, bodies withheld

PLATFORM = "slack"
EVENTS_PATH = "/slack/events"
ACTION_PREFIX = "studybot:"
FORM_CALLBACK = "studybot_form"
FORM_BLOCK, FORM_INPUT = "answer", "text"
MAX_SLACK_INPUT = 3000  # Slack's limit for plain_text_input.max_length
MAX_SECTION = 3000  # Slack's limit for a section's text
SLACK_FAILURES = (SlackApiError, DeliveryFailed, ClientError, TimeoutError, OSError)
NO_ACCESS = frozenset({  # Web API errors a retry cannot mend: the channel or the person is out of reach
    "channel_not_found", "is_archived", "not_in_channel", "restricted_action", "restricted_action_read_only_channel",
    "cannot_dm_bot", "user_not_found", "user_disabled", "ekm_access_denied", "team_access_not_granted",
    "cant_update_message", "edit_window_closed", "msg_too_long", "invalid_blocks"})
REFUSED = frozenset({"invalid_auth", "not_authed", "account_inactive", "token_revoked", "token_expired",
                     "not_allowed_token_type", "no_permission"})
UNDELIVERABLE = {  # keyed by "was it a public post?"
    True: "I could not post in this channel. Invite studybot (/invite @studybot), then try again.",
    False: "I could not send you a direct message just now. Please try again in a moment.",
}

Json = dict[str, Any]


def failed_text() -> str:
    return (f"Something went wrong on our side (reference {reference_id()}). Please try again; "
            "if it keeps happening, give the reference to your instructor.")


# ---------------------------------------------------------------- payload -> event (pure)


def place_of(team_id: str, channel_id: object) -> Place:
    """A Place; a direct-message channel ("D…") is no channel at all for the core."""
    channel = channel_id if isinstance(channel_id, str) and channel_id and not channel_id.startswith("D") else None
    return Place(PLATFORM, team_id, channel)


def team_of(body: Json) -> str:
    """The workspace (the cohort), resolved as slack-bolt resolves it: a modal opened from a Slack
    Connect channel belongs to `view.app_installed_team_id`; an org-wide install's payload has no
    `team` but a `user.team_id`; an org-level command with no workspace is the organisation."""
    return str(extract_team_id(body) or extract_enterprise_id(body) or "")


def user_of(body: Json) -> tuple[str, str, str]:
    """(team id, user id, user name) of a slash command or an interactivity payload (whose `user`
    is an object; a payload with anything else there names no user)."""
    if "command" in body:
        return team_of(body), str(body.get("user_id") or ""), str(body.get("user_name") or "")
    user = _object(body, "user")
    return team_of(body), str(user.get("id") or ""), str(user.get("username") or user.get("name") or "")


def _object(body: Json, key: str) -> Json:
    value = body.get(key)
    return value if isinstance(value, dict) else {}


def command_event(body: Json, actor: Actor) -> Command:
    return Command(str(body.get("command", "")).lstrip("/"), str(body.get("text") or ""), actor,
                   place_of(actor.cohort, body.get("channel_id")))


def click_event(body: Json, actor: Actor) -> ChoiceMade:
    channel = (body.get("channel") or {}).get("id") or (body.get("container") or {}).get("channel_id")
    return ChoiceMade(str(body["actions"][0].get("value") or ""), actor, place_of(actor.cohort, channel))


def form_metadata(raw: object) -> Json:
    """The form token and channel a modal carries; {} when private_metadata is not ours."""
    try:
        meta = json.loads(raw) if isinstance(raw, str) and raw else {}
    except ValueError:
        return {}
    return meta if isinstance(meta, dict) else {}


def submitted_text(view: Json) -> str:
    """The answer typed into a form's modal; "" when the view's state has no such input."""
    state = view.get("state")
    values = state.get("values") if isinstance(state, dict) else None
    block = values.get(FORM_BLOCK) if isinstance(values, dict) else None
    element = block.get(FORM_INPUT) if isinstance(block, dict) else None
    value = element.get("value") if isinstance(element, dict) else None
    return value if isinstance(value, str) else ""


def submit_event(body: Json, actor: Actor) -> TextSubmitted:
    view = _object(body, "view")
    meta = form_metadata(view.get("private_metadata"))
    return TextSubmitted(str(meta.get("token") or ""), submitted_text(view), actor,
                         place_of(actor.cohort, meta.get("channel")))


# ---------------------------------------------------------------- reply -> Block Kit (pure)


def escape(text: str) -> str:
    """Slack's three control characters. With them escaped no text from a learner can become a
    mention (`<!everyone>`, `<@U…>`, `<!subteam^…>`) or a link."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def mrkdwn(text: str, limit: int = MAX_SECTION) -> str:
    """Slack mrkdwn of at most `limit` characters once escaped (the core's **bold** is Slack's *bold*).

    Escaping can grow a text fivefold, so a text too long for Slack is cut before it is escaped,
    at a character boundary, and ends with the core's cut note."""
    text = text.replace("**", "*")
    escaped = escape(text)
    if len(escaped) <= limit:
        return escaped
    if text.endswith(CUT_NOTE):
        text = text[: -len(CUT_NOTE)]
    note = escape(CUT_NOTE)
    budget, kept = limit - len(note), 0
    for char in text:
        budget -= len(escape(char))
        if budget < 0:
            break
        kept += 1
    return escape(text[:kept]) + note


def blocks_for(reply: Reply) -> list[Json]:
    """A section with the text, then one actions block per row of at most five buttons."""
    blocks: list[Json] = [{"type": "section", "text": {"type": "mrkdwn", "text": mrkdwn(reply.text)}}]
    n = 0
    for row_no, row in enumerate(reply.rows()):
        buttons = []
        for choice in row:
            buttons.append({"type": "button", "action_id": f"{ACTION_PREFIX}{n}",
                            "text": {"type": "plain_text", "text": choice.label}, "value": choice.token})
            n += 1
        blocks.append({"type": "actions", "block_id": f"studybot_row_{row_no}", "elements": buttons})
    return blocks


def message_for(reply: Reply) -> Json:
    """Keyword arguments for chat.postMessage / chat.update / respond / ack."""
    return {"text": mrkdwn(reply.text), "blocks": blocks_for(reply)}


def modal_for(form: Form, channel_id: str | None) -> Json:
    """The modal of a form; private_metadata carries the form token and where to answer."""
    return {
        "type": "modal",
        "callback_id": FORM_CALLBACK,
        "private_metadata": json.dumps({"token": form.token, "channel": channel_id}),
        "title": {"type": "plain_text", "text": form.title},
        "submit": {"type": "plain_text", "text": "Submit"},
        "close": {"type": "plain_text", "text": "Cancel"},
        "blocks": [
            {"type": "section", "text": {"type": "mrkdwn", "text": mrkdwn(form.prompt)}},
            {"type": "input", "block_id": FORM_BLOCK, "label": {"type": "plain_text", "text": form.label},
             "element": {"type": "plain_text_input", "action_id": FORM_INPUT, "multiline": True,
                         "max_length": min(form.max_length, MAX_SLACK_INPUT)}},
        ],
    }


def is_follow_up(reply: Reply) -> bool:
    """Work to deliver after the ack: public posts, edits, direct messages and files."""
    return reply.edit is not None or reply.file is not None or reply.audience is not Audience.PRIVATE


def routable(body: Json) -> bool:
    """Whether Bolt can route the body: its matchers and error handler read `actions[0]` of a
    block_actions payload unguarded, so one without a list of actions must stop here."""
    if body.get("type") != "block_actions":
        return True
    actions = body.get("actions")
    return isinstance(actions, list) and bool(actions) and all(isinstance(a, dict) for a in actions)


def repair_payload_quirk(req: AsyncBoltRequest) -> None:
    """Undo Bolt's misparse of a form body that merely *contains* the word "payload".

    `slack_bolt.request.internals.parse_body` treats any form body containing the substring
    "payload" as an interactivity post and parses `/glossary payload` to `{}`, which Bolt then
    answers 404. When the form has no `payload` field, re-parse it as plain form fields and
    rebuild the request context from them. Bolt's signature check is untouched: it reads
    `raw_body`, which stays the exact bytes Slack signed.
    """
    raw = req.raw_body
    if req.body or "payload" not in raw or req.content_type != "application/x-www-form-urlencoded":
        return
    fields = dict(parse_qsl(raw, keep_blank_values=True))
    if "payload" in fields:
        return
    req.body = fields
    req.context = build_async_context(AsyncBoltContext({}), fields)


def too_deep(raw: str, content_type: str, limit: int) -> bool:
    """Whether a body's JSON (an interactivity `payload=` field, or a JSON body) nests past `limit`."""
    if content_type == "application/json":
        return not json_depth_within(raw, limit)
    if "payload" not in raw:
        return False
    return any(name == "payload" and not json_depth_within(value, limit)
               for name, value in parse_qsl(raw, keep_blank_values=True))


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


class SlackAdapter:
    """Slack for the study bot; also the Outbox the scheduler delivers timers through.

    `limits` bounds HTTP mode's connections, reads and payloads; `admin_ttl` is how long a
    workspace-admin lookup (`instructors.slack_admins`) is trusted; `connect_timeout` bounds
    each step of `start()`."""

    platform = PLATFORM

    def __init__(self, bot: StudyBot, settings: SlackSettings, *, limits: Limits | None = None,
                 admin_ttl: float = 600.0, connect_timeout: float = 15.0) -> None:
        if settings.bot_token is None:
            raise ValueError("SLACK_BOT_TOKEN is not set")
        self.bot = bot
        self.settings = settings
        self.limits = limits or Limits()
        self.admin_ttl = admin_ttl
        self.connect_timeout = connect_timeout
        self.port: int | None = None
        base_url = settings.api_url.rstrip("/") + "/"
        token = settings.bot_token.reveal()
        self.client = AsyncWebClient(token=token, base_url=base_url, retry_handlers=[
            AsyncConnectionErrorRetryHandler(), AsyncRateLimitErrorRetryHandler(max_retry_count=2)])
        # Calls made before the ack (views.open, users.info) must not wait out a rate limit.
        self.quick = AsyncWebClient(token=token, base_url=base_url, timeout=2,
                                    retry_handlers=[AsyncConnectionErrorRetryHandler()])
        bolt_log = logging.getLogger(BOLT_LOG)
        if not any(isinstance(f, NoBodies) for f in bolt_log.filters):
            bolt_log.addFilter(NoBodies())
        secret = settings.signing_secret
        self._verifier = SignatureVerifier(secret.reveal()) if secret else None
        self._authorized: AuthorizeResult | None = None

        async def authorize() -> AuthorizeResult:
            """Bolt's authorization of each request: the bot token, checked once at start."""
            assert self._authorized is not None, "requests are served only after start()"
            return self._authorized

        self.app = AsyncApp(
            client=AsyncWebClient(base_url=base_url),  # Bolt's own: its token comes from `_authorize`
            authorize=authorize,
            logger=bolt_log,
            signing_secret=secret.reveal() if secret else "",
            request_verification_enabled=secret is not None or settings.app_token is None,
            process_before_response=True,
            raise_error_for_unhandled_request=True,
        )
        self.app.command(re.compile(r"^/"))(self._on_command)
        self.app.action(re.compile("^" + re.escape(ACTION_PREFIX)))(self._on_click)
        self.app.view(FORM_CALLBACK)(self._on_submit)
        self.app.error(self._on_error)
        self._refused = RefusalLog(log)
        self._ignored = RefusalLog(log, verb="ignored")
        self._replays = ReplayGuard()
        self._tasks: set[asyncio.Task[None]] = set()
        self._admins: dict[tuple[str, str], tuple[bool, float]] = {}
        self._dms: dict[str, str] = {}
        self._runner: web.AppRunner | None = None
        self._socket: AsyncSocketModeHandler | None = None
        self._starting: asyncio.Task[Any] | None = None
        self._closing = False

    # ------------------------------------------------------------ lifecycle

    async def start(self) -> None:
        """Check the bot token (auth.test), then connect over Socket Mode when an app token is set,
        else serve HTTP on /slack/events. Raises PlatformRejected (a token refused) or
        PlatformUnreachable (Slack not reached); `close()` is safe at any point, also meanwhile."""
        self._starting = asyncio.current_task()
        try:
            who = await self._check_token()
            if self.settings.app_token is not None:
                await self._connect_socket()
                mode = "Socket Mode"
            else:
                await self._serve_http()
                mode = f"HTTP mode on {self.settings.http_host}:{self.port}{EVENTS_PATH}"
        except asyncio.CancelledError:
            await self._release()
            task = asyncio.current_task()
            if self._closing and task is not None and task.uncancel() == 0:
                return  # close() stopped the start: not an error
            raise
        except BaseException:
            await self._release()
            raise
        finally:
            self._starting = None
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
                response = await self.client.auth_test()
        self._authorized = AuthorizeResult.from_auth_test_response(
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
                opened = await self.client.apps_connections_open(app_token=app_token)
        self._socket = AckingSocketModeHandler(self.app, app_token)
        self._socket.client.wss_uri = opened["url"]
        try:
            async with asyncio.timeout(self.connect_timeout):
                await self._socket.connect_async()
        except TimeoutError:
            raise PlatformUnreachable("cannot open the Slack Socket Mode connection within "
                                      f"{self.connect_timeout:g} s: check the network") from None

    async def _serve_http(self) -> None:
        limits = self.limits
        server = web.Application(client_max_size=limits.max_body)
        server.router.add_post(EVENTS_PATH, self._http)
        server.router.add_get(metrics_http.PATH, metrics_http.route(self.bot))
        # lingering_time=0: a body left unread (too slow, too large) is not waited for after the answer
        self._runner = web.AppRunner(server, shutdown_timeout=5.0, access_log=None,
                                     keepalive_timeout=limits.header_timeout, lingering_time=0)
        await self._runner.setup()
        site = CappedSite(self._runner, self.settings.http_host, self.settings.http_port, limits.max_connections)
        try:
            await site.start()
        except OSError as exc:
            raise PlatformUnreachable(f"cannot listen on {self.settings.http_host}:{self.settings.http_port} "
                                      f"({exc.strerror}): free the port or set STUDYBOT_HTTP_PORT") from None
        self.port = site.port

    async def close(self) -> None:
        """Stop taking requests, then finish the follow-ups already promised. Safe at any time: a
        `start()` still under way stops (and returns without an error)."""
        self._closing = True
        starting = self._starting
        if starting is not None and starting is not asyncio.current_task() and not starting.done():
            starting.cancel()
            await asyncio.wait({starting})
        await self._release()
        await self.idle()

    async def _release(self) -> None:
        socket, self._socket = self._socket, None
        if socket is not None:
            await socket.close_async()
        runner, self._runner = self._runner, None
        if runner is not None:
            await runner.cleanup()

    async def idle(self) -> None:
        """Wait until every deferred follow-up has finished."""
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)

    # ------------------------------------------------------------ HTTP mode

    async def _http(self, request: web.Request) -> web.StreamResponse:
        """Read the body within the limits, check its signature, bound its JSON nesting, and only
        then let Bolt parse it (see also `repair_payload_quirk`)."""
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
        if not self._replays.first_time(headers.get("X-Slack-Request-Timestamp"), headers.get("X-Slack-Signature")):
            self._ignored("a slack request replayed (same timestamp and signature); acknowledged, not done again")
            return web.Response(status=200, text="")
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            return self._refuse(400, "a body that is not UTF-8")
        if too_deep(text, request.content_type, self.limits.max_json_depth):
            return self._refuse(400, f"JSON nested deeper than {self.limits.max_json_depth} levels")
        try:
            bolt_request = AsyncBoltRequest(body=text, query=request.query_string, headers=headers)  # type: ignore[arg-type]
        except (ValueError, TypeError, AttributeError, KeyError) as exc:
            return self._refuse(400, f"a body that cannot be parsed ({type(exc).__name__})")
        repair_payload_quirk(bolt_request)
        if not routable(bolt_request.body):
            return self._refuse(400, "an interaction without actions")
        return await to_aiohttp_response(await self.app.async_dispatch(bolt_request))

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
        async def run(actor: Actor) -> None:
            event = command_event(body, actor)
            replies = await self.bot.handle(event)
            replies = await self._open_form(replies, body.get("trigger_id"), event.place)
            first = self._in_ack(replies)
            await (ack(**message_for(first)) if first is not None else ack())
            rest = [r for r in replies if r is not first]
            self._defer(self._after_ack(rest, actor, event.place, respond, body.get("channel_id")))

        await self._guard(ack, body, run)

    async def _on_click(self, ack: Any, body: Json, respond: Any) -> None:
        async def run(actor: Actor) -> None:
            event = click_event(body, actor)
            replies = await self.bot.handle(event)
            replies = await self._open_form(replies, body.get("trigger_id"), event.place)
            await ack()
            self._defer(self._after_ack(replies, actor, event.place, respond, (body.get("channel") or {}).get("id")))

        await self._guard(ack, body, run)

    async def _on_submit(self, ack: Any, body: Json) -> None:
        """A modal's text. The modal closes (plain ack) and the core's reply, feedback or a
        refusal alike, is shown ephemerally where the form came from (a DM when none)."""

        async def run(actor: Actor) -> None:
            event = submit_event(body, actor)
            replies = await self.bot.handle(event)
            await ack()
            self._defer(self._after_ack(replies, actor, event.place, None, event.place.channel_id))

        await self._guard(ack, body, run)

    @staticmethod
    def _in_ack(replies: list[Reply]) -> Reply | None:
        """The reply a command's ack may carry: its first private one, unless the command also
        posts or sends something, which that reply may confirm ("Posted.") before it happened."""
        if any(is_follow_up(r) for r in replies):
            return None
        return next(iter(replies), None)

    async def _guard(self, ack: Any, body: Json, run: Callable[[Actor], Awaitable[None]]) -> None:
        """Never let an exception escape a listener: Bolt would answer 404 after 3 s."""
        try:
            await run(await self._actor(body))
        except Exception:
            log.exception("slack listener failed (%s)", clean(body.get("command") or body.get("type"), 30))
            if ack.response is None:
                await ack(failed_text() if "command" in body else "")

    async def _after_ack(self, replies: list[Reply], actor: Actor, place: Place, respond: Any,
                         channel_id: str | None) -> None:
        """The posts, edits, DMs and files in order, then the private replies, which may confirm
        them: when one could not be delivered, the learner is told that instead."""
        private = [r for r in replies if not is_follow_up(r)]
        for reply in replies:
            if not is_follow_up(reply):
                continue
            try:
                await deliver(self.bot, self, replace(reply, place=reply.place or place, to=reply.to or actor))
            except SLACK_FAILURES as exc:
                log.warning("slack refused a %s reply (%s); telling the user", reply.audience, _why(exc))
                private = [Reply(UNDELIVERABLE[reply.audience is Audience.PUBLIC and reply.edit is None])]
                break
        for reply in private:
            try:
                await self._ephemeral(reply, actor, place, respond, channel_id)
            except SLACK_FAILURES as exc:
                log.warning("slack refused a private reply (%s)", _why(exc))

    # ------------------------------------------------------------ who, and where

    async def _actor(self, body: Json) -> Actor:
        team, user, name = user_of(body)
        return Actor(PLATFORM, team, user, name, await self._is_instructor(team, user))

    async def _is_instructor(self, team: str, user: str) -> bool:
        """Listed by id, or (with slack_admins) a workspace admin or owner. The admin flag is
        looked up with `users.info` before the ack, so the lookup never waits out a rate limit:
        it fails fast and the last known flag (or "learner") stands; a flag is trusted for
        `admin_ttl` seconds, so a demoted admin loses instructor powers within that time."""
        instructors = self.bot.settings.instructors
        if instructors.listed(Cohort(PLATFORM, team), user):
            return True
        if not instructors.slack_admins or not user:
            return False
        now = time.monotonic()
        known = self._admins.get((team, user))
        if known is not None and known[1] > now:
            return known[0]
        try:
            info = (await self.quick.users_info(user=user))["user"]
        except SLACK_FAILURES as exc:
            log.warning("users.info failed (%s); the user's last known role stands", _why(exc))
            return known[0] if known else False
        flag = bool(info.get("is_admin") or info.get("is_owner"))
        self._admins[(team, user)] = (flag, now + self.admin_ttl)
        return flag

    async def _dm_channel(self, user_id: str) -> str:
        if user_id not in self._dms:
            opened = await self.client.conversations_open(users=user_id)
            self._dms[user_id] = opened["channel"]["id"]
        return self._dms[user_id]

    # ------------------------------------------------------------ rendering replies

    async def _open_form(self, replies: list[Reply], trigger_id: str | None, place: Place) -> list[Reply]:
        """Open the first form as a modal, first thing (its trigger_id lasts 3 s); the reply is
        then consumed. If the modal cannot open, the reply stays, with a note."""
        for i, reply in enumerate(replies):
            if reply.form is None:
                continue
            try:
                await self.quick.views_open(trigger_id=trigger_id or "", view=modal_for(reply.form, place.channel_id))
            except SLACK_FAILURES as exc:
                log.warning("views.open failed (%s); telling the user to retry", _why(exc))
                note = replace(reply, form=None, text=reply.text + "\n(The answer form could not open. "
                                                                  "Run the command again for a fresh one.)")
                return [*replies[:i], note, *replies[i + 1 :]]
            return replies[:i] + replies[i + 1 :]
        return replies

    async def _ephemeral(self, reply: Reply, actor: Actor, place: Place, respond: Any,
                         channel_id: str | None) -> None:
        """A private reply: via response_url when there is one, else chat.postEphemeral, else a DM."""
        message = message_for(reply)
        if respond is not None and respond.response_url:
            sent = await respond(**message, response_type="ephemeral", replace_original=False)
            if sent.status_code == 200:
                return
            log.warning("slack response_url answered HTTP %s; posting the reply instead", sent.status_code)
        if place.channel_id:
            await self.client.chat_postEphemeral(channel=place.channel_id, user=actor.user_id, **message)
        else:
            await self.client.chat_postMessage(channel=channel_id or await self._dm_channel(actor.user_id), **message)

    def _defer(self, work: Coroutine[Any, Any, None]) -> None:
        async def guarded() -> None:
            try:
                await work
            except Exception:
                log.exception("slack follow-up failed")

        task = asyncio.create_task(guarded())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    # ------------------------------------------------------------ Outbox

    async def send(self, reply: Reply) -> MessageRef | None:
        """Public replies in `reply.place`'s channel; private and dm ones (and public ones from a
        direct message) in the DM with `reply.to`. Files are uploaded there with files_upload_v2."""
        public = reply.place.channel_id if reply.place and reply.audience is Audience.PUBLIC else None
        if public is None and reply.to is None:
            log.warning("a reply with neither channel nor recipient was dropped")
            return None
        with _refusals():
            channel = public or await self._dm_channel(reply.to.user_id if reply.to else "")
            if reply.file is not None:
                await self.client.files_upload_v2(channel=channel, filename=reply.file.filename,
                                                  content=reply.file.content, initial_comment=mrkdwn(reply.text))
                return None
            posted = await self.client.chat_postMessage(channel=channel, **message_for(reply))
        return MessageRef(PLATFORM, posted["channel"], posted["ts"])

    async def channel_problem(self, place: Place) -> str | None:
        """Why studybot could not post in this channel (conversations.info), else None. The bot token
        is the workspace's own, so a channel of another workspace is not found."""
        channel_id = place.channel_id or ""
        try:
            info = await self.client.conversations_info(channel=channel_id)
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
        try:
            with _refusals():
                await self.client.chat_update(channel=ref.channel_id, ts=ref.message_id, **message_for(reply))
        except SlackApiError as exc:
            if exc.response.get("error") != "message_not_found":
                raise
            log.warning("slack message to edit is gone (message_not_found)")


@contextlib.contextmanager
def _refusals() -> Iterator[None]:
    """Slack's refusals for good (NO_ACCESS, REFUSED) as a permanent DeliveryFailed; the rest as they are."""
    try:
        yield
    except SlackApiError as exc:
        code = clean(exc.response.get("error"), 40)
        if code in NO_ACCESS or code in REFUSED:
            raise DeliveryFailed(f"slack refused the message: {code}", permanent=True) from exc
        raise


def _why(exc: BaseException) -> str:
    """A failure as a short log token: the Web API's error code, else the exception's type."""
    if isinstance(exc, SlackApiError):
        return clean(exc.response.get("error"), 40)
    if isinstance(exc, DeliveryFailed):
        return clean(str(exc), 80)
    return type(exc).__name__
