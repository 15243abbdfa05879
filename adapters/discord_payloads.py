"""Discord's payloads both ways: an interaction's parts read for an event (its place, a modal's
text, the role and channel ids kept from the raw dispatch), and a reply rendered as a message
with buttons (`ChoiceButton`, dispatched by custom_id) or as a modal (`AnswerModal`)."""

from __future__ import annotations

import hashlib
import io
import logging
import re
from collections import OrderedDict
from collections.abc import Callable, Mapping
from typing import Any, TypeVar, cast

import discord
from discord.ui.view import BaseView

from adapters.log_guard import clean
from bot.core.messages import Form, Place, Reply, fit

log = logging.getLogger("studybot.discord")
V = TypeVar("V", bound=BaseView)

PLATFORM = "discord"
BUTTON_PREFIX = "sb:"
FORM_PREFIX = "sbform:"
ANSWER_INPUT = "answer"
MAX_CUSTOM_ID = 100
MAX_CONTENT = 2000
MAX_CHOICE_VALUE = 100  # an autocomplete choice's name and value
HASHED = re.compile(r"(?P<prefix>.+)…#(?P<digest>[0-9a-f]{12})", re.DOTALL)
RAW_KEPT = 1000  # interactions whose raw role and channel ids are kept until handled


# ------------------------------------------------------------ interaction -> event


def resolve_role_names(names: frozenset[str], roles: list[tuple[str, str]]) -> tuple[frozenset[str], list[str]]:
    """The ids of the guild roles (id, name) named in `names`, and a warning per name that two or
    more roles share: such a name resolves to none of them (configure the role's id instead)."""
    found: set[str] = set()
    warnings = []
    for name in sorted(names):
        ids = sorted(role_id for role_id, role_name in roles if role_name == name)
        if len(ids) > 1:
            warnings.append(f"{len(ids)} roles are named {clean(name, 40)!r} ({', '.join(ids)}); none of them "
                            "counts as an instructor role: list the right one's id under instructors.discord_roles")
        elif ids:
            found.update(ids)
    return frozenset(found), warnings


def place_of(interaction: discord.Interaction, channel_id: str | None = None) -> Place:
    """Where: the guild and channel (from the payload's channel object or its bare channel_id),
    or no channel in a DM."""
    if not interaction.guild_id:
        return Place(PLATFORM, "", None)
    channel = str(interaction.channel_id) if interaction.channel_id else channel_id
    return Place(PLATFORM, str(interaction.guild_id), channel)


def choice_value(name: str) -> str:
    """An autocomplete value for `name` that resolves back to it: the name itself when it fits,
    else its start and a digest of the whole (see `resolve_choice`)."""
    if len(name) <= MAX_CHOICE_VALUE:
        return name
    return f"{name[:MAX_CHOICE_VALUE - 14]}…#{digest(name)}"


def digest(name: str) -> str:
    return hashlib.sha256(name.encode()).hexdigest()[:12]


def cut_value(value: str) -> tuple[str, str] | None:
    """(the start of the name, its digest) when `value` was made by `choice_value` from a long name."""
    match = HASHED.fullmatch(value)
    return (match["prefix"], match["digest"]) if match else None


def submitted_text(components: object) -> str:
    """The answer typed into a submitted modal (label-wrapped or in an action row); "" when the
    payload has no such input, however it is shaped."""
    for comp in components if isinstance(components, list) else ():
        if not isinstance(comp, Mapping):
            continue
        inner = comp.get("components") or ([comp["component"]] if "component" in comp else [])
        for item in [comp, *(inner if isinstance(inner, list) else ())]:
            if isinstance(item, Mapping) and item.get("type") == 4 and item.get("custom_id") == ANSWER_INPUT:
                return str(item.get("value") or "")
    return ""


class RawInteractions:
    """Reads every INTERACTION_CREATE before discord.py parses it, and keeps every parser from
    ending the gateway.

    Fills in what Discord's documented examples leave out but discord.py requires (`member.flags`;
    a `member` for a guild interaction that names only its `user`), skips one that names neither
    (nobody to answer), and keeps each interaction's
    role ids and bare `channel_id`, which discord.py drops for guilds it has not cached."""

    def __init__(self) -> None:
        self._kept: OrderedDict[int, tuple[frozenset[str], str | None]] = OrderedDict()

    def install(self, parsers: dict[str, Callable[[Any], Any]]) -> None:
        for event, parse in list(parsers.items()):
            if getattr(parse, "studybot_guarded", False):
                continue
            parsers[event] = self._guarded(event, parse)

    def _guarded(self, event: str, parse: Callable[[Any], Any]) -> Callable[[Any], Any]:
        def guarded(data: Any) -> Any:
            try:
                if event == "INTERACTION_CREATE" and isinstance(data, dict):
                    self._read(data)
                return parse(data)
            except Exception as exc:
                log.warning("discord sent a %s dispatch that discord.py cannot read (%s: %s); it was skipped",
                            event, type(exc).__name__, clean(exc, 60))
                return None

        guarded.studybot_guarded = True  # type: ignore[attr-defined]
        return guarded

    def _read(self, data: dict[str, Any]) -> None:
        member = data.get("member")
        if not isinstance(member, dict) and not isinstance(data.get("user"), dict):
            raise ValueError("neither member nor user says who acted")
        if data.get("guild_id") and not isinstance(member, dict) and isinstance(data.get("user"), dict):
            member = data["member"] = {"user": data["user"], "roles": []}
        if isinstance(member, dict):
            member.setdefault("flags", 0)
            member.setdefault("roles", [])
        roles = member.get("roles") if isinstance(member, dict) else []
        channel = data.get("channel_id")
        key = int(data["id"])
        self._kept[key] = (frozenset(str(r) for r in roles or ()), str(channel) if channel else None)
        while len(self._kept) > RAW_KEPT:
            self._kept.popitem(last=False)

    def take(self, interaction_id: int) -> tuple[frozenset[str], str | None]:
        """The role ids and channel id of an interaction (once; empty when never seen)."""
        return self._kept.pop(interaction_id, (frozenset(), None))


# ------------------------------------------------------------ reply -> Discord


class ChoiceButton(discord.ui.DynamicItem[discord.ui.Button], template=re.compile(r"sb:(?P<token>.+)", re.DOTALL)):
    """A choice's button; rebuilt from its custom_id on every click, so it survives restarts."""

    def __init__(self, token: str, label: str = "?", *, row: int | None = None) -> None:
        button: discord.ui.Button[discord.ui.View] = discord.ui.Button(
            label=label, custom_id=BUTTON_PREFIX + token, style=discord.ButtonStyle.secondary)
        super().__init__(button, row=row)
        self.token = token

    @classmethod
    async def from_custom_id(
        cls, interaction: discord.Interaction, item: discord.ui.Item[Any], match: re.Match[str], /
    ) -> ChoiceButton:
        return cls(match["token"], getattr(item, "label", None) or "?")

    async def callback(self, interaction: discord.Interaction) -> None:
        adapter = getattr(interaction.client, "adapter", None)
        if adapter is not None:
            await adapter.on_choice(interaction, self.token)


class AnswerModal(discord.ui.Modal):
    """A form as a modal: the prompt as text, one paragraph input labelled with the form's label.

    Its submission is handled from ``on_interaction`` by custom_id, never by this object."""

    def __init__(self, form: Form) -> None:
        custom_id = FORM_PREFIX + form.token
        if len(custom_id) > MAX_CUSTOM_ID:  # the core's tokens are 12 characters; a longer one is a bug
            raise ValueError(f"form token {form.token[:20]!r}… is too long for a Discord custom_id")
        super().__init__(title=form.title, custom_id=custom_id, timeout=None)
        self.add_item(discord.ui.TextDisplay(form.prompt))
        answer: discord.ui.TextInput[AnswerModal] = discord.ui.TextInput(
            custom_id=ANSWER_INPUT,
            style=discord.TextStyle.paragraph,
            max_length=min(form.max_length, 4000),
            placeholder=fit(form.prompt, 100),
        )
        self.add_item(discord.ui.Label(text=form.label, component=answer))


def inert(view: V) -> V:
    """Stop a view before it is sent, so that discord.py keeps no copy of it: clicks and
    submissions are dispatched by custom_id (DynamicItem, on_interaction) instead."""
    view.stop()
    return view


def render(reply: Reply) -> tuple[str, discord.ui.View | None]:
    """A reply's message content and its buttons (rows of at most five), or None without choices."""
    if not reply.choices:
        return fit(reply.text, MAX_CONTENT), None
    view = discord.ui.View(timeout=None)
    for row, choices in enumerate(reply.rows()):
        for choice in choices:
            if len(BUTTON_PREFIX + choice.token) > MAX_CUSTOM_ID:
                log.error("a choice token is too long for a Discord custom_id; button left out")
                continue
            view.add_item(ChoiceButton(choice.token, choice.label, row=row))
    inert(view)
    return fit(reply.text, MAX_CONTENT), view


def message_kwargs(reply: Reply) -> dict[str, Any]:
    """Keyword arguments for send/followup.send: content, a view and a file when present."""
    content, view = render(reply)
    kwargs: dict[str, Any] = {"content": content}
    if view is not None:
        kwargs["view"] = view
    if reply.file is not None:
        kwargs["file"] = discord.File(io.BytesIO(reply.file.content), filename=reply.file.filename)
    return kwargs


def interaction_data(interaction: discord.Interaction) -> Mapping[str, Any]:
    """The interaction's data as a plain mapping (its TypedDicts differ per interaction type)."""
    return cast(Mapping[str, Any], interaction.data or {})
