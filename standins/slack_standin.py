"""A loopback Slack stand-in for adapter tests.

`SlackStandIn` is a real aiohttp server that the real slack-sdk / slack-bolt talk to: the Web API
(`/api/{method}`), the file-upload URL, `response_url` endpoints and a Socket Mode websocket. It
enforces what real Slack enforces where a lenient fake would let adapter bugs through: tokens,
the 3-second `trigger_id` window (single use), existing messages/views for updates, and injected
rate limits.

For many workspaces it also plays Slack's side of "Add to Slack": `/oauth/v2/authorize` hands out
a one-time code (for the workspace named by its `team` parameter; with `enterprise`, a workspace of
that Enterprise Grid organization, or with `org_wide=1` the organization-wide install) and redirects
to the app's redirect URL, and `oauth.v2.access` trades the code, or with token rotation a refresh token,
for a workspace's own bot token. Every Web API call is answered as the workspace whose token it
carries; an expired token is refused with `token_expired`.

The module-level builders play the "Slack side" of HTTP mode: signed slash commands and
interactivity posts (`slash_command`, `block_actions`, `view_submission`), plus the plain payload
dicts (`*_payload`) that Socket Mode envelopes carry.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import itertools
import json
import secrets
import time
from collections import deque
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Self
from urllib.parse import urlencode

import aiohttp
from aiohttp import BasicAuth, web
from multidict import CIMultiDict

from standins.loopback import LoopbackServer

BOT_TOKEN = "xoxb-test-token"
APP_TOKEN = "xapp-test-token"
SIGNING_SECRET = "test-signing-secret"
TEAM_ID = "T0001"
APP_ID = "A0001"
BOT_USER_ID = "U0BOT"
BOT_ID = "B0BOT"
CLIENT_ID = "1111.2222"
CLIENT_SECRET = "test-client-secret"
INSTALLER_ID = "U0INSTALL"

APP_TOKEN_METHODS = frozenset({"apps.connections.open"})
CLIENT_METHODS = frozenset({"oauth.v2.access"})  # authenticated with the app's client id and secret
FORM = "application/x-www-form-urlencoded"

Json = dict[str, Any]
Handler = Callable[[Json], Awaitable[Json]]


class SlackError(Exception):
    """Raised by a method handler to answer `{"ok": false, "error": code}`."""

    def __init__(self, code: str) -> None:
        super().__init__(code)
        self.code = code


@dataclass
class Call:
    """One request the stand-in received, with query, form and JSON parameters merged."""

    method: str
    params: dict[str, Any]
    headers: Mapping[str, str]

    @property
    def token(self) -> str | None:
        """The Bearer token the caller sent, if any."""
        auth = self.headers.get("Authorization", "")
        return auth[len("Bearer ") :] if auth.startswith("Bearer ") else None


@dataclass
class Workspace:
    """A workspace a bot token belongs to (the stand-in's default token is workspace T0001's). An
    organization-wide install's token belongs to its organization: `team_id` is the enterprise id."""

    team_id: str
    name: str = "Fake"
    bot_user_id: str = BOT_USER_ID
    bot_id: str = BOT_ID
    expires_at: float | None = None  # time.time() after which the token is refused (token_expired)
    enterprise_id: str | None = None  # the Enterprise Grid organization it belongs to
    org_wide: bool = False  # installed for the whole organization


@dataclass
class _Injected:
    status: int
    body: Json | str
    headers: dict[str, str]


class SlackStandIn(LoopbackServer):
    """Slack Web API, upload, response_url and Socket Mode endpoints on 127.0.0.1.

    Records: `calls` (every Web API call in order, plus the upload POST as method "upload"),
    `uploads` (file_id -> bytes), `shared_files` (completed uploads), `responses`
    ((id, body) posted to response URLs), `messages` ((channel, ts) -> message), `views`
    (view_id -> view) and `socket_frames` (every frame the app sent over Socket Mode).
    Settable: `users[uid]` (merged over a default member), `trigger_ttl`, `inject(...)`.
    """

    def __init__(
        self,
        *,
        bot_token: str = BOT_TOKEN,
        app_token: str = APP_TOKEN,
        signing_secret: str = SIGNING_SECRET,
        trigger_ttl: float = 3.0,
        client_id: str = CLIENT_ID,
        client_secret: str = CLIENT_SECRET,
    ) -> None:
        super().__init__()
        self.client_id = client_id
        self.client_secret = client_secret
        self.tokens: dict[str, Workspace] = {bot_token: Workspace(TEAM_ID)}  # bot token -> its workspace
        self.rotation = False  # when on, installs get expiring tokens and a refresh token
        self.token_lifetime = 43200  # seconds a rotated token lives (Slack's 12 hours)
        self.oauth_redirect_url = ""  # the app's redirect URL, as set in its Slack app config
        self.refreshes: list[str] = []  # the workspaces whose token was refreshed, in order
        self._codes: dict[str, tuple[Workspace, str]] = {}  # one-time code -> (what is installed, installer)
        self._refresh_tokens: dict[str, str] = {}  # refresh token -> workspace
        self.bot_token = bot_token
        self.app_token = app_token
        self.signing_secret = signing_secret
        self.trigger_ttl = trigger_ttl
        self.url = ""
        self.calls: list[Call] = []
        self.uploads: dict[str, bytes] = {}
        self.shared_files: list[Json] = []
        self.responses: list[tuple[str, Any]] = []
        self.response_peers: list[Any] = []  # each response_url post's client address (a kept-alive one repeats)
        self.messages: dict[tuple[str, str], Json] = {}
        self.views: dict[str, Json] = {}
        self.users: dict[str, Json] = {}
        # channels conversations.info knows (id -> overrides of the public channel below); others are not found
        self.channels: dict[str, Json] = {"C0001": {}}
        self.socket_frames: list[Json] = []
        self.socket_connections = 0
        self._ids = itertools.count(1)
        self._epoch = int(time.time())
        self._ts_seq = itertools.count(100)
        self._triggers: dict[str, float] = {}
        self._used_triggers: set[str] = set()
        self._pending_uploads: dict[str, Json] = {}
        self._injected: dict[str, deque[_Injected]] = {}
        self._tickets: set[str] = set()
        self._ws: web.WebSocketResponse | None = None
        self._connected = asyncio.Event()
        self._acks: dict[str, asyncio.Future[Json]] = {}
        self.response_gate: asyncio.Event | None = None  # when set, response_url posts wait for it
        self._held: dict[str, asyncio.Event] = {}
        self._methods: dict[str, Handler] = {
            "auth.test": self._auth_test,
            "chat.postMessage": self._chat_post_message,
            "chat.postEphemeral": self._chat_post_ephemeral,
            "chat.update": self._chat_update,
            "chat.getPermalink": self._chat_get_permalink,
            "views.open": self._views_open,
            "views.push": self._views_open,
            "views.update": self._views_update,
            "conversations.open": self._conversations_open,
            "conversations.info": self._conversations_info,
            "files.getUploadURLExternal": self._files_get_upload_url,
            "files.completeUploadExternal": self._files_complete_upload,
            "users.info": self._users_info,
            "apps.connections.open": self._apps_connections_open,
            "oauth.v2.access": self._oauth_v2_access,
        }

    # -- lifecycle -------------------------------------------------------------------------

    async def start(self, port: int = 0) -> Self:
        """Start serving on 127.0.0.1 at `port` (0: a free one); sets `url`."""
        app = web.Application()
        app.router.add_route("*", "/api/{method}", self._api)
        app.router.add_post("/upload/v1/{file_id}", self._upload)
        app.router.add_post("/response_url/{id}", self._response_url)
        app.router.add_get("/link/", self._socket)
        app.router.add_get("/oauth/v2/authorize", self._authorize)
        self.url = f"http://127.0.0.1:{await self.serve(app, port)}"
        return self


    @property
    def api_url(self) -> str:
        """The `base_url` for `AsyncWebClient` (ends with a slash)."""
        return self.url + "/api/"

    # -- helpers for tests -----------------------------------------------------------------

    def calls_to(self, method: str) -> list[Call]:
        """The recorded calls to one Web API method, in order."""
        return [c for c in self.calls if c.method == method]

    def team_of(self, call: Call) -> str | None:
        """The workspace whose bot token a call carried."""
        workspace = self.tokens.get(call.token or "")
        return workspace.team_id if workspace else None

    def response_url(self, id: str) -> str:
        """A response_url that records what is posted to it under `id`."""
        return f"{self.url}/response_url/{id}"

    def new_trigger_id(self) -> str:
        """Issue a trigger_id, valid for `trigger_ttl` seconds and one views.open/push."""
        trigger_id = f"{next(self._ids)}.{self._epoch}.{secrets.token_hex(8)}"
        self._triggers[trigger_id] = time.monotonic()
        return trigger_id

    def inject(
        self,
        method: str,
        status: int,
        body: Json | str,
        headers: Mapping[str, str] | None = None,
        times: int = 1,
    ) -> None:
        """Answer the next `times` calls to `method` with this response (calls still recorded).

        e.g. `inject("chat.postMessage", 429, {"ok": False, "error": "ratelimited"},
        {"Retry-After": "1"})`.
        """
        queue = self._injected.setdefault(method, deque())
        queue.extend(_Injected(status, body, dict(headers or {})) for _ in range(times))

    def hold(self, method: str) -> asyncio.Event:
        """Make calls to `method` wait (recorded, unanswered) until the returned event is set."""
        return self._held.setdefault(method, asyncio.Event())

    def _next_ts(self) -> str:
        seq = next(self._ts_seq)
        return f"{self._epoch + seq // 1_000_000}.{seq % 1_000_000:06d}"

    # -- Web API ---------------------------------------------------------------------------

    async def _api(self, request: web.Request) -> web.StreamResponse:
        method = request.match_info["method"]
        params: dict[str, Any] = dict(request.query)
        if request.content_type == "application/json" and request.can_read_body:
            body = await request.json()
            if isinstance(body, dict):
                params.update(body)
        elif request.content_type in (FORM, "multipart/form-data"):
            params.update((await request.post()).items())
        self.calls.append(Call(method, params, CIMultiDict(request.headers)))
        if method in self._held:
            await self._held[method].wait()

        queue = self._injected.get(method)
        if queue:
            hit = queue.popleft()
            if isinstance(hit.body, str):
                return web.Response(status=hit.status, text=hit.body, headers=hit.headers)
            return web.json_response(hit.body, status=hit.status, headers=hit.headers)

        handler = self._methods.get(method)
        try:
            if handler is None:
                raise SlackError("unknown_method")
            workspace = self._check_token(method, request, params)
            result = await (handler(params, workspace) if method in WORKSPACE_METHODS else handler(params))
        except SlackError as e:
            return web.json_response({"ok": False, "error": e.code})
        headers = {"x-oauth-scopes": SCOPES}
        return web.json_response({"ok": True, **result}, headers=headers)

    def _check_token(self, method: str, request: web.Request, params: Json) -> Workspace | None:
        """The workspace whose bot token the call carries (None for app and client calls)."""
        auth = request.headers.get("Authorization", "")
        if method in CLIENT_METHODS:
            try:
                basic = BasicAuth.decode(auth) if auth.startswith("Basic ") else None
            except ValueError:
                basic = None
            client = (basic.login, basic.password) if basic else (params.get("client_id"), params.get("client_secret"))
            if client != (self.client_id, self.client_secret):
                raise SlackError("invalid_client_id" if client[0] != self.client_id else "bad_client_secret")
            return None
        token = auth[len("Bearer ") :] if auth.startswith("Bearer ") else params.get("token")
        if method in APP_TOKEN_METHODS and token == self.app_token:
            return None
        workspace = self.tokens.get(str(token)) if method not in APP_TOKEN_METHODS else None
        if workspace is not None:
            if workspace.expires_at is not None and workspace.expires_at <= time.time():
                raise SlackError("token_expired")
            return workspace
        if not token:
            raise SlackError("not_authed")
        if token == self.app_token or token in self.tokens:
            raise SlackError("not_allowed_token_type")
        raise SlackError("invalid_auth")

    async def _auth_test(self, params: Json, workspace: Workspace | None) -> Json:
        assert workspace is not None
        return {
            "url": f"https://{workspace.name.lower()}.slack.com/",
            "team": workspace.name,
            "user": "studybot",
            "team_id": workspace.team_id,
            "user_id": workspace.bot_user_id,
            "bot_id": workspace.bot_id,
            "enterprise_id": workspace.enterprise_id,
            "is_enterprise_install": workspace.org_wide,
        }

    # -- OAuth: installs and token rotation ------------------------------------------------

    def expire(self, team_id: str) -> None:
        """Every token of the workspace expires now (as if its lifetime had passed)."""
        for workspace in self.tokens.values():
            if workspace.team_id == team_id and workspace.expires_at is not None:
                workspace.expires_at = time.time()

    def uninstall(self, team_id: str) -> None:
        """The workspace removes the app: its tokens are revoked (the app is told by an event)."""
        self.tokens = {t: w for t, w in self.tokens.items() if w.team_id != team_id}
        self._refresh_tokens = {r: t for r, t in self._refresh_tokens.items() if t != team_id}

    def token_of(self, team_id: str) -> str:
        """The workspace's newest bot token."""
        return [t for t, w in self.tokens.items() if w.team_id == team_id][-1]

    async def _authorize(self, request: web.Request) -> web.Response:
        """The user approves the install in workspace `team` (by default T0001) as user `installer`
        (a stand-in parameter): a one-time code goes back to the app's redirect URL."""
        query = request.query
        if query.get("client_id") != self.client_id:
            return web.Response(status=400, text="invalid client_id")
        redirect = query.get("redirect_uri") or self.oauth_redirect_url
        if not redirect:
            return web.Response(status=400, text="no redirect URL: set the app's oauth_redirect_url")
        code = secrets.token_hex(8)
        enterprise, org_wide = query.get("enterprise"), query.get("org_wide") == "1"
        team_id = enterprise if org_wide and enterprise else query.get("team") or TEAM_ID
        installed = Workspace(team_id, enterprise_id=enterprise, org_wide=org_wide and bool(enterprise))
        self._codes[code] = (installed, query.get("installer") or INSTALLER_ID)
        raise web.HTTPFound(f"{redirect}?{urlencode({'code': code, 'state': query.get('state', '')})}")

    async def _oauth_v2_access(self, params: Json) -> Json:
        if params.get("grant_type") == "refresh_token":
            team_id = self._refresh_tokens.get(str(params.get("refresh_token")))
            if team_id is None:
                raise SlackError("invalid_refresh_token")
            self.refreshes.append(team_id)
            token, refresh, expires_in = self._issue(team_id)
            return {"access_token": token, "token_type": "bot", "refresh_token": refresh, "expires_in": expires_in,
                    "scope": SCOPES, "team": {"id": team_id}, "enterprise": None}
        found = self._codes.pop(str(params.get("code")), None)
        if found is None:
            raise SlackError("invalid_code")
        installed, installer = found
        token, refresh, expires_in = self._issue(installed.team_id, installed.enterprise_id, installed.org_wide)
        workspace = self.tokens[token]
        granted: Json = {"refresh_token": refresh, "expires_in": expires_in} if refresh else {}
        enterprise = {"id": workspace.enterprise_id, "name": f"Org{workspace.enterprise_id}"}
        team = None if workspace.org_wide else {"id": workspace.team_id, "name": workspace.name}
        return {"access_token": token, "token_type": "bot", "scope": SCOPES, "bot_user_id": workspace.bot_user_id,
                "app_id": APP_ID, "team": team, "enterprise": enterprise if workspace.enterprise_id else None,
                "is_enterprise_install": workspace.org_wide, "authed_user": {"id": installer}, **granted}

    def _issue(self, team_id: str, enterprise_id: str | None = None,
               org_wide: bool = False) -> tuple[str, str | None, int | None]:
        """A new bot token for the workspace, or the organization's when `org_wide` (with rotation:
        expiring, with a refresh token)."""
        n = next(self._ids)
        prefix = "xoxe.xoxb" if self.rotation else "xoxb"
        token = f"{prefix}-{team_id}-{n}-{secrets.token_hex(6)}"
        expires_at = time.time() + self.token_lifetime if self.rotation else None
        self.tokens[token] = Workspace(team_id, f"Team{team_id}", f"U0BOT{team_id}", f"B0BOT{team_id}", expires_at,
                                       enterprise_id, org_wide)
        if not self.rotation:
            return token, None, None
        refresh = f"xoxe-1-{team_id}-{secrets.token_hex(6)}"
        self._refresh_tokens = {r: t for r, t in self._refresh_tokens.items() if t != team_id}  # the old one is spent
        self._refresh_tokens[refresh] = team_id
        return token, refresh, self.token_lifetime

    @staticmethod
    def _require(params: Json, name: str, error: str = "invalid_arguments") -> str:
        value = params.get(name)
        if not value:
            raise SlackError(error)
        return str(value)

    @staticmethod
    def _decoded(value: Any) -> Any:
        """Parameters sent as query/form arrive as JSON strings; JSON bodies as objects."""
        if isinstance(value, str) and value.startswith(("[", "{")):
            return json.loads(value)
        return value

    async def _chat_post_message(self, params: Json) -> Json:
        channel = self._require(params, "channel", "channel_not_found")
        if channel[0] in "UW":  # posting to a user id lands in the DM with them
            channel = "D" + channel
        if not any(params.get(k) for k in ("text", "blocks", "attachments")):
            raise SlackError("no_text")
        ts = self._next_ts()
        message = {
            "type": "message",
            "user": BOT_USER_ID,
            "bot_id": BOT_ID,
            "app_id": APP_ID,
            "team": TEAM_ID,
            "ts": ts,
            "text": params.get("text", ""),
            "blocks": self._decoded(params.get("blocks", [])),
        }
        if params.get("thread_ts"):
            message["thread_ts"] = params["thread_ts"]
        self.messages[(channel, ts)] = message
        return {"channel": channel, "ts": ts, "message": message}

    async def _chat_post_ephemeral(self, params: Json) -> Json:
        self._require(params, "channel", "channel_not_found")
        self._require(params, "user", "user_not_in_channel")
        return {"message_ts": self._next_ts()}

    async def _chat_update(self, params: Json) -> Json:
        channel = self._require(params, "channel", "channel_not_found")
        ts = self._require(params, "ts", "message_not_found")
        message = self.messages.get((channel, ts))
        if message is None:
            raise SlackError("message_not_found")
        for key in ("text", "blocks", "attachments"):
            if key in params:
                message[key] = self._decoded(params[key])
        message["edited"] = {"user": BOT_USER_ID, "ts": self._next_ts()}
        return {"channel": channel, "ts": ts, "text": message.get("text", ""), "message": message}

    async def _chat_get_permalink(self, params: Json) -> Json:
        channel = self._require(params, "channel", "channel_not_found")
        ts = self._require(params, "message_ts", "message_not_found")
        if (channel, ts) not in self.messages:
            raise SlackError("message_not_found")
        return {
            "channel": channel,
            "permalink": f"https://fake.slack.com/archives/{channel}/p{ts.replace('.', '')}",
        }

    async def _views_open(self, params: Json) -> Json:
        trigger_id = str(params.get("trigger_id", ""))
        issued = self._triggers.get(trigger_id)
        if issued is None or time.monotonic() - issued > self.trigger_ttl:
            raise SlackError("expired_trigger_id")
        if trigger_id in self._used_triggers:
            raise SlackError("exchanged_trigger_id")
        self._used_triggers.add(trigger_id)
        view = self._decoded(params.get("view"))
        if not isinstance(view, dict):
            raise SlackError("invalid_arguments")
        view_id = f"V{next(self._ids):04d}"
        stored = {
            "id": view_id,
            "team_id": TEAM_ID,
            "type": view.get("type", "modal"),
            "callback_id": view.get("callback_id", ""),
            "private_metadata": view.get("private_metadata", ""),
            "external_id": view.get("external_id", ""),
            "title": view.get("title"),
            "submit": view.get("submit"),
            "close": view.get("close"),
            "blocks": view.get("blocks", []),
            "state": {"values": {}},
            "hash": f"{time.time():.6f}.{secrets.token_hex(4)}",
            "root_view_id": view_id,
            "previous_view_id": None,
            "app_id": APP_ID,
            "bot_id": BOT_ID,
            "clear_on_close": bool(view.get("clear_on_close", False)),
            "notify_on_close": bool(view.get("notify_on_close", False)),
        }
        self.views[view_id] = stored
        return {"view": stored}

    async def _views_update(self, params: Json) -> Json:
        view_id, external_id = params.get("view_id"), params.get("external_id")
        matches = [
            v for v in self.views.values() if external_id and v["external_id"] == external_id
        ]
        stored = self.views.get(view_id) if view_id else (matches[0] if matches else None)
        if stored is None:
            raise SlackError("not_found")
        if params.get("hash") and params["hash"] != stored["hash"]:
            raise SlackError("hash_conflict")
        view = self._decoded(params.get("view"))
        if not isinstance(view, dict):
            raise SlackError("invalid_arguments")
        for key in (
            "type",
            "callback_id",
            "private_metadata",
            "title",
            "submit",
            "close",
            "blocks",
        ):
            if key in view:
                stored[key] = view[key]
        stored["hash"] = f"{time.time():.6f}.{secrets.token_hex(4)}"
        return {"view": stored}

    async def _conversations_info(self, params: Json) -> Json:
        """A public channel the bot is in, as Slack documents it; `channels` overrides fields."""
        channel = self._require(params, "channel", "channel_not_found")
        if channel not in self.channels:
            raise SlackError("channel_not_found")
        return {"channel": {"id": channel, "name": f"channel-{channel.lower()}", "is_channel": True,
                            "is_group": False, "is_im": False, "is_mpim": False, "is_private": False,
                            "is_archived": False, "is_general": channel == "C0001", "is_member": True,
                            "created": self._epoch, "creator": "U0CREATOR", **self.channels[channel]}}

    async def _conversations_open(self, params: Json) -> Json:
        users = [u for u in str(params.get("users", "")).split(",") if u]
        if len(users) != 1:
            raise SlackError("users_list_not_supplied" if not users else "not_supported")
        return {"no_op": False, "already_open": False, "channel": {"id": "D" + users[0]}}

    async def _files_get_upload_url(self, params: Json) -> Json:
        filename = self._require(params, "filename")
        length = int(self._require(params, "length"))
        file_id = f"F{next(self._ids):04d}"
        self._pending_uploads[file_id] = {"filename": filename, "length": length}
        return {"upload_url": f"{self.url}/upload/v1/{file_id}", "file_id": file_id}

    async def _upload(self, request: web.Request) -> web.Response:
        file_id = request.match_info["file_id"]
        data = await request.read()
        self.calls.append(
            Call("upload", {"file_id": file_id, "size": len(data)}, CIMultiDict(request.headers))
        )
        if file_id not in self._pending_uploads:
            return web.Response(status=404, text="file not found")
        self.uploads[file_id] = data
        return web.Response(text=f"OK - {len(data)}")

    async def _files_complete_upload(self, params: Json) -> Json:
        files = self._decoded(params.get("files"))
        if not isinstance(files, list) or not files:
            raise SlackError("invalid_arguments")
        done = []
        for f in files:
            if f.get("id") not in self.uploads:
                raise SlackError("file_not_found")
            pending = self._pending_uploads[f["id"]]
            done.append(
                {
                    "id": f["id"],
                    "title": f.get("title") or pending["filename"],
                    "name": pending["filename"],
                    "size": len(self.uploads[f["id"]]),
                }
            )
        for f in done:
            self.shared_files.append(
                {
                    **f,
                    "channel_id": params.get("channel_id"),
                    "initial_comment": params.get("initial_comment"),
                    "thread_ts": params.get("thread_ts"),
                }
            )
        return {"files": done}

    async def _users_info(self, params: Json) -> Json:
        uid = self._require(params, "user", "user_not_found")
        if uid not in self.users and uid[0] not in "UW":
            raise SlackError("user_not_found")
        user = {
            "id": uid,
            "team_id": TEAM_ID,
            "name": uid.lower(),
            "real_name": uid,
            "deleted": False,
            "is_bot": False,
            "is_admin": False,
            "is_owner": False,
            "is_primary_owner": False,
            "tz": "UTC",
            "profile": {"display_name": uid.lower(), "real_name": uid},
        }
        found = {**user, **self.users.get(uid, {})}
        if str(params.get("include_locale", "")).lower() not in ("1", "true"):
            found.pop("locale", None)  # Slack gives the locale only when asked
        else:
            found.setdefault("locale", "en-US")
        return {"user": found}

    # -- response_url ----------------------------------------------------------------------

    async def _response_url(self, request: web.Request) -> web.Response:
        try:
            body = await request.json()
        except ValueError:
            return web.Response(status=400, text="invalid_payload")
        if self.response_gate is not None:
            await self.response_gate.wait()
        self.responses.append((request.match_info["id"], body))
        self.response_peers.append(request.transport.get_extra_info("peername") if request.transport else None)
        return web.Response(text="ok")

    # -- Socket Mode -----------------------------------------------------------------------

    async def _apps_connections_open(self, params: Json) -> Json:
        ticket = secrets.token_hex(8)
        self._tickets.add(ticket)
        return {"url": f"ws://{self.url.removeprefix('http://')}/link/?ticket={ticket}"}

    async def _socket(self, request: web.Request) -> web.StreamResponse:
        if request.query.get("ticket") not in self._tickets:
            return web.Response(status=401, text="invalid ticket")
        ws = web.WebSocketResponse(autoping=True)
        await ws.prepare(request)
        self._sockets.add(ws)
        await ws.send_json(
            {
                "type": "hello",
                "num_connections": 1,
                "debug_info": {"host": "fake"},
                "connection_info": {"app_id": APP_ID},
            }
        )
        self._ws = ws
        self.socket_connections += 1
        self._connected.set()
        try:
            async for msg in ws:
                if msg.type != aiohttp.WSMsgType.TEXT:
                    continue
                frame = json.loads(msg.data)
                self.socket_frames.append(frame)
                future = self._acks.get(frame.get("envelope_id", ""))
                if future is not None and not future.done():
                    future.set_result(frame)
        finally:
            self._sockets.discard(ws)
            if self._ws is ws:
                self._ws = None
                self._connected.clear()
        return ws

    async def wait_socket_connected(self, timeout: float = 5) -> None:
        """Wait until an app holds an open Socket Mode connection (hello sent)."""
        await asyncio.wait_for(self._connected.wait(), timeout)

    async def socket_send(
        self,
        envelope_type: str,
        payload: Json,
        *,
        accepts_response_payload: bool | None = None,
        retry_attempt: int = 0,
        retry_reason: str = "",
    ) -> str:
        """Push an envelope to the connected app and return its envelope_id.

        `accepts_response_payload` defaults to what Slack sends: true for slash commands,
        view submissions and block suggestions.
        """
        await self.wait_socket_connected()
        assert self._ws is not None
        if accepts_response_payload is None:
            accepts_response_payload = envelope_type == "slash_commands" or payload.get("type") in (
                "view_submission",
                "block_suggestion",
            )
        envelope_id = f"env-{next(self._ids)}"
        self._acks[envelope_id] = asyncio.get_running_loop().create_future()
        envelope: Json = {
            "envelope_id": envelope_id,
            "type": envelope_type,
            "payload": payload,
            "accepts_response_payload": accepts_response_payload,
        }
        if envelope_type == "events_api":
            envelope.update(retry_attempt=retry_attempt, retry_reason=retry_reason)
        await self._ws.send_json(envelope)
        return envelope_id

    async def socket_ack(self, envelope_id: str, timeout: float = 5) -> Json:
        """Wait for the app's ack frame (`{"envelope_id": ..., "payload"?: ...}`)."""
        return await asyncio.wait_for(asyncio.shield(self._acks[envelope_id]), timeout)

    async def socket_disconnect(self) -> None:
        """Ask the app to reconnect, as Slack does before rotating a connection."""
        ws, self._ws = self._ws, None
        self._connected.clear()
        if ws is not None and not ws.closed:
            await ws.send_json(
                {
                    "type": "disconnect",
                    "reason": "refresh_requested",
                    "debug_info": {"host": "fake"},
                }
            )


# -- the "Slack side": payloads and signed requests ------------------------------------------


WORKSPACE_METHODS = frozenset({"auth.test"})  # handlers that are told the caller's workspace
SCOPES = "channels:read,chat:write,chat:write.public,commands,files:write,groups:read,im:write,users:read"


def _new_trigger_id() -> str:
    """A well-formed trigger_id the stand-in never issued (views.open will reject it)."""
    return f"{secrets.randbelow(10**10)}.1.{secrets.token_hex(8)}"


def sign(
    body: str | bytes, secret: str = SIGNING_SECRET, ts: int | str | None = None
) -> dict[str, str]:
    """Slack request-signing headers (v0 HMAC-SHA256 over `v0:{ts}:{body}`)."""
    ts = str(ts if ts is not None else int(time.time()))
    raw = body.encode() if isinstance(body, str) else body
    digest = hmac.new(secret.encode(), b"v0:" + ts.encode() + b":" + raw, hashlib.sha256)
    return {"X-Slack-Request-Timestamp": ts, "X-Slack-Signature": "v0=" + digest.hexdigest()}


def _signed_form(
    fields: Mapping[str, str], secret: str, ts: int | str | None
) -> tuple[str, dict[str, str]]:
    body = urlencode(fields)
    return body, {"Content-Type": FORM, **sign(body, secret, ts)}


def slash_payload(
    command: str,
    text: str = "",
    *,
    user_id: str = "U0001",
    user_name: str = "alice",
    team_id: str = TEAM_ID,
    channel_id: str = "C0001",
    channel_name: str = "general",
    trigger_id: str | None = None,
    response_url: str = "",
) -> dict[str, str]:
    """The fields of a slash command (form fields over HTTP, the payload in Socket Mode)."""
    return {
        "token": "verification-token",
        "team_id": team_id,
        "team_domain": "fake",
        "channel_id": channel_id,
        "channel_name": channel_name,
        "user_id": user_id,
        "user_name": user_name,
        "command": command,
        "text": text,
        "api_app_id": APP_ID,
        "is_enterprise_install": "false",
        "response_url": response_url,
        "trigger_id": trigger_id or _new_trigger_id(),
    }


def block_actions_payload(
    action_id: str,
    value: str,
    *,
    user_id: str = "U0001",
    user_name: str = "alice",
    team_id: str = TEAM_ID,
    channel_id: str = "C0001",
    message_ts: str = "1700000000.000100",
    trigger_id: str | None = None,
    response_url: str = "",
    block_id: str = "quiz",
) -> Json:
    """A button click on a message (`type: block_actions`)."""
    return {
        "type": "block_actions",
        "token": "verification-token",
        "user": {"id": user_id, "username": user_name, "name": user_name, "team_id": team_id},
        "api_app_id": APP_ID,
        "team": {"id": team_id, "domain": "fake"},
        "enterprise": None,
        "is_enterprise_install": False,
        "container": {"type": "message", "message_ts": message_ts, "channel_id": channel_id},
        "channel": {"id": channel_id, "name": "general"},
        "message": {"type": "message", "ts": message_ts, "text": ""},
        "trigger_id": trigger_id or _new_trigger_id(),
        "response_url": response_url,
        "state": {"values": {}},
        "actions": [
            {
                "action_id": action_id,
                "block_id": block_id,
                "type": "button",
                "value": value,
                "text": {"type": "plain_text", "text": value},
                "action_ts": f"{time.time():.6f}",
            }
        ],
    }


def view_submission_payload(
    callback_id: str,
    private_metadata: str = "",
    values: Mapping[str, Mapping[str, Any]] | None = None,
    *,
    user_id: str = "U0001",
    user_name: str = "alice",
    team_id: str = TEAM_ID,
    view_id: str = "V0001",
    trigger_id: str | None = None,
) -> Json:
    """A modal submission. `values` is `view.state.values`; a bare string for an action is
    shorthand for `{"type": "plain_text_input", "value": <str>}`."""
    state = {
        block: {
            action: {"type": "plain_text_input", "value": v} if isinstance(v, str) else dict(v)
            for action, v in actions.items()
        }
        for block, actions in (values or {}).items()
    }
    return {
        "type": "view_submission",
        "token": "verification-token",
        "team": {"id": team_id, "domain": "fake"},
        "user": {"id": user_id, "username": user_name, "name": user_name, "team_id": team_id},
        "api_app_id": APP_ID,
        "trigger_id": trigger_id or _new_trigger_id(),
        "view": {
            "id": view_id,
            "team_id": team_id,
            "type": "modal",
            "callback_id": callback_id,
            "private_metadata": private_metadata,
            "external_id": "",
            "title": {"type": "plain_text", "text": "Modal"},
            "blocks": [],
            "state": {"values": state},
            "hash": "1700000000.abcdef",
            "root_view_id": view_id,
            "previous_view_id": None,
            "app_id": APP_ID,
            "bot_id": BOT_ID,
            "clear_on_close": False,
            "notify_on_close": False,
        },
        "response_urls": [],
        "enterprise": None,
        "is_enterprise_install": False,
    }


def slash_command(
    command: str,
    text: str = "",
    *,
    secret: str = SIGNING_SECRET,
    ts: int | str | None = None,
    **fields: Any,
) -> tuple[str, dict[str, str]]:
    """A signed, form-encoded slash command; `fields` are `slash_payload` keywords."""
    return _signed_form(slash_payload(command, text, **fields), secret, ts)


def block_actions(
    action_id: str,
    value: str,
    *,
    secret: str = SIGNING_SECRET,
    ts: int | str | None = None,
    **fields: Any,
) -> tuple[str, dict[str, str]]:
    """A signed button click (`payload=<json>`); `fields` are `block_actions_payload` keywords."""
    payload = block_actions_payload(action_id, value, **fields)
    return _signed_form({"payload": json.dumps(payload)}, secret, ts)


def view_submission(
    callback_id: str,
    private_metadata: str = "",
    values: Mapping[str, Mapping[str, Any]] | None = None,
    *,
    secret: str = SIGNING_SECRET,
    ts: int | str | None = None,
    **fields: Any,
) -> tuple[str, dict[str, str]]:
    """A signed modal submission (`payload=<json>`); see `view_submission_payload`."""
    payload = view_submission_payload(callback_id, private_metadata, values, **fields)
    return _signed_form({"payload": json.dumps(payload)}, secret, ts)


async def post_signed(
    session_or_url: aiohttp.ClientSession | str,
    body: str | bytes,
    headers: Mapping[str, str],
    *,
    url: str = "",
) -> tuple[int, str]:
    """POST a built request; returns (status, text).

    Pass the app's URL, or a `ClientSession` plus `url=` (relative to its base_url if it has one).
    """
    if isinstance(session_or_url, str):
        async with aiohttp.ClientSession() as session:
            return await post_signed(session, body, headers, url=session_or_url)
    async with session_or_url.post(url, data=body, headers=dict(headers)) as resp:
        return resp.status, await resp.text()
