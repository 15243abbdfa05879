"""The Discord adapter: slash commands, buttons and modals on discord.py, in the shared event loop.

Every button's custom_id is ``sb:<choice token>`` and is dispatched through one registered
DynamicItem, and every modal's custom_id is ``sbform:<form token>`` and is handled from
``on_interaction``; neither needs state in memory, so both keep working after a restart.
An interaction is answered after ``StudyBot.handle`` has committed: the first private reply
(or the form's modal) is the interaction response; public posts, DMs, files and edits follow.
"""

from __future__ import annotations

import asyncio
import inspect
import io
import logging
import re
from collections.abc import Mapping
from dataclasses import replace
from typing import Any, Literal, Optional, TypeVar, cast

import discord
import yarl
from discord import app_commands
from discord.ext import commands
from discord.ui.view import BaseView

from adapters.discord_settings import DiscordSettings
from bot.app import StudyBot
from bot.commands import CommandSpec
from bot.config import Instructors
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
    fit,
)
from bot.scheduler import deliver

log = logging.getLogger("studybot.discord")
V = TypeVar("V", bound=BaseView)

PLATFORM = "discord"
BUTTON_PREFIX = "sb:"
FORM_PREFIX = "sbform:"
ANSWER_INPUT = "answer"
MAX_CUSTOM_ID = 100
MAX_CONTENT = 2000
UNKNOWN_INTERACTION = 10062
MAX_AUTOCOMPLETE = 25  # Discord shows at most 25 suggestions
UNDELIVERABLE = {  # keyed by "was it a public post?"
    False: "I could not send you a direct message. Allow direct messages from server members "
           "(Privacy Settings), then try again.",
    True: "I could not post in this channel. Ask an admin to let studybot send messages and attach files here.",
}


def apply_urls(api_url: str, gateway_url: str) -> None:
    """Point discord.py's REST, webhook and gateway traffic at the configured URLs.

    discord.py has no public setting for these; both are class attributes read when a
    request or connection is made, and this is the one place studybot sets them."""
    discord.http.Route.BASE = api_url.rstrip("/")
    discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY = yarl.URL(gateway_url)


# ------------------------------------------------------------ interaction -> event


def is_instructor(user: discord.abc.User, cohort: str, instructors: Instructors) -> bool:
    """An instructor by user id (listed for this guild, or everywhere), or by any configured guild role."""
    if instructors.listed(Cohort(PLATFORM, cohort), str(user.id)):
        return True
    roles = getattr(user, "roles", ())  # a Member in a guild, a User in a DM
    return any(r.name in instructors.discord_roles or str(r.id) in instructors.discord_roles for r in roles)


def actor_of(interaction: discord.Interaction, instructors: Instructors) -> Actor:
    """Who acted: the guild is the cohort ("" in a DM, where the core uses the last cohort)."""
    user = interaction.user
    cohort = str(interaction.guild_id) if interaction.guild_id else ""
    return Actor(PLATFORM, cohort, str(user.id), user.display_name, is_instructor(user, cohort, instructors))


def place_of(interaction: discord.Interaction) -> Place:
    """Where: the guild and channel, or no channel in a DM."""
    if not interaction.guild_id:
        return Place(PLATFORM, "", None)
    channel = str(interaction.channel_id) if interaction.channel_id else None
    return Place(PLATFORM, str(interaction.guild_id), channel)


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
        super().__init__(title=form.title, custom_id=FORM_PREFIX + form.token, timeout=None)
        self.add_item(discord.ui.TextDisplay(form.prompt))
        answer: discord.ui.TextInput[AnswerModal] = discord.ui.TextInput(
            custom_id=ANSWER_INPUT,
            style=discord.TextStyle.paragraph,
            max_length=min(form.max_length, 4000),
            placeholder=fit(form.prompt, 100),
        )
        self.add_item(discord.ui.Label(text=form.label, component=answer))


def _inert(view: V) -> V:
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
    _inert(view)
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


def _data(interaction: discord.Interaction) -> Mapping[str, Any]:
    """The interaction's data as a plain mapping (its TypedDicts differ per interaction type)."""
    return cast(Mapping[str, Any], interaction.data or {})


def _private(reply: Reply) -> bool:
    return reply.audience is Audience.PRIVATE and reply.edit is None


# ------------------------------------------------------------ the discord.py client


class StudyClient(commands.Bot):
    """The discord.py bot: registers the slash commands and the button template, syncs the tree."""

    def __init__(self, adapter: DiscordAdapter, *, guild_ready_timeout: float = 2.0) -> None:
        super().__init__(
            command_prefix=commands.when_mentioned,
            help_command=None,
            intents=discord.Intents.default(),
            guild_ready_timeout=guild_ready_timeout,
            chunk_guilds_at_startup=False,
        )
        self.adapter = adapter
        for spec in adapter.bot.commands.values():
            self.tree.add_command(slash_command(spec, adapter))
        self.tree.error(self._on_tree_error)

    async def setup_hook(self) -> None:
        self.add_dynamic_items(ChoiceButton)
        guilds = self.adapter.settings.sync_guilds
        if not guilds:
            await self.tree.sync()
            return
        for guild_id in guilds:
            guild = discord.Object(id=guild_id)
            self.tree.copy_global_to(guild=guild)
            await self.tree.sync(guild=guild)

    async def on_interaction(self, interaction: discord.Interaction) -> None:
        if interaction.type is discord.InteractionType.modal_submit:
            custom_id = str(_data(interaction).get("custom_id", ""))
            if custom_id.startswith(FORM_PREFIX):
                await self.adapter.on_form(interaction, custom_id[len(FORM_PREFIX) :])

    async def _on_tree_error(self, interaction: discord.Interaction, error: app_commands.AppCommandError) -> None:
        log.error("discord command %s failed: %s", interaction.command and interaction.command.name,
                  type(getattr(error, "original", error)).__name__)


def slash_command(spec: CommandSpec, adapter: DiscordAdapter) -> app_commands.Command:
    """A slash command built from the core's declaration: each option a string parameter (its
    choices as a fixed list, its suggestions as autocomplete), turned back into the typed form."""

    async def callback(interaction: discord.Interaction, **options: str | None) -> None:
        await adapter.on_command(interaction, spec.name, spec.args(options))

    params = [inspect.Parameter("interaction", inspect.Parameter.POSITIONAL_OR_KEYWORD,
                                annotation=discord.Interaction)]
    for option in spec.options:
        kind: Any = Literal[tuple(option.choices)] if option.choices else str
        params.append(inspect.Parameter(option.name, inspect.Parameter.KEYWORD_ONLY, default=None,
                                        annotation=Optional[kind]))  # noqa: UP045 (a runtime annotation)
    callback.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
    callback.__discord_app_commands_param_description__ = {  # type: ignore[attr-defined]
        o.name: o.description for o in spec.options}
    command: app_commands.Command = app_commands.Command(name=spec.name, description=spec.summary,
                                                         callback=callback)
    for option in spec.options:
        if option.suggest is not None:
            command.autocomplete(option.name)(_autocomplete(adapter, spec.name, option.name))
    return command


def _autocomplete(adapter: DiscordAdapter, command: str, option: str) -> Any:
    async def complete(interaction: discord.Interaction, current: str) -> list[app_commands.Choice[str]]:
        names = (await adapter.bot.suggest(command, option, current))[:MAX_AUTOCOMPLETE]
        return [app_commands.Choice(name=fit(n, 100), value=fit(n, 100)) for n in names]

    return complete


# ------------------------------------------------------------ the adapter


class DiscordAdapter:
    """studybot on Discord: `start()` logs in, syncs the commands and returns once ready."""

    platform = PLATFORM

    def __init__(self, bot: StudyBot, settings: DiscordSettings, *, guild_ready_timeout: float = 2.0,
                 ready_timeout: float = 30.0) -> None:
        self.bot = bot
        self.settings = settings
        self.ready_timeout = ready_timeout
        self.client = StudyClient(self, guild_ready_timeout=guild_ready_timeout)
        self._connection: asyncio.Task[None] | None = None
        self._supervisor: asyncio.Task[None] | None = None

    async def start(self) -> None:
        if self.settings.token is None:
            raise RuntimeError("DISCORD_TOKEN is not set")
        apply_urls(self.settings.api_url, self.settings.gateway_url)
        try:
            await self.client.login(self.settings.token.reveal())
        except discord.LoginFailure as exc:
            await self.client.close()
            raise RuntimeError("Discord refused DISCORD_TOKEN (401 at login): copy the bot token again") from exc
        self._connection = asyncio.create_task(self.client.connect(), name="discord-gateway")
        ready = asyncio.create_task(self.client.wait_until_ready())
        done, _ = await asyncio.wait({self._connection, ready}, timeout=self.ready_timeout,
                                     return_when=asyncio.FIRST_COMPLETED)
        if ready in done:
            self._supervisor = asyncio.create_task(self._stay_connected(), name="discord-supervisor")
            return
        ready.cancel()
        failure = self._connection.exception() if self._connection in done else None
        await self.close()
        raise RuntimeError(f"Discord gateway at {self.settings.gateway_url} did not become ready within "
                           f"{self.ready_timeout:g} s; check DISCORD_TOKEN and DISCORD_GATEWAY_URL") from failure

    async def _stay_connected(self) -> None:
        """discord.py reconnects after network trouble itself, but an exception escaping
        `connect()` (a payload its parser cannot read) would end the gateway for good: connect again."""
        delay = 0.1
        while self._connection is not None:
            try:
                await asyncio.shield(self._connection)  # close() cancels this watcher, not the connection
                return  # connect() returns only once the client is closed
            except Exception:
                if self.client.is_closed():
                    return
                log.exception("the Discord gateway connection failed; reconnecting in %.1f s", delay)
            await asyncio.sleep(delay)
            delay = min(delay * 2, 60.0)
            self._connection = asyncio.create_task(self.client.connect(), name="discord-gateway")

    async def close(self) -> None:
        if self._supervisor is not None:
            self._supervisor.cancel()
            self._supervisor = None
        await self.client.close()
        if self._connection is not None:
            try:
                await asyncio.wait_for(self._connection, 10)
            except Exception:  # the connection's own failure was logged by discord.py
                log.debug("discord connection ended with an error", exc_info=True)
            self._connection = None

    # -------------------------------------------------------- inbound

    async def on_command(self, interaction: discord.Interaction, name: str, args: str) -> None:
        event = Command(name, args, actor_of(interaction, self.bot.settings.instructors), place_of(interaction))
        await self._handle(interaction, event)

    async def on_choice(self, interaction: discord.Interaction, token: str) -> None:
        event = ChoiceMade(token, actor_of(interaction, self.bot.settings.instructors), place_of(interaction))
        await self._handle(interaction, event)

    async def on_form(self, interaction: discord.Interaction, token: str) -> None:
        text = submitted_text(_data(interaction).get("components"))
        event = TextSubmitted(token, text, actor_of(interaction, self.bot.settings.instructors), place_of(interaction))
        await self._handle(interaction, event)

    async def _handle(self, interaction: discord.Interaction, event: Command | ChoiceMade | TextSubmitted) -> None:
        """Record first (handle commits), then answer; never raise into discord.py."""
        try:
            replies = [self._addressed(r, event) for r in await self.bot.handle(event)]
            await self._respond(interaction, replies)
        except Exception:
            log.exception("discord interaction %s failed after handling", interaction.id)

    @staticmethod
    def _addressed(reply: Reply, event: Command | ChoiceMade | TextSubmitted) -> Reply:
        """Fill in where a reply goes from the event that caused it."""
        return replace(reply, place=reply.place or event.place, to=reply.to or event.actor)

    async def _respond(self, interaction: discord.Interaction, replies: list[Reply]) -> None:
        """The first response within the 3 s window, then everything that may take longer."""
        first, rest = self._first(interaction, replies)
        acked = await self._send_first(interaction, first)
        for reply in rest:
            try:
                if _private(reply):
                    if acked:
                        await interaction.followup.send(ephemeral=True, **message_kwargs(reply))
                elif await deliver(self.bot, self, reply) is None and acked:
                    await interaction.followup.send(UNDELIVERABLE[reply.audience is Audience.PUBLIC], ephemeral=True)
            except discord.HTTPException as exc:
                log.warning("discord refused a reply: HTTP %s code %s", exc.status, exc.code)

    @staticmethod
    def _first(interaction: discord.Interaction, replies: list[Reply]) -> tuple[Reply | None, list[Reply]]:
        """The reply that answers the interaction: a form (as a modal), else the first private
        reply, else a public command reply; the others follow it."""
        can_modal = interaction.type is not discord.InteractionType.modal_submit
        pick = next((r for r in replies if r.form is not None and can_modal), None)
        pick = pick or next((r for r in replies if _private(r)), None)
        if pick is None and interaction.type is discord.InteractionType.application_command:
            pick = next((r for r in replies if r.audience is Audience.PUBLIC and r.edit is None), None)
        return pick, [r for r in replies if r is not pick]

    async def _send_first(self, interaction: discord.Interaction, reply: Reply | None) -> bool:
        """Send the interaction response; False when the interaction expired (logged, not raised)."""
        try:
            if reply is None:
                if interaction.type is discord.InteractionType.application_command:
                    await interaction.response.send_message("Done.", ephemeral=True)
                else:
                    await interaction.response.defer()
            elif reply.form is not None and interaction.type is not discord.InteractionType.modal_submit:
                await interaction.response.send_modal(_inert(AnswerModal(reply.form)))
            elif _private(reply):
                await interaction.response.send_message(ephemeral=True, **message_kwargs(reply))
            else:
                sent = await interaction.response.send_message(**message_kwargs(reply))
                if reply.tag and sent.message_id and interaction.channel_id:
                    ref = MessageRef(PLATFORM, str(interaction.channel_id), str(sent.message_id))
                    await self.bot.message_posted(reply.tag, ref)
            return True
        except discord.HTTPException as exc:
            if exc.code == UNKNOWN_INTERACTION:
                log.warning("discord interaction %s expired before the bot answered (code 10062); "
                            "what was recorded stays recorded", interaction.id)
            else:
                log.warning("discord refused the response to interaction %s: HTTP %s code %s",
                            interaction.id, exc.status, exc.code)
            return False

    # -------------------------------------------------------- Outbox

    async def send(self, reply: Reply) -> MessageRef | None:
        """Post a reply: in its channel when public, else (or in a DM context) to its user by DM.

        None when Discord refuses for good (DMs closed, no access, channel gone), so that a
        timer is not retried forever; other failures raise and are retried."""
        try:
            return await self._post(reply)
        except (discord.Forbidden, discord.NotFound) as exc:
            log.warning("discord refused a %s message: HTTP %s code %s", reply.audience, exc.status, exc.code)
            return None

    async def _post(self, reply: Reply) -> MessageRef | None:
        if reply.audience is Audience.PUBLIC and reply.place is not None and reply.place.channel_id:
            channel: discord.abc.Messageable = self.client.get_partial_messageable(int(reply.place.channel_id))
        elif reply.to is not None:
            channel = await self.client.create_dm(discord.Object(id=int(reply.to.user_id)))
        else:
            log.warning("a %s reply has no channel and no recipient; not sent", reply.audience)
            return None
        message = await channel.send(**message_kwargs(reply))
        return MessageRef(PLATFORM, str(message.channel.id), str(message.id))

    async def edit(self, ref: MessageRef, reply: Reply) -> None:
        """Replace an earlier message's text and buttons (no choices: the buttons go)."""
        content, view = render(reply)
        message = self.client.get_partial_messageable(int(ref.channel_id)).get_partial_message(int(ref.message_id))
        try:
            await message.edit(content=content, view=view)
        except discord.NotFound as exc:  # deleted meanwhile: nothing left to update
            log.warning("discord message to edit is gone: HTTP %s code %s", exc.status, exc.code)
