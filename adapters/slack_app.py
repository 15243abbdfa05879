"""The Slack adapter: slack-bolt's AsyncApp in Socket Mode (with SLACK_APP_TOKEN) or HTTP mode.

Every request is recorded before it is acknowledged: `process_before_response=True` makes Bolt
answer Slack only after the listener returned, and each listener calls `bot.handle` (which
commits) before `ack()`. A form is opened as a modal first, while its trigger_id is fresh.
Private replies go in the ack body, through `respond()` or as ephemeral messages; only the
follow-up work (public posts, edits, file uploads) runs in background tasks after the ack.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import replace
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl

from aiohttp import ClientError, web
from slack_bolt.adapter.aiohttp import to_aiohttp_response, to_bolt_request
from slack_bolt.async_app import AsyncApp
from slack_bolt.context.async_context import AsyncBoltContext
from slack_bolt.request.async_internals import build_async_context
from slack_bolt.request.async_request import AsyncBoltRequest
from slack_bolt.response import BoltResponse
from slack_sdk.errors import SlackApiError
from slack_sdk.http_retry.builtin_async_handlers import (
    AsyncConnectionErrorRetryHandler,
    AsyncRateLimitErrorRetryHandler,
)
from slack_sdk.web.async_client import AsyncWebClient

from adapters import metrics_http
from adapters.slack_settings import SlackSettings
from bot.app import StudyBot
from bot.messages import (
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
from bot.scheduler import deliver

if TYPE_CHECKING:
    from slack_bolt.adapter.socket_mode.async_handler import AsyncSocketModeHandler

log = logging.getLogger("studybot.slack")

PLATFORM = "slack"
EVENTS_PATH = "/slack/events"
ACTION_PREFIX = "studybot:"
FORM_CALLBACK = "studybot_form"
FORM_BLOCK, FORM_INPUT = "answer", "text"
MAX_SLACK_INPUT = 3000  # Slack's limit for plain_text_input.max_length
SLACK_FAILURES = (SlackApiError, ClientError, TimeoutError)
FAILED = "Something went wrong on our side. Please try again in a moment."

Json = dict[str, Any]


# ---------------------------------------------------------------- payload -> event (pure)


def place_of(team_id: str, channel_id: str | None) -> Place:
    """A Place; a direct-message channel ("D…") is no channel at all for the core."""
    channel = channel_id if channel_id and not channel_id.startswith("D") else None
    return Place(PLATFORM, team_id, channel)


def command_event(body: Json, actor: Actor) -> Command:
    return Command(body.get("command", "").lstrip("/"), body.get("text", ""), actor,
                   place_of(actor.cohort, body.get("channel_id")))


def click_event(body: Json, actor: Actor) -> ChoiceMade:
    channel = (body.get("channel") or {}).get("id") or (body.get("container") or {}).get("channel_id")
    return ChoiceMade(body["actions"][0].get("value", ""), actor, place_of(actor.cohort, channel))


def submit_event(body: Json, actor: Actor) -> TextSubmitted:
    view = body["view"]
    meta = json.loads(view.get("private_metadata") or "{}")
    value = view["state"]["values"].get(FORM_BLOCK, {}).get(FORM_INPUT, {}).get("value") or ""
    return TextSubmitted(meta.get("token", ""), value, actor, place_of(actor.cohort, meta.get("channel")))


def user_of(body: Json) -> tuple[str, str, str]:
    """(team id, user id, user name) of a slash command or an interactivity payload."""
    if "command" in body:
        return body.get("team_id", ""), body.get("user_id", ""), body.get("user_name", "")
    user = body.get("user") or {}
    team = (body.get("team") or {}).get("id") or user.get("team_id", "")
    return team, user.get("id", ""), user.get("username") or user.get("name", "")


# ---------------------------------------------------------------- reply -> Block Kit (pure)


def mrkdwn(text: str) -> str:
    """Slack mrkdwn: escape the three control characters; the core's **bold** is Slack's *bold*."""
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return text.replace("**", "*")[:3000]  # escaping may grow it past Slack's 3,000 for a section


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
    """Work that may wait until after the ack: public posts, edits, direct messages and files."""
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


# ---------------------------------------------------------------- the adapter


class SlackAdapter:
    """Slack for the study bot; also the Outbox the scheduler delivers timers through."""

    platform = PLATFORM

    def __init__(self, bot: StudyBot, settings: SlackSettings) -> None:
        if settings.bot_token is None:
            raise ValueError("SLACK_BOT_TOKEN is not set")
        self.bot = bot
        self.settings = settings
        self.port: int | None = None
        self.client = AsyncWebClient(
            token=settings.bot_token.reveal(),
            base_url=settings.api_url.rstrip("/") + "/",
            retry_handlers=[AsyncConnectionErrorRetryHandler(), AsyncRateLimitErrorRetryHandler(max_retry_count=2)],
        )
        secret = settings.signing_secret
        self.app = AsyncApp(
            client=self.client,
            signing_secret=secret.reveal() if secret else "",
            request_verification_enabled=secret is not None or settings.app_token is None,
            process_before_response=True,
        )
        self.app.command(re.compile(r"^/"))(self._on_command)
        self.app.action(re.compile("^" + re.escape(ACTION_PREFIX)))(self._on_click)
        self.app.view(FORM_CALLBACK)(self._on_submit)
        self.app.error(self._on_malformed)
        self._tasks: set[asyncio.Task[None]] = set()
        self._admins: dict[tuple[str, str], bool] = {}
        self._dms: dict[str, str] = {}
        self._runner: web.AppRunner | None = None
        self._socket: AsyncSocketModeHandler | None = None

    # ------------------------------------------------------------ lifecycle

    async def start(self) -> None:
        """Connect over Socket Mode when an app token is set, else serve HTTP on /slack/events."""
        if self.settings.app_token is not None:
            from slack_bolt.adapter.socket_mode.async_handler import AsyncSocketModeHandler

            self._socket = AsyncSocketModeHandler(self.app, self.settings.app_token.reveal())
            await self._socket.connect_async()
            return
        server = web.Application()
        server.router.add_post(EVENTS_PATH, self._http)
        server.router.add_get(metrics_http.PATH, metrics_http.route(self.bot))
        self._runner = web.AppRunner(server, shutdown_timeout=5.0, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.settings.http_host, self.settings.http_port)
        await site.start()
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        log.info("slack HTTP mode listening on %s:%s%s", self.settings.http_host, self.port, EVENTS_PATH)

    async def close(self) -> None:
        """Stop taking requests, then finish the follow-ups already promised."""
        if self._socket is not None:
            await self._socket.close_async()
            self._socket = None
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
        await self.idle()

    async def idle(self) -> None:
        """Wait until every deferred follow-up has finished."""
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)

    async def _http(self, request: web.Request) -> web.Response:
        """Bolt's aiohttp adapter, plus the `payload` repair (see `repair_payload_quirk`); a body
        that cannot be parsed is a 400."""
        try:
            bolt_request = await to_bolt_request(request)
        except (ValueError, TypeError, AttributeError) as exc:
            log.warning("rejected a Slack request whose body cannot be parsed: %s", type(exc).__name__)
            return web.Response(status=400, text="malformed request")
        repair_payload_quirk(bolt_request)
        if not routable(bolt_request.body):
            log.warning("rejected a Slack interaction without actions")
            return web.Response(status=400, text="malformed request")
        return await to_aiohttp_response(await self.app.async_dispatch(bolt_request))

    async def _on_malformed(self, error: Exception) -> BoltResponse:
        """Bolt's own matching failed on the payload's shape (our listeners catch their own errors)."""
        log.warning("rejected a Slack request Bolt could not route: %s", type(error).__name__)
        return BoltResponse(status=400, body="malformed request")

    # ------------------------------------------------------------ listeners

    async def _on_command(self, ack: Any, body: Json, respond: Any) -> None:
        async def run(actor: Actor) -> None:
            event = command_event(body, actor)
            replies = await self.bot.handle(event)
            replies = await self._open_form(replies, body.get("trigger_id"), event.place)
            private = [r for r in replies if not is_follow_up(r)]
            if private:
                await ack(**message_for(private[0]))
            else:
                await ack()
            for reply in private[1:]:
                await self._ephemeral(reply, actor, event.place, respond, body.get("channel_id"))
            self._follow_up(replies, actor, event.place)

        await self._guard(ack, body, run)

    async def _on_click(self, ack: Any, body: Json, respond: Any) -> None:
        async def run(actor: Actor) -> None:
            event = click_event(body, actor)
            replies = await self.bot.handle(event)
            replies = await self._open_form(replies, body.get("trigger_id"), event.place)
            await ack()
            channel = (body.get("channel") or {}).get("id")
            for reply in replies:
                if not is_follow_up(reply):
                    await self._ephemeral(reply, actor, event.place, respond, channel)
            self._follow_up(replies, actor, event.place)

        await self._guard(ack, body, run)

    async def _on_submit(self, ack: Any, body: Json) -> None:
        """A modal's text. The modal closes (plain ack) and the core's reply, feedback or a
        refusal alike, is shown ephemerally where the form came from (a DM when none)."""

        async def run(actor: Actor) -> None:
            event = submit_event(body, actor)
            replies = await self.bot.handle(event)
            await ack()
            for reply in replies:
                if not is_follow_up(reply):
                    await self._ephemeral(reply, actor, event.place, None, event.place.channel_id)
            self._follow_up(replies, actor, event.place)

        await self._guard(ack, body, run)

    async def _guard(self, ack: Any, body: Json, run: Callable[[Actor], Awaitable[None]]) -> None:
        """Never let an exception escape a listener: Bolt would answer 404 after 3 s."""
        try:
            await run(await self._actor(body))
        except Exception:
            log.exception("slack listener failed (%s)", body.get("command") or body.get("type"))
            if ack.response is None:
                await ack(FAILED if "command" in body else "")

    # ------------------------------------------------------------ who, and where

    async def _actor(self, body: Json) -> Actor:
        team, user, name = user_of(body)
        return Actor(PLATFORM, team, user, name, await self._is_instructor(team, user))

    async def _is_instructor(self, team: str, user: str) -> bool:
        instructors = self.bot.settings.instructors
        if instructors.listed(Cohort(PLATFORM, team), user):
            return True
        if not instructors.slack_admins or not user:
            return False
        if (team, user) not in self._admins:
            try:
                info = (await self.client.users_info(user=user))["user"]
            except SLACK_FAILURES:
                log.warning("users.info failed; treating the user as a learner this time")
                return False
            self._admins[(team, user)] = bool(info.get("is_admin") or info.get("is_owner"))
        return self._admins[(team, user)]

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
                await self.client.views_open(trigger_id=trigger_id or "", view=modal_for(reply.form, place.channel_id))
            except SLACK_FAILURES:
                log.warning("views.open failed; telling the user to retry")
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
            await respond(**message, response_type="ephemeral", replace_original=False)
        elif place.channel_id:
            await self.client.chat_postEphemeral(channel=place.channel_id, user=actor.user_id, **message)
        else:
            await self.client.chat_postMessage(channel=channel_id or await self._dm_channel(actor.user_id), **message)

    def _follow_up(self, replies: list[Reply], actor: Actor, place: Place) -> None:
        """Deliver the public posts, edits, DMs and files of one event, in order, after the ack."""
        later = [replace(r, place=r.place or place, to=r.to or actor) for r in replies if is_follow_up(r)]
        if later:
            self._defer(self._deliver_all(later))

    async def _deliver_all(self, replies: list[Reply]) -> None:
        for reply in replies:
            try:
                await deliver(self.bot, self, reply)
            except Exception:
                log.exception("slack follow-up failed")

    def _defer(self, work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    # ------------------------------------------------------------ Outbox

    async def send(self, reply: Reply) -> MessageRef | None:
        """Public replies in `reply.place`'s channel; private and dm ones (and public ones from a
        direct message) in the DM with `reply.to`. Files are uploaded there with files_upload_v2."""
        channel = reply.place.channel_id if reply.place and reply.audience is Audience.PUBLIC else None
        if channel is None:
            if reply.to is None:
                log.warning("a reply with neither channel nor recipient was dropped")
                return None
            channel = await self._dm_channel(reply.to.user_id)
        if reply.file is not None:
            await self.client.files_upload_v2(channel=channel, filename=reply.file.filename,
                                              content=reply.file.content, initial_comment=mrkdwn(reply.text))
            return None
        posted = await self.client.chat_postMessage(channel=channel, **message_for(reply))
        return MessageRef(PLATFORM, posted["channel"], posted["ts"])

    async def edit(self, ref: MessageRef, reply: Reply) -> None:
        await self.client.chat_update(channel=ref.channel_id, ts=ref.message_id, **message_for(reply))

