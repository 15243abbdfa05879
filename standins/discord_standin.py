"""A Discord stand-in (REST, interaction webhooks and gateway) on 127.0.0.1 for adapter tests.

The real discord.py talks to it over HTTP and a websocket, so adapter tests exercise the library
as it runs in production. The stand-in enforces what Discord enforces (see the platform notes):
bot-token auth, JSON bodies with ``Content-Type: application/json``, the 3-second window for the
first interaction callback (404/10062), single acknowledgement (400/40060), followups only after
an acknowledgement, message limits, and rate limits on demand (429 with ``Via`` + ``retry_after``).

Sharded bots (discord.py's AutoShardedClient, one or many processes) open one gateway connection per
shard: IDENTIFY's ``shard: [id, count]`` decides which servers that connection gets (READY and
GUILD_CREATE), Discord's ``(guild_id >> 22) % count``, and each server's events go to its shard's
connection, direct messages to shard 0's. ``add_guild`` adds servers; ``identifies`` records each
IDENTIFY with its shard and time.

Point discord.py at it with the two class attributes production code also sets::

    discord.http.Route.BASE = fake.api_base
    discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY = yarl.URL(fake.gateway_url)
"""

from __future__ import annotations

import asyncio
import itertools
import json
import re
import time
from collections.abc import AsyncIterator, Callable, Iterable, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal

import discord
from aiohttp import WSMsgType, web

from standins.loopback import LoopbackServer

DISCORD_EPOCH_MS = 1_420_070_400_000
JOINED_AT = "2024-01-01T00:00:00+00:00"

# Permission bits used to build realistic role and member payloads.
VIEW_CHANNEL, SEND_MESSAGES, EMBED_LINKS, ATTACH_FILES = 1 << 10, 1 << 11, 1 << 14, 1 << 15
READ_HISTORY, USE_APP_COMMANDS, MANAGE_MESSAGES, ADD_REACTIONS = 1 << 16, 1 << 31, 1 << 13, 1 << 6
EVERYONE_PERMISSIONS = (
    VIEW_CHANNEL | SEND_MESSAGES | EMBED_LINKS | ATTACH_FILES | READ_HISTORY | USE_APP_COMMANDS | ADD_REACTIONS
)
BOT_PERMISSIONS = "2248473465835073"

FLAG_EPHEMERAL, FLAG_LOADING = 64, 128

# Which callback types Discord accepts per interaction type (1 ping, 2 command, 3 component,
# 4 autocomplete, 5 modal submit).
ALLOWED_CALLBACKS: dict[int, set[int]] = {
    1: {1},
    2: {4, 5, 9},
    3: {4, 5, 6, 7, 9},
    4: {8},
    5: {4, 5, 6, 7},
}

Reply = tuple[int, Any]  # (HTTP status, JSON body or None for 204)


@dataclass
class Call:
    """One REST or webhook request as the stand-in received it, and how it answered."""

    method: str
    path: str  # relative to the API base, e.g. "/channels/3333/messages"
    json: Any
    files: dict[str, bytes]
    headers: dict[str, str]
    query: dict[str, str] = field(default_factory=dict)
    status: int | None = None  # filled in once answered
    response: Any = None


@dataclass
class FakeRole:
    """A guild role; the @everyone role has the guild's id."""

    id: str
    name: str
    permissions: int = 0
    position: int = 0

    def payload(self) -> dict[str, Any]:
        """The role object as GUILD_CREATE carries it."""
        return {
            "id": self.id,
            "name": self.name,
            "permissions": str(self.permissions),
            "position": self.position,
            "color": 0,
            "colors": {"primary_color": 0},
            "hoist": False,
            "managed": False,
            "mentionable": False,
            "icon": None,
            "unicode_emoji": None,
            "flags": 0,
        }


@dataclass
class FakeMember:
    """A guild member: user id, username and role ids (without @everyone)."""

    id: str
    name: str
    roles: list[str] = field(default_factory=list)
    bot: bool = False

    def user(self) -> dict[str, Any]:
        """The user object."""
        return {
            "id": self.id,
            "username": self.name,
            "discriminator": "0",
            "global_name": self.name,
            "avatar": None,
            "bot": self.bot,
            "public_flags": 0,
        }


@dataclass
class CallbackResult:
    """The bot's first callback for an interaction and the stand-in's answer to it."""

    body: dict[str, Any]
    status: int
    response: Any
    files: dict[str, bytes]

    @property
    def type(self) -> int:
        """The callback type (4 message, 5 deferred, 6 deferred update, 7 update, 8, 9 modal)."""
        return self.body["type"]

    @property
    def data(self) -> dict[str, Any]:
        """The callback's ``data`` (empty for bare defers)."""
        return self.body.get("data") or {}

    @property
    def message(self) -> dict[str, Any] | None:
        """The message the stand-in created or updated for this callback, if any."""
        if self.status != 200:
            return None
        return (self.response.get("resource") or {}).get("message")


@dataclass
class _Injection:
    method: str
    pattern: re.Pattern[str]
    status: int
    body: Any
    headers: dict[str, str]
    times: int


@dataclass
class _Interaction:
    id: str
    token: str
    type: int
    payload: dict[str, Any]
    dispatched_at: float | None = None
    acked_type: int | None = None
    original_id: str | None = None
    message_ids: set[str] = field(default_factory=set)


def _now_iso() -> str:
    return datetime.now(UTC).isoformat()


def jresp(body: Any, status: int = 200, headers: Mapping[str, str] | None = None) -> web.Response:
    """A JSON response whose Content-Type is exactly ``application/json`` (discord.py compares it)."""
    if body is None:
        return web.Response(status=status, headers=dict(headers or {}))
    return web.Response(
        status=status,
        body=json.dumps(body).encode(),
        headers={**(headers or {}), "Content-Type": "application/json"},
    )


def error(status: int, code: int, message: str, **extra: Any) -> Reply:
    """A Discord error body."""
    return status, {"message": message, "code": code, **extra}


def form_error(field_name: str, code: str, message: str) -> Reply:
    """Discord's 400 'Invalid Form Body' with one field error."""
    errors = {field_name: {"_errors": [{"code": code, "message": message}]}}
    return error(400, 50035, "Invalid Form Body", errors=errors)


def walk_components(components: Iterable[Mapping[str, Any]]) -> Iterable[Mapping[str, Any]]:
    """Every component in a (possibly nested) component tree: rows, labels, containers."""
    for comp in components:
        yield comp
        yield from walk_components(comp.get("components") or [])
        if isinstance(comp.get("component"), Mapping):
            yield from walk_components([comp["component"]])
        if isinstance(comp.get("accessory"), Mapping):
            yield from walk_components([comp["accessory"]])


class DiscordStandIn(LoopbackServer):
    """An aiohttp server on 127.0.0.1 that plays Discord for the real discord.py.

    Use ``async with DiscordStandIn() as fake:`` or ``await fake.start()`` / ``await fake.close()``.
    """

    def __init__(self, *, token: str = "Bot-token.standin.0123456789") -> None:
        super().__init__()
        self.token = token
        self.app_id = "1111"
        self.bot_user_id = self.app_id  # a bot user's id equals its application's id
        self.bot_name = "studybot"
        self.guild_id = "2222"
        self.channel_id = "3333"
        self.instructor_role_id = "7777"
        self.roles: list[FakeRole] = [
            FakeRole(self.guild_id, "@everyone", EVERYONE_PERMISSIONS, 0),
            FakeRole(self.instructor_role_id, "Instructor", EVERYONE_PERMISSIONS | MANAGE_MESSAGES, 1),
        ]
        self.members: list[FakeMember] = [
            FakeMember("4444", "alice"),
            FakeMember("5555", "bob"),
            FakeMember("6666", "carol", [self.instructor_role_id]),
        ]
        self.default_user_id = "4444"
        self.initial_response_deadline_s = 3.0
        self.followup_window_s = 15 * 60.0
        self.dm_closed: set[str] = set()  # user ids whose DMs refuse the bot (403/50007)
        self.garbage_before_ready = 0  # the next N connections get a frame that is not JSON instead of READY

        self.calls: list[Call] = []
        self.messages: dict[str, dict[str, Any]] = {}  # id -> current message object
        self.attachments: dict[str, bytes] = {}
        self.commands: dict[str | None, list[dict[str, Any]]] = {}  # None = global, else guild id
        self.gateway_frames: list[dict[str, Any]] = []  # every frame the bot sent
        self.identified = asyncio.Event()
        self.resumed = asyncio.Event()
        self.session_id: str | None = None

        self._channels: dict[str, dict[str, Any]] = {}
        self._dm_by_user: dict[str, str] = {}
        self._interactions: dict[str, _Interaction] = {}
        self._by_token: dict[str, _Interaction] = {}
        self._modals: dict[str, dict[str, Any]] = {}  # custom_id -> modal data the bot sent
        self._injections: list[_Injection] = []
        self._last_id = 0
        self._counter = itertools.count(1)
        self._seq = 0
        self._ws: web.WebSocketResponse | None = None  # shard 0's connection (the only one when not sharded)
        self._shard_ws: dict[int, web.WebSocketResponse] = {}
        self.shard_count = 1
        self.guild_ids: list[str] = [self.guild_id]
        self._guild_channels: dict[str, str] = {self.guild_id: self.channel_id}
        self.identifies: list[tuple[int, int, float]] = []  # (shard id, shard count, time.monotonic())
        self._send_lock = asyncio.Lock()
        self._changed = asyncio.Condition()
        self.port = 0
        self.add_text_channel("general", self.channel_id)

    # ------------------------------------------------------------------ lifecycle

    async def start(self, port: int = 0) -> DiscordStandIn:
        """Start listening on 127.0.0.1 at `port` (0: a free one)."""
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_get("/gateway", self._gateway)
        app.router.add_get("/attachments/{channel}/{aid}/{filename}", self._attachment)
        app.router.add_route("*", "/api/v10/{tail:.*}", self._rest)
        self.port = await self.serve(app, port)
        return self


    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT``."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def api_base(self) -> str:
        """The versioned REST base, for ``discord.http.Route.BASE``."""
        return f"{self.url}/api/v10"

    @property
    def gateway_url(self) -> str:
        """The gateway URL, for ``DiscordWebSocket.DEFAULT_GATEWAY`` (as a ``yarl.URL``)."""
        return f"ws://127.0.0.1:{self.port}/gateway"

    # ------------------------------------------------------------------ ids and objects

    def snowflake(self) -> str:
        """A fresh snowflake (string), unique and increasing."""
        now = (int(time.time() * 1000) - DISCORD_EPOCH_MS) << 22
        self._last_id = max(self._last_id + 1, now)
        return str(self._last_id)

    def add_text_channel(self, name: str, channel_id: str | None = None) -> str:
        """Add a guild text channel (before the bot connects) and return its id."""
        cid = channel_id or self.snowflake()
        self._channels[cid] = {
            "id": cid,
            "type": 0,
            "name": name,
            "guild_id": self.guild_id,
            "position": len(self._channels),
            "permission_overwrites": [],
            "topic": None,
            "nsfw": False,
            "last_message_id": None,
            "rate_limit_per_user": 0,
            "parent_id": None,
            "flags": 0,
        }
        return cid

    def add_guild(self, guild_id: str | None = None) -> str:
        """Another server the bot is in (before it connects), with a text channel of its own."""
        gid = guild_id or self.snowflake()
        cid = self.add_text_channel(f"general-{gid[-4:]}")
        self._channels[cid]["guild_id"] = gid
        self.guild_ids.append(gid)
        self._guild_channels[gid] = cid
        return gid

    def channel_of(self, guild_id: str) -> str:
        return self._guild_channels[guild_id]

    @staticmethod
    def shard_of(guild_id: str | int, shard_count: int) -> int:
        """The shard Discord sends a server's events to."""
        return (int(guild_id) >> 22) % shard_count

    def member(self, user_id: str) -> FakeMember | None:
        """The member with this user id, if any."""
        return next((m for m in self.members if m.id == user_id), None)

    def bot_user(self) -> dict[str, Any]:
        """The bot's user object."""
        user = FakeMember(self.bot_user_id, self.bot_name, bot=True).user()
        return user | {"verified": True, "flags": 0}

    def user(self, user_id: str) -> dict[str, Any]:
        """A user object (members by name, others as ``user<id>``)."""
        if user_id == self.bot_user_id:
            return self.bot_user()
        m = self.member(user_id)
        return (m or FakeMember(user_id, f"user{user_id}")).user()

    def member_payload(self, user_id: str, roles: Sequence[str] | None = None) -> dict[str, Any]:
        """A guild member object (roles default to the member's configured roles)."""
        m = self.member(user_id)
        role_ids = list(roles) if roles is not None else (m.roles if m else [])
        return {
            "user": self.user(user_id),
            "roles": role_ids,
            "joined_at": JOINED_AT,
            "flags": 0,
            "nick": None,
            "avatar": None,
            "deaf": False,
            "mute": False,
            "pending": False,
            "premium_since": None,
            "communication_disabled_until": None,
        }

    def permissions_for(self, role_ids: Iterable[str]) -> int:
        """The guild-level permissions of @everyone plus these roles."""
        wanted = {self.guild_id, *role_ids}
        value = 0
        for role in self.roles:
            if role.id in wanted:
                value |= role.permissions
        return value

    def guild_payload(self, guild_id: str | None = None) -> dict[str, Any]:
        """The GUILD_CREATE payload built from the current roles, channels and members."""
        gid = guild_id or self.guild_id
        members = [self.member_payload(m.id) for m in self.members]
        members.append(self.member_payload(self.bot_user_id, []))
        others = set(self.guild_ids) - {gid}
        roles = [r.payload() | ({"id": gid} if r.id == self.guild_id else {}) for r in self.roles]
        return {
            "id": gid,
            "name": "Study Guild",
            "icon": None,
            "splash": None,
            "discovery_splash": None,
            "owner_id": self.members[0].id if self.members else "1",
            "afk_channel_id": None,
            "afk_timeout": 300,
            "verification_level": 0,
            "default_message_notifications": 0,
            "explicit_content_filter": 0,
            "features": [],
            "mfa_level": 0,
            "system_channel_id": None,
            "system_channel_flags": 0,
            "rules_channel_id": None,
            "vanity_url_code": None,
            "description": None,
            "banner": None,
            "premium_tier": 0,
            "premium_subscription_count": 0,
            "preferred_locale": "en-US",
            "public_updates_channel_id": None,
            "nsfw_level": 0,
            "premium_progress_bar_enabled": False,
            "roles": roles,
            "emojis": [],
            "stickers": [],
            "joined_at": JOINED_AT,
            "large": False,
            "unavailable": False,
            "member_count": len(members),
            "voice_states": [],
            "members": members,
            "presences": [],
            "threads": [],
            "stage_instances": [],
            "guild_scheduled_events": [],
            "soundboard_sounds": [],
            "lazy": True,
            "channels": [c for c in self._channels.values() if c["type"] != 1 and c.get("guild_id") not in others],
        }

    def dm_channel(self, user_id: str) -> dict[str, Any]:
        """The DM channel with a user (created on first use, like POST /users/@me/channels)."""
        cid = self._dm_by_user.get(user_id)
        if cid is None:
            cid = self._dm_by_user[user_id] = self.snowflake()
            self._channels[cid] = {
                "id": cid,
                "type": 1,
                "last_message_id": None,
                "flags": 0,
                "recipients": [self.user(user_id)],
            }
        return self._channels[cid]

    def channel_messages(self, channel_id: str) -> list[dict[str, Any]]:
        """Current messages in a channel, oldest first."""
        return [m for m in self.messages.values() if m["channel_id"] == channel_id]

    # ------------------------------------------------------------------ recording and waiting

    def calls_matching(self, method: str, path_regex: str) -> list[Call]:
        """Recorded calls with this method whose path fully matches the regex."""
        pattern = re.compile(path_regex)
        return [c for c in self.calls if c.method == method.upper() and pattern.fullmatch(c.path)]

    def callbacks(self, interaction_id: str | None = None, *, include_rejected: bool = False) -> list[dict[str, Any]]:
        """Interaction callback bodies in order (accepted ones unless ``include_rejected``)."""
        pattern = re.compile(r"/interactions/(\d+)/[^/]+/callback")
        out = []
        for c in self.calls:
            m = pattern.fullmatch(c.path)
            if c.method != "POST" or not m or (interaction_id and m.group(1) != interaction_id):
                continue
            if include_rejected or c.status == 200:
                out.append(c.json)
        return out

    async def wait_for(self, predicate: Callable[[], Any], timeout: float = 2.0) -> Any:
        """Wait until ``predicate()`` is truthy (re-checked after every answered call)."""
        async with self._changed:
            return await asyncio.wait_for(self._changed.wait_for(predicate), timeout)

    async def wait_for_call(self, method: str, path_regex: str, *, count: int = 1, timeout: float = 2.0) -> Call:
        """Wait until ``count`` matching calls were answered and return the last of them."""

        def answered() -> list[Call]:
            return [c for c in self.calls_matching(method, path_regex) if c.status is not None]

        await self.wait_for(lambda: len(answered()) >= count, timeout)
        return answered()[count - 1]

    async def _notify(self) -> None:
        async with self._changed:
            self._changed.notify_all()

    # ------------------------------------------------------------------ fault injection

    def inject(
        self,
        method: str,
        path_regex: str,
        status: int,
        body: Any = None,
        headers: Mapping[str, str] | None = None,
        times: int = 1,
    ) -> None:
        """Answer the next ``times`` matching requests with this status/body/headers."""
        self._injections.append(
            _Injection(method.upper(), re.compile(path_regex), status, body, dict(headers or {}), times)
        )

    def rate_limit(
        self,
        method: str,
        path_regex: str,
        retry_after: float = 0.3,
        *,
        is_global: bool = False,
        times: int = 1,
    ) -> None:
        """Inject Discord's 429 (``Via`` header, JSON ``retry_after``) that discord.py retries."""
        body = {"message": "You are being rate limited.", "retry_after": retry_after, "global": is_global}
        headers = {
            "Via": "1.1 google",
            "Retry-After": str(max(1, round(retry_after))),
            "X-RateLimit-Bucket": "standin-bucket",
            "X-RateLimit-Limit": "5",
            "X-RateLimit-Remaining": "0",
            "X-RateLimit-Reset-After": str(retry_after),
        }
        if is_global:
            headers["X-RateLimit-Global"] = "true"
        self.inject(method, path_regex, 429, body, headers, times)

    def _take_injection(self, method: str, path: str) -> _Injection | None:
        for inj in self._injections:
            if inj.times > 0 and inj.method == method and inj.pattern.fullmatch(path):
                inj.times -= 1
                return inj
        return None

    # ------------------------------------------------------------------ HTTP plumbing

    async def _attachment(self, request: web.Request) -> web.StreamResponse:
        data = self.attachments.get(request.match_info["aid"])
        if data is None:
            raise web.HTTPNotFound()
        return web.Response(body=data, content_type="application/octet-stream")

    async def _rest(self, request: web.Request) -> web.StreamResponse:
        path = "/" + request.match_info["tail"]
        body, files = await _read_body(request)
        call = Call(
            request.method, path, body, {n: b for n, b in files.values()}, dict(request.headers), dict(request.query)
        )
        self.calls.append(call)
        headers: dict[str, str] = {}
        inj = self._take_injection(request.method, path)
        if inj is not None:
            status, payload, headers = inj.status, inj.body, inj.headers
        else:
            status, payload = await self._route(request, call, files)
        call.status, call.response = status, payload
        await self._notify()
        return jresp(payload, status, headers)

    async def _route(self, request: web.Request, call: Call, files: dict[int, tuple[str, bytes]]) -> Reply:
        for method, regex, needs_auth, handler in self._routes():
            m = re.fullmatch(regex, call.path)
            if m is None or method != call.method:
                continue
            if needs_auth and request.headers.get("Authorization") != f"Bot {self.token}":
                return error(401, 0, "401: Unauthorized")
            return handler(call, files, *m.groups())
        if any(re.fullmatch(r, call.path) for _, r, _, _ in self._routes()):
            return error(405, 0, "405: Method Not Allowed")
        return error(404, 0, "404: Not Found")

    def _routes(self) -> list[tuple[str, str, bool, Callable[..., Reply]]]:
        app, snow, tok = r"(\d+)", r"(\d+)", r"([^/]+)"
        return [
            ("GET", r"/users/@me", True, lambda *_: (200, self.bot_user())),
            ("GET", r"/gateway/bot", True, lambda *_: (200, self._gateway_bot())),
            ("GET", rf"/users/{snow}", True, self._get_user),
            ("GET", r"/oauth2/applications/@me", True, lambda *_: (200, self._application())),
            ("GET", rf"/applications/{app}/commands", True, self._get_commands),
            ("PUT", rf"/applications/{app}/commands", True, self._put_commands),
            ("GET", rf"/applications/{app}/guilds/{snow}/commands", True, self._get_commands),
            ("PUT", rf"/applications/{app}/guilds/{snow}/commands", True, self._put_commands),
            ("POST", r"/users/@me/channels", True, self._create_dm),
            ("GET", rf"/channels/{snow}", True, self._get_channel),
            ("POST", rf"/channels/{snow}/messages", True, self._post_message),
            ("GET", rf"/channels/{snow}/messages/{snow}", True, self._get_message),
            ("PATCH", rf"/channels/{snow}/messages/{snow}", True, self._edit_message),
            ("DELETE", rf"/channels/{snow}/messages/{snow}", True, self._delete_message),
            ("GET", rf"/guilds/{snow}/members/{snow}", True, self._get_member),
            ("GET", rf"/guilds/{snow}/roles", True, self._get_roles),
            ("POST", rf"/interactions/{snow}/{tok}/callback", False, self._callback),
            ("POST", rf"/webhooks/{app}/{tok}", False, self._followup),
            ("GET", rf"/webhooks/{app}/{tok}/messages/(@original|\d+)", False, self._wh_get),
            ("PATCH", rf"/webhooks/{app}/{tok}/messages/(@original|\d+)", False, self._wh_edit),
            ("DELETE", rf"/webhooks/{app}/{tok}/messages/(@original|\d+)", False, self._wh_delete),
        ]

    # ------------------------------------------------------------------ REST handlers

    def _application(self) -> dict[str, Any]:
        # No interactions_endpoint_url: discord.py warns that the gateway then gets no interactions.
        return {
            "id": self.app_id,
            "name": self.bot_name,
            "icon": None,
            "description": "",
            "summary": "",
            "type": None,
            "bot_public": True,
            "bot_require_code_grant": False,
            "verify_key": "0" * 64,
            "flags": 0,
            "owner": self.user(self.members[0].id),
            "team": None,
            "bot": self.bot_user(),
            "tags": [],
            "redirect_uris": [],
            "approximate_guild_count": 1,
            "rpc_origins": [],
        }

    def _gateway_bot(self) -> dict[str, Any]:
        return {"url": self.gateway_url, "shards": max(1, len(self.guild_ids) // 1000),
                "session_start_limit": {"total": 1000, "remaining": 999, "reset_after": 0, "max_concurrency": 1}}

    def _get_user(self, call: Call, files: Any, user_id: str) -> Reply:
        if user_id != self.bot_user_id and self.member(user_id) is None:
            return error(404, 10013, "Unknown User")
        return 200, self.user(user_id)

    def _get_commands(self, call: Call, files: Any, app_id: str, guild_id: str | None = None) -> Reply:
        if app_id != self.app_id:
            return error(403, 50001, "Missing Access")
        return 200, self.commands.get(guild_id, [])

    def _put_commands(self, call: Call, files: Any, app_id: str, guild_id: str | None = None) -> Reply:
        if app_id != self.app_id or (guild_id is not None and guild_id != self.guild_id):
            return error(403, 50001, "Missing Access")
        if not isinstance(call.json, list):
            return form_error("_", "LIST_TYPE_CONVERT", "Must be a list.")
        old = {(c["name"], c.get("type", 1)): c["id"] for c in self.commands.get(guild_id, [])}
        echoed, seen = [], set()
        for i, cmd in enumerate(call.json):
            key = (cmd.get("name"), cmd.get("type", 1))
            if key in seen:
                return form_error(
                    f"{i}.name", "APPLICATION_COMMANDS_DUPLICATE_NAME", "Application command names must be unique"
                )
            seen.add(key)
            name, desc = cmd.get("name") or "", cmd.get("description") or ""
            if not 1 <= len(name) <= 32 or (key[1] == 1 and not 1 <= len(desc) <= 100):
                return form_error(f"{i}.name", "BASE_TYPE_BAD_LENGTH", "Invalid name/description")
            echoed.append(
                {
                    "type": 1,
                    "description": "",
                    "options": [],
                    "default_member_permissions": None,
                    "nsfw": False,
                    "contexts": None,
                    "integration_types": [0],
                    **cmd,
                    "id": old.get(key) or self.snowflake(),
                    "application_id": self.app_id,
                    "version": self.snowflake(),
                    **({"guild_id": guild_id} if guild_id else {}),
                }
            )
        self.commands[guild_id] = echoed
        return 200, echoed

    def _create_dm(self, call: Call, files: Any) -> Reply:
        recipient = str((call.json or {}).get("recipient_id", ""))
        if self.member(recipient) is None:
            return error(400, 50033, "Invalid Recipient(s)")
        return 200, self.dm_channel(recipient)

    def _get_channel(self, call: Call, files: Any, channel_id: str) -> Reply:
        if channel_id not in self._channels:
            return error(404, 10003, "Unknown Channel")
        return 200, self._channels[channel_id]

    def _post_message(self, call: Call, files: dict[int, tuple[str, bytes]], channel_id: str) -> Reply:
        channel = self._channels.get(channel_id)
        if channel is None:
            return error(404, 10003, "Unknown Channel")
        if channel["type"] == 1 and channel["recipients"][0]["id"] in self.dm_closed:
            return error(403, 50007, "Cannot send messages to this user")
        body = dict(call.json or {})
        body["flags"] = body.get("flags", 0) & ~(FLAG_EPHEMERAL | FLAG_LOADING)
        return self._create_message(channel_id, body, files)

    def _channel_message(self, channel_id: str, message_id: str) -> dict[str, Any] | None:
        msg = self.messages.get(message_id)
        return msg if msg is not None and msg["channel_id"] == channel_id else None

    def _get_message(self, call: Call, files: Any, channel_id: str, message_id: str) -> Reply:
        msg = self._channel_message(channel_id, message_id)
        return (200, msg) if msg else error(404, 10008, "Unknown Message")

    def _edit_message(self, call: Call, files: dict[int, tuple[str, bytes]], channel_id: str, message_id: str) -> Reply:
        msg = self._channel_message(channel_id, message_id)
        if msg is None:
            return error(404, 10008, "Unknown Message")
        if msg["author"]["id"] != self.bot_user_id:
            return error(403, 50005, "Cannot edit a message authored by another user")
        return self._apply_edit(msg, dict(call.json or {}), files)

    def _delete_message(self, call: Call, files: Any, channel_id: str, message_id: str) -> Reply:
        if self._channel_message(channel_id, message_id) is None:
            return error(404, 10008, "Unknown Message")
        del self.messages[message_id]
        return 204, None

    def _get_member(self, call: Call, files: Any, guild_id: str, user_id: str) -> Reply:
        if guild_id != self.guild_id:
            return error(404, 10004, "Unknown Guild")
        if self.member(user_id) is None and user_id != self.bot_user_id:
            return error(404, 10007, "Unknown Member")
        return 200, self.member_payload(user_id)

    def _get_roles(self, call: Call, files: Any, guild_id: str) -> Reply:
        if guild_id != self.guild_id:
            return error(404, 10004, "Unknown Guild")
        return 200, [r.payload() for r in self.roles]

    # ------------------------------------------------------------------ messages

    def _validate(self, body: Mapping[str, Any], files: Mapping[int, Any], *, creating: bool) -> Reply | None:
        content = body.get("content")
        if content is not None and len(str(content)) > 2000:
            return form_error("content", "BASE_TYPE_MAX_LENGTH", "Must be 2000 or fewer in length.")
        if len(body.get("embeds") or []) > 10:
            return form_error("embeds", "BASE_TYPE_MAX_LENGTH", "Must be 10 or fewer in length.")
        for comp in walk_components(body.get("components") or []):
            if len(str(comp.get("custom_id", ""))) > 100:
                return form_error("components", "BASE_TYPE_MAX_LENGTH", "custom_id must be 100 or fewer in length.")
        if creating and not (
            content
            or body.get("embeds")
            or body.get("components")
            or files
            or body.get("poll")
            or body.get("sticker_ids")
        ):
            return error(400, 50006, "Cannot send an empty message")
        return None

    def _attachments(
        self,
        channel_id: str,
        body: Mapping[str, Any],
        files: Mapping[int, tuple[str, bytes]],
        existing: Sequence[dict[str, Any]],
    ) -> list[dict[str, Any]]:
        by_id = {a["id"]: a for a in existing}
        spec = body.get("attachments")
        if spec is None:
            spec = [*existing, *({"id": i} for i in files)]
        out = []
        for item in spec:
            key = str(item.get("id"))
            if key in by_id:
                out.append(by_id[key])
                continue
            if not key.isdigit() or int(key) not in files:
                continue
            filename, data = files[int(key)]
            aid = self.snowflake()
            self.attachments[aid] = data
            url = f"{self.url}/attachments/{channel_id}/{aid}/{filename}"
            out.append(
                {
                    "id": aid,
                    "filename": filename,
                    "size": len(data),
                    "url": url,
                    "proxy_url": url,
                    "content_type": "application/octet-stream",
                    **({"description": item["description"]} if "description" in item else {}),
                }
            )
        return out

    def _create_message(
        self,
        channel_id: str,
        body: Mapping[str, Any],
        files: Mapping[int, tuple[str, bytes]],
        *,
        interaction: _Interaction | None = None,
        extra_flags: int = 0,
        validate: bool = True,
    ) -> Reply:
        if validate and (err := self._validate(body, files, creating=True)):
            return err
        mid = self.snowflake()
        msg: dict[str, Any] = {
            "id": mid,
            "channel_id": channel_id,
            "type": 0,
            "content": body.get("content") or "",
            "author": self.bot_user(),
            "attachments": self._attachments(channel_id, body, files, []),
            "embeds": body.get("embeds") or [],
            "mentions": [],
            "mention_roles": [],
            "mention_everyone": False,
            "pinned": False,
            "tts": bool(body.get("tts")),
            "timestamp": _now_iso(),
            "edited_timestamp": None,
            "flags": (body.get("flags") or 0) | extra_flags,
            "components": body.get("components") or [],
        }
        if self._channels.get(channel_id, {}).get("type") == 0:
            msg["guild_id"] = self.guild_id
        if body.get("message_reference"):
            msg["type"], msg["message_reference"] = 19, body["message_reference"]
        if interaction is not None:
            p = interaction.payload
            user = (p.get("member") or {}).get("user") or p.get("user")
            msg["type"] = 20 if interaction.type == 2 else msg["type"]
            msg["webhook_id"] = msg["application_id"] = self.app_id
            msg["interaction_metadata"] = {
                "id": interaction.id,
                "type": interaction.type,
                "user": user,
                "authorizing_integration_owners": p.get("authorizing_integration_owners", {}),
            }
            interaction.message_ids.add(mid)
        self.messages[mid] = msg
        if channel_id in self._channels:
            self._channels[channel_id]["last_message_id"] = mid
        return 200, msg

    def _apply_edit(
        self, msg: dict[str, Any], body: Mapping[str, Any], files: Mapping[int, tuple[str, bytes]]
    ) -> Reply:
        if err := self._validate(body, files, creating=False):
            return err
        for key in ("content", "embeds", "components"):
            if key in body:
                msg[key] = body[key] if body[key] is not None else ("" if key == "content" else [])
        if "attachments" in body or files:
            msg["attachments"] = self._attachments(msg["channel_id"], body, files, msg["attachments"])
        msg["flags"] &= ~FLAG_LOADING
        msg["edited_timestamp"] = _now_iso()
        return 200, msg

    # ------------------------------------------------------------------ interactions

    def _callback(self, call: Call, files: dict[int, tuple[str, bytes]], iid: str, token: str) -> Reply:
        it = self._interactions.get(iid)
        if it is None or it.token != token:
            return error(404, 10062, "Unknown interaction")
        if it.acked_type is not None:
            return error(400, 40060, "Interaction has already been acknowledged.")
        if it.dispatched_at is not None and (time.monotonic() - it.dispatched_at > self.initial_response_deadline_s):
            return error(404, 10062, "Unknown interaction")
        body = call.json if isinstance(call.json, dict) else {}
        ctype, data = body.get("type"), body.get("data") or {}
        if ctype not in ALLOWED_CALLBACKS.get(it.type, set()):
            return form_error(
                "type",
                "INTERACTION_RESPONSE_TYPE_INVALID",
                f"Invalid response type {ctype} for interaction type {it.type}",
            )
        msg: dict[str, Any] | None = None
        channel_id = self._interaction_channel(it.payload)
        if ctype == 4:
            status, msg = self._create_message(
                channel_id, data, files, interaction=it, extra_flags=data.get("flags", 0) & FLAG_EPHEMERAL
            )
            if status != 200:
                return status, msg
        elif ctype == 5:
            _, msg = self._create_message(
                channel_id,
                {"content": ""},
                {},
                interaction=it,
                extra_flags=FLAG_LOADING | (data.get("flags", 0) & FLAG_EPHEMERAL),
                validate=False,
            )
        elif ctype in (6, 7) and "message" in it.payload:
            source = it.payload["message"]
            msg = self.messages.setdefault(source["id"], json.loads(json.dumps(source)))
            if ctype == 7:
                status, msg = self._apply_edit(msg, data, files)
                if status != 200:
                    return status, msg
        elif ctype == 9:
            if not data.get("custom_id") or not data.get("title") or not data.get("components"):
                return form_error("data", "BASE_TYPE_REQUIRED", "A modal needs custom_id, title and components.")
            self._modals[data["custom_id"]] = data
        it.acked_type = ctype
        reply_interaction: dict[str, Any] = {"id": iid, "type": it.type}
        resource: dict[str, Any] = {"type": ctype}
        if msg is not None:
            it.original_id = msg["id"]
            reply_interaction.update(
                response_message_id=msg["id"],
                response_message_loading=ctype == 5,
                response_message_ephemeral=bool(msg["flags"] & FLAG_EPHEMERAL),
            )
            resource["message"] = msg
        return 200, {"interaction": reply_interaction, "resource": resource}

    def _webhook_interaction(self, app_id: str, token: str) -> _Interaction | Reply:
        it = self._by_token.get(token)
        if app_id != self.app_id or it is None or it.acked_type is None:
            return error(404, 10015, "Unknown Webhook")
        if it.dispatched_at is not None and (time.monotonic() - it.dispatched_at > self.followup_window_s):
            return error(401, 50027, "Invalid Webhook Token")
        return it

    def _webhook_message(self, app_id: str, token: str, mid: str) -> tuple[_Interaction, dict[str, Any]] | Reply:
        it = self._webhook_interaction(app_id, token)
        if isinstance(it, tuple):
            return it
        message_id = it.original_id if mid == "@original" else mid
        if (
            message_id is None
            or message_id not in self.messages
            or (mid != "@original" and message_id not in it.message_ids)
        ):
            return error(404, 10008, "Unknown Message")
        return it, self.messages[message_id]

    def _followup(self, call: Call, files: dict[int, tuple[str, bytes]], app_id: str, token: str) -> Reply:
        it = self._webhook_interaction(app_id, token)
        if isinstance(it, tuple):
            return it
        original = self.messages.get(it.original_id or "")
        if it.acked_type == 5 and original is not None and original["flags"] & FLAG_LOADING:
            # The first followup after a "thinking" defer replaces the loading message; its
            # ephemerality was fixed by the defer.
            body = {k: v for k, v in (call.json or {}).items() if k != "flags"}
            if err := self._validate(body, files, creating=True):
                return err
            status, msg = self._apply_edit(original, body, files)
        else:
            channel_id = self._interaction_channel(it.payload)
            status, msg = self._create_message(channel_id, call.json or {}, files, interaction=it)
        if status == 200 and call.query.get("wait", "").lower() not in ("1", "true"):
            return 204, None
        return status, msg

    def _wh_get(self, call: Call, files: Any, app_id: str, token: str, mid: str) -> Reply:
        found = self._webhook_message(app_id, token, mid)
        return found if isinstance(found[0], int) else (200, found[1])

    def _wh_edit(self, call: Call, files: dict[int, tuple[str, bytes]], app_id: str, token: str, mid: str) -> Reply:
        found = self._webhook_message(app_id, token, mid)
        if isinstance(found[0], int):
            return found  # type: ignore[return-value]
        return self._apply_edit(found[1], dict(call.json or {}), files)

    def _wh_delete(self, call: Call, files: Any, app_id: str, token: str, mid: str) -> Reply:
        found = self._webhook_message(app_id, token, mid)
        if isinstance(found[0], int):
            return found  # type: ignore[return-value]
        del self.messages[found[1]["id"]]
        return 204, None

    # ------------------------------------------------------------------ interaction builders

    def _base_interaction(
        self,
        itype: int,
        *,
        user_id: str | None,
        guild: bool,
        roles: Sequence[str] | None,
        channel_id: str | None = None,
        locale: str = "en-US",
        guild_id: str | None = None,
    ) -> dict[str, Any]:
        uid = user_id or self.default_user_id
        gid = guild_id or self.guild_id
        iid = self.snowflake()
        payload: dict[str, Any] = {
            "id": iid,
            "application_id": self.app_id,
            "type": itype,
            "token": f"itoken-{iid}",
            "version": 1,
            "app_permissions": BOT_PERMISSIONS,
            "locale": locale,
            "entitlements": [],
            "authorizing_integration_owners": {"0": gid},
            "attachment_size_limit": 10 * 1024 * 1024,
        }
        if guild:
            cid = channel_id or self._guild_channels[gid]
            member = self.member_payload(uid, roles)
            member["permissions"] = str(self.permissions_for(member["roles"]))
            payload.update(
                guild_id=gid,
                channel_id=cid,
                channel=self._channels[cid],
                member=member,
                guild_locale="en-US",
                context=0,
                guild={"id": gid, "locale": "en-US", "features": []},
            )
        else:
            channel = self.dm_channel(uid)
            payload.update(channel_id=channel["id"], channel=channel, user=self.user(uid), context=1)
        return payload

    def _command(self, name: str, ctype: int, guild: bool) -> dict[str, Any]:
        scopes: list[str | None] = [self.guild_id, None] if guild else [None]
        for scope in scopes:
            for cmd in self.commands.get(scope, []):
                if cmd["name"] == name and cmd.get("type", 1) == ctype:
                    return cmd
        raise LookupError(f"command {name!r} (type {ctype}) was never synced to the stand-in")

    @staticmethod
    def _options(
        cmd: Mapping[str, Any], options: Mapping[str, Any] | Sequence[Mapping[str, Any]] | None
    ) -> list[dict[str, Any]]:
        if options is None:
            return []
        if not isinstance(options, Mapping):
            return [dict(o) for o in options]
        types = {o["name"]: o.get("type", 3) for o in cmd.get("options") or []}
        unknown = set(options) - set(types)
        if unknown:
            raise ValueError(f"options {sorted(unknown)} not declared by /{cmd['name']}")
        return [{"name": k, "type": types[k], "value": v} for k, v in options.items()]

    def slash(
        self,
        name: str,
        options: Mapping[str, Any] | Sequence[Mapping[str, Any]] | None = None,
        *,
        user_id: str | None = None,
        guild: bool = True,
        roles: Sequence[str] | None = None,
        channel_id: str | None = None,
        locale: str = "en-US",
        guild_id: str | None = None,
    ) -> dict[str, Any]:
        """An INTERACTION_CREATE (type 2) for a synced slash command (in `guild_id`, by default the first server).

        ``options`` is either Discord's list (``[{"name", "type", "value"}]``) or a dict of
        name -> value typed from the synced command. ``roles=None`` uses the member's roles.
        """
        cmd = self._command(name, 1, guild)
        payload = self._base_interaction(
            2, user_id=user_id, guild=guild, roles=roles, channel_id=channel_id, locale=locale, guild_id=guild_id
        )
        payload["data"] = {
            "id": cmd["id"],
            "name": name,
            "type": 1,
            "options": self._options(cmd, options),
            **({"guild_id": cmd["guild_id"]} if cmd.get("guild_id") else {}),
        }
        return payload

    def autocomplete(
        self,
        name: str,
        option_name: str,
        value: str,
        *,
        options: Mapping[str, Any] | None = None,
        user_id: str | None = None,
        guild: bool = True,
        roles: Sequence[str] | None = None,
    ) -> dict[str, Any]:
        """An INTERACTION_CREATE (type 4): the user is typing ``value`` into ``option_name``."""
        payload = self.slash(name, {**(options or {}), option_name: value}, user_id=user_id, guild=guild, roles=roles)
        payload["type"] = 4
        for opt in payload["data"]["options"]:
            if opt["name"] == option_name:
                opt["focused"] = True
        return payload

    def _current_message(self, message: Mapping[str, Any] | str) -> dict[str, Any]:
        mid = message if isinstance(message, str) else str(message["id"])
        if mid in self.messages:
            return self.messages[mid]
        if isinstance(message, Mapping):
            return dict(message)
        raise LookupError(f"unknown message {mid}")

    def component(
        self,
        custom_id: str,
        message: Mapping[str, Any] | str,
        *,
        component_type: int = 2,
        values: Sequence[str] | None = None,
        user_id: str | None = None,
        roles: Sequence[str] | None = None,
    ) -> dict[str, Any]:
        """An INTERACTION_CREATE (type 3): a click on ``custom_id`` in ``message`` (dict or id).

        The message is sent as the stand-in currently holds it; the component must exist in it
        and be enabled, as only rendered components can be clicked.
        """
        msg = self._current_message(message)
        comp = next((c for c in walk_components(msg.get("components") or []) if c.get("custom_id") == custom_id), None)
        if comp is None:
            raise ValueError(f"message {msg['id']} has no component {custom_id!r}")
        if comp.get("disabled"):
            raise ValueError(f"component {custom_id!r} is disabled")
        channel = self._channels.get(msg["channel_id"], {})
        payload = self._base_interaction(
            3,
            user_id=user_id,
            guild=channel.get("type") != 1,
            roles=roles,
            channel_id=msg["channel_id"] if channel.get("type") == 0 else None,
        )
        payload["message"] = msg
        payload["data"] = {
            "custom_id": custom_id,
            "component_type": component_type,
            **({"values": list(values)} if values is not None else {}),
        }
        return payload

    def modal_submit(
        self,
        custom_id: str,
        values: Mapping[str, str | Sequence[str]],
        *,
        user_id: str | None = None,
        guild: bool = True,
        roles: Sequence[str] | None = None,
        message: Mapping[str, Any] | str | None = None,
        layout: Literal["auto", "row", "label"] = "auto",
    ) -> dict[str, Any]:
        """An INTERACTION_CREATE (type 5) submitting the modal ``custom_id`` with ``values``.

        With ``layout="auto"`` the submission mirrors the modal the bot sent (action rows or
        type-18 labels); the modal must have been opened and required inputs must be filled.
        """
        modal = self._modals.get(custom_id)
        if modal is None and layout == "auto":
            raise LookupError(f"modal {custom_id!r} was never opened by the bot")
        if modal is None:
            inputs = [{"type": 4, "custom_id": k} for k in values]
            rows = [{"type": 1, "components": [i]} if layout == "row" else {"type": 18, "component": i} for i in inputs]
        else:
            rows = modal["components"]
            declared = {c.get("custom_id") for c in walk_components(rows)}
            if missing := set(values) - declared:
                raise ValueError(f"modal {custom_id!r} has no inputs {sorted(missing)}")
        submitted = []
        for row in rows:
            inner = row.get("components") or ([row["component"]] if "component" in row else [])
            parts = []
            for comp in inner:
                if "custom_id" not in comp:
                    continue
                cid = comp["custom_id"]
                if comp.get("required", True) and comp["type"] == 4 and not values.get(cid):
                    raise ValueError(f"required input {cid!r} left empty")
                part: dict[str, Any] = {"type": comp["type"], "custom_id": cid}
                if comp["type"] == 4:
                    part["value"] = str(values.get(cid, ""))
                else:
                    part["values"] = list(values.get(cid) or [])
                parts.append(part)
            if not parts:
                continue
            if row.get("type") == 18:
                submitted.append({"type": 18, "component": parts[0]})
            else:
                submitted.append({"type": 1, "components": parts})
        channel_id = None
        msg = self._current_message(message) if message is not None else None
        if msg is not None and self._channels.get(msg["channel_id"], {}).get("type") == 0:
            channel_id = msg["channel_id"]
        payload = self._base_interaction(5, user_id=user_id, guild=guild, roles=roles, channel_id=channel_id)
        payload["data"] = {"custom_id": custom_id, "components": submitted}
        if msg is not None:
            payload["message"] = msg
        return payload

    async def interact(self, payload: dict[str, Any], timeout: float = 2.0) -> CallbackResult:
        """Dispatch INTERACTION_CREATE and wait for the bot's first callback for it."""
        iid = payload["id"]
        path = rf"/interactions/{iid}/[^/]+/callback"
        await self.dispatch("INTERACTION_CREATE", payload)
        try:
            call = await self.wait_for_call("POST", path, timeout=timeout)
        except TimeoutError:
            raise TimeoutError(
                f"the bot sent no callback for interaction {iid} within "
                f"{timeout}s (an unknown view or command is dropped silently)"
            ) from None
        return CallbackResult(call.json, call.status or 0, call.response, call.files)

    # ------------------------------------------------------------------ gateway

    async def dispatch(self, event: str, data: dict[str, Any], *, shard: int | None = None) -> int:
        """Send a dispatch (op 0) with the next sequence number; returns that number. It goes to
        `shard`'s connection, else to the shard of the server it names, else (a DM) to shard 0."""
        if shard is None and data.get("guild_id") and self._shard_ws:
            shard = self.shard_of(data["guild_id"], self.shard_count)
        ws = self._shard_ws.get(shard) if shard is not None else self._ws
        if ws is None or ws.closed:
            raise RuntimeError("no bot is connected to the stand-in's gateway")
        if event == "INTERACTION_CREATE":
            self._know_channel(data)
            it = _Interaction(data["id"], data["token"], data["type"], data, dispatched_at=time.monotonic())
            self._interactions[it.id] = self._by_token[it.token] = it
        async with self._send_lock:
            self._seq += 1
            seq = self._seq
            await ws.send_str(json.dumps({"op": 0, "t": event, "s": seq, "d": data}))
        return seq

    @staticmethod
    def _interaction_channel(payload: Mapping[str, Any]) -> str:
        """The channel an interaction came from: its channel_id, or its channel object's id."""
        channel = payload.get("channel") if isinstance(payload.get("channel"), Mapping) else {}
        return str(payload.get("channel_id") or channel.get("id") or "0")

    def _know_channel(self, payload: Mapping[str, Any]) -> None:
        """Discord knows every channel an interaction comes from, also one this stand-in was not told of."""
        cid = self._interaction_channel(payload)
        if cid not in self._channels:
            channel = payload.get("channel") if isinstance(payload.get("channel"), Mapping) else {}
            kind = channel.get("type", 0 if payload.get("guild_id") else 1)
            self._channels[cid] = {"id": cid, "type": kind, "name": channel.get("name", "channel"),
                                   "guild_id": payload.get("guild_id"), "position": 0, "permission_overwrites": [],
                                   "last_message_id": None, "flags": 0}

    async def send_garbage(self) -> None:
        """Send the connected bot a gateway frame that is not JSON."""
        if self._ws is not None:
            await self._ws.send_str("{this is not JSON")

    async def request_reconnect(self) -> None:
        """Send op 7 (RECONNECT): discord.py reconnects to resume_gateway_url and RESUMEs."""
        self.resumed.clear()
        if self._ws is not None:
            await self._ws.send_str(json.dumps({"op": 7, "d": None, "s": None, "t": None}))

    def reset_connection_state(self) -> None:
        """Forget the current gateway session so another bot process can IDENTIFY afresh."""
        self.identified.clear()
        self.resumed.clear()
        self._ws, self._seq, self.session_id = None, 0, None
        self._shard_ws = {}

    async def _gateway(self, request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse()
        await ws.prepare(request)
        self._sockets.add(ws)
        try:
            await ws.send_str(json.dumps({"op": 10, "d": {"heartbeat_interval": 41250}, "s": None, "t": None}))
            async for msg in ws:
                if msg.type != WSMsgType.TEXT:
                    continue
                frame = json.loads(msg.data)
                self.gateway_frames.append(frame)
                op, d = frame.get("op"), frame.get("d") or {}
                if op == 1:
                    await ws.send_str(json.dumps({"op": 11}))
                elif op in (2, 6) and d.get("token") != self.token:
                    await ws.close(code=4004, message=b"Authentication failed.")
                elif op == 2 and self.garbage_before_ready > 0:
                    self.garbage_before_ready -= 1
                    await ws.send_str("{this is not JSON")
                elif op == 2:
                    shard = d.get("shard") or [0, 1]
                    await self._identify(ws, int(shard[0]), int(shard[1]))
                elif op == 6 and d.get("session_id") != self.session_id:
                    await ws.send_str(json.dumps({"op": 9, "d": False, "s": None, "t": None}))
                elif op == 6:
                    self._ws = ws
                    await self.dispatch("RESUMED", {})
                    self.resumed.set()
        finally:
            self._sockets.discard(ws)
            if self._ws is ws:
                self._ws = None
            self._shard_ws = {n: s for n, s in self._shard_ws.items() if s is not ws}
        return ws

    async def _identify(self, ws: web.WebSocketResponse, shard_id: int = 0, shard_count: int = 1) -> None:
        self.identifies.append((shard_id, shard_count, time.monotonic()))
        self.shard_count = shard_count
        self._shard_ws[shard_id] = ws
        if shard_id == 0 or self._ws is None:
            self._ws, self._seq = ws, 0
        self.session_id = f"standin-session-{next(self._counter)}"
        guilds = [g for g in self.guild_ids if self.shard_of(g, shard_count) == shard_id]
        await self.dispatch(
            "READY",
            {
                "v": 10,
                "user": self.bot_user(),
                "session_id": self.session_id,
                "session_type": "normal",
                "resume_gateway_url": self.gateway_url,
                "guilds": [{"id": g, "unavailable": True} for g in guilds],
                "private_channels": [],
                "relationships": [],
                "presences": [],
                "shard": [shard_id, shard_count],
                "application": {"id": self.app_id, "flags": 0},
            },
            shard=shard_id,
        )
        for gid in guilds:
            await self.dispatch("GUILD_CREATE", self.guild_payload(gid), shard=shard_id)
        self.identified.set()


async def _read_body(request: web.Request) -> tuple[Any, dict[int, tuple[str, bytes]]]:
    """JSON body, or multipart ``payload_json`` plus ``files[n]`` -> {n: (filename, bytes)}."""
    if request.content_type.startswith("multipart/"):
        payload: Any = None
        files: dict[int, tuple[str, bytes]] = {}
        reader = await request.multipart()
        while (part := await reader.next()) is not None:
            data = await part.read()  # type: ignore[union-attr]
            name = part.name or ""
            if name == "payload_json":
                payload = json.loads(data)
            elif m := re.fullmatch(r"files\[(\d+)\]", name):
                files[int(m.group(1))] = (part.filename or name, bytes(data))  # type: ignore[union-attr]
        return payload, files
    raw = await request.read()
    return (json.loads(raw) if raw else None), {}


@asynccontextmanager
async def running_bot(
    bot: discord.Client, fake: DiscordStandIn, *, token: str | None = None, timeout: float = 5.0
) -> AsyncIterator[discord.Client]:
    """Log ``bot`` in to the stand-in, connect the gateway, wait until ready; close on exit.

    Login errors (e.g. ``discord.LoginFailure``) and gateway failures before ready propagate.
    """
    task: asyncio.Task[None] | None = None
    try:
        await bot.login(token or fake.token)
        task = asyncio.create_task(bot.connect(reconnect=False), name="discord-bot-connect")
        ready = asyncio.create_task(bot.wait_until_ready())
        done, _ = await asyncio.wait({task, ready}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
        if ready not in done:
            ready.cancel()
            if task in done:
                task.result()  # re-raise why the gateway connection ended
            raise TimeoutError("bot did not become ready against the Discord stand-in")
        yield bot
    finally:
        await bot.close()
        if task is not None:
            await asyncio.wait_for(task, timeout)
