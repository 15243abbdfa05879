"""The Discord adapter: slash commands, buttons and modals on discord.py, in the shared event loop.

Every button's custom_id is ``sb:<choice token>`` and is dispatched through one registered
DynamicItem, and every modal's custom_id is ``sbform:<form token>`` and is handled from
``on_interaction``; neither needs state in memory, so both keep working after a restart.
An interaction is answered after ``StudyBot.handle`` has committed: the first private reply
(or the form's modal) is the interaction response; public posts, DMs, files and edits follow,
then the other private replies (the policy is `adapters.replies`). Every message goes out with
mentions disabled.

Each INTERACTION_CREATE is read before discord.py parses it (`discord_payloads.RawInteractions`): the fields
Discord's own examples leave out are filled in, and the member's role ids and the channel id
are kept, so that neither an uncached guild nor a payload without a channel object loses them;
any dispatch discord.py cannot parse is logged and skipped instead of ending the gateway.

Across processes (STUDYBOT_DISCORD_SHARDS) the client is `discord_shards.PacedShards`'s.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from functools import partial
from typing import Any

import aiohttp
import discord
import yarl
from discord import app_commands
from discord.ext import commands

from adapters.discord_commands import CatalogueTranslator, slash_command
from adapters.discord_payloads import (
    BUTTON_PREFIX,
    FORM_PREFIX,
    PLATFORM,
    AnswerModal,
    ChoiceButton,
    RawInteractions,
    cut_value,
    digest,
    inert,
    interaction_data,
    message_kwargs,
    place_of,
    render,
    resolve_role_names,
    submitted_text,
)
from adapters.discord_settings import DiscordSettings
from adapters.discord_shards import IDENTIFY_WINDOW, IdentifyPacer, PacedShards, shard_options, shards_said
from adapters.log_guard import Unsaid, clean
from adapters.replies import ChatAdapter, Inbound
from bot.core.errors import DeliveryFailed, PlatformRejected, PlatformUnreachable
from bot.core.messages import (
    Actor,
    Audience,
    ChoiceMade,
    Cohort,
    Command,
    MessageRef,
    Place,
    Reply,
    TextSubmitted,
)
from bot.core.suggest import no_such_command
from bot.kit.commands import CommandSpec
from bot.runtime.app import StudyBot

log = logging.getLogger("studybot.discord")

UNKNOWN_INTERACTION = 10062
UNDELIVERABLE = {  # keyed by "was it a public post?"
    False: "I could not send you a direct message. Allow direct messages from server members "
           "(Privacy Settings), then try again.",
    True: "I could not post in this channel. Ask an admin to let studybot send messages and attach files here.",
}
NOT_OURS = "That control is not studybot's (or no longer works). Type /help to see the commands."


def apply_urls(api_url: str, gateway_url: str) -> None:
    """Point discord.py's REST, webhook and gateway traffic at the configured URLs.

    discord.py has no public setting for these; both are class attributes read when a
    request or connection is made, and this is the one place studybot sets them."""
    discord.http.Route.BASE = api_url.rstrip("/")
    discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY = yarl.URL(gateway_url)


# ------------------------------------------------------------ the discord.py client


class StudyClient(commands.Bot):
    """The discord.py bot: registers the slash commands and the button template, syncs the tree."""

    def __init__(self, adapter: DiscordAdapter, *, guild_ready_timeout: float = 2.0, **shards: Any) -> None:
        discord.VoiceClient.warn_nacl = discord.VoiceClient.warn_dave = False  # studybot has no voice: no warnings
        client_log = logging.getLogger("discord.client")
        if not any(isinstance(f, Unsaid) for f in client_log.filters):  # said at every attempt to connect
            client_log.addFilter(Unsaid("logging in using static token"))
        super().__init__(
            **shards,
            command_prefix=commands.when_mentioned,
            help_command=None,
            intents=discord.Intents.default(),
            guild_ready_timeout=guild_ready_timeout,
            chunk_guilds_at_startup=False,
            allowed_mentions=discord.AllowedMentions.none(),
        )
        self.adapter = adapter
        for spec in adapter.bot.commands.values():
            self.tree.add_command(slash_command(spec, adapter))
        self.tree.error(self._on_tree_error)

    async def setup_hook(self) -> None:
        self.adapter.raw.install(self._connection.parsers)
        self.add_dynamic_items(ChoiceButton)
        if not self.adapter.settings.syncs_commands:
            return  # the process with shard 0 syncs them
        await self.tree.set_translator(CatalogueTranslator())  # the descriptions in every shipped language
        guilds = self.adapter.settings.sync_guilds
        if not guilds:
            await self.tree.sync()
            return
        for guild_id in guilds:
            guild = discord.Object(id=guild_id)
            self.tree.copy_global_to(guild=guild)
            await self.tree.sync(guild=guild)

    async def on_ready(self) -> None:
        self.adapter.healthy = True

    async def on_resumed(self) -> None:
        self.adapter.healthy = True

    async def on_guild_available(self, guild: discord.Guild) -> None:
        self.adapter.resolve_roles(guild)

    async def on_guild_join(self, guild: discord.Guild) -> None:
        self.adapter.resolve_roles(guild)

    async def on_interaction(self, interaction: discord.Interaction) -> None:
        """Modal submissions by custom_id; a control that is not studybot's gets a short note
        (discord.py would drop it silently and the user see "This interaction failed")."""
        custom_id = str(interaction_data(interaction).get("custom_id", ""))
        if interaction.type is discord.InteractionType.modal_submit:
            if custom_id.startswith(FORM_PREFIX):
                await self.adapter.on_form(interaction, custom_id[len(FORM_PREFIX) :])
            else:
                await _note(interaction, NOT_OURS)
        elif interaction.type is discord.InteractionType.component:
            is_button = interaction_data(interaction).get("component_type") == discord.ComponentType.button.value
            if not (is_button and custom_id.startswith(BUTTON_PREFIX) and interaction.message is not None):
                await _note(interaction, NOT_OURS)

    async def _on_tree_error(self, interaction: discord.Interaction, error: app_commands.AppCommandError) -> None:
        if isinstance(error, app_commands.CommandNotFound):
            log.info("discord sent a command studybot does not have (%s)", clean(error.name, 40))
            await _note(interaction, no_such_command(clean(error.name, 40), self.adapter.bot.commands, here=" here"))
            return
        log.error("discord command %s failed: %s", clean(interaction.command and interaction.command.name, 40),
                  type(getattr(error, "original", error)).__name__)


class ShardedStudyClient(StudyClient, PacedShards):
    """The same bot on discord.py's AutoShardedBot: this process's shards of the bot's total."""

    def __init__(self, adapter: DiscordAdapter, **options: Any) -> None:
        self.pacer = adapter.pacer
        super().__init__(adapter, **options)


async def _note(interaction: discord.Interaction, text: str) -> None:
    """A private note as the interaction's response (empty suggestions for an autocomplete)."""
    try:
        if interaction.response.is_done():
            return
        if interaction.type is discord.InteractionType.autocomplete:
            await interaction.response.autocomplete([])
        else:
            await interaction.response.send_message(text, ephemeral=True)
    except discord.HTTPException as exc:
        log.warning("discord refused a note: HTTP %s code %s", exc.status, exc.code)
    except (TypeError, AttributeError, KeyError) as exc:  # a payload without a channel or user to answer
        log.warning("discord interaction %s cannot be answered (%s)", interaction.id, type(exc).__name__)


# ------------------------------------------------------------ the adapter


class DiscordInteraction:
    """An interaction: its response answers it (a modal, a message or a deferral); followups say the rest."""

    form_answers = True

    def __init__(self, interaction: discord.Interaction) -> None:
        self.interaction = interaction
        self.command = interaction.type is discord.InteractionType.application_command
        self.opens_forms = interaction.type is not discord.InteractionType.modal_submit
        self.answers: tuple[Audience, ...] = (Audience.PRIVATE, Audience.PUBLIC) if self.command else (
            Audience.PRIVATE,)

    async def open_form(self, reply: Reply) -> bool:
        assert reply.form is not None
        return await self._respond(self.interaction.response.send_modal(inert(AnswerModal(reply.form))))

    async def answer(self, reply: Reply | None, *, more: bool) -> bool | MessageRef:
        response = self.interaction.response
        if reply is None and more:
            return await self._respond(response.defer(ephemeral=True, thinking=True))
        if reply is None:
            return await self._respond(response.send_message("Done.", ephemeral=True) if self.command
                                       else response.defer())
        if reply.audience is Audience.PRIVATE:
            return await self._respond(response.send_message(ephemeral=True, **message_kwargs(reply)))
        try:
            sent = await response.send_message(**message_kwargs(reply))
        except discord.HTTPException as exc:
            return self._refused(exc)
        channel_id = reply.place.channel_id if reply.place else None
        return MessageRef(PLATFORM, channel_id, str(sent.message_id)) if sent.message_id and channel_id else True

    async def say(self, reply: Reply) -> None:
        await self.interaction.followup.send(ephemeral=True, **message_kwargs(reply))

    async def fail(self, text: str) -> None:
        if self.interaction.response.is_done():
            await self.interaction.followup.send(text, ephemeral=True)
        else:
            await self.interaction.response.send_message(text, ephemeral=True)

    async def _respond(self, response: Awaitable[Any]) -> bool:
        """The interaction's response sent; False when Discord refused it (logged, not raised)."""
        try:
            await response
        except discord.HTTPException as exc:
            return self._refused(exc)
        return True

    def _refused(self, exc: discord.HTTPException) -> bool:
        if exc.code == UNKNOWN_INTERACTION:
            log.warning("discord interaction %s expired before the bot answered (code 10062); "
                        "what was recorded stays recorded", self.interaction.id)
        else:
            log.warning("discord refused the response to interaction %s: HTTP %s code %s",
                        self.interaction.id, exc.status, exc.code)
        return False


class DiscordAdapter(ChatAdapter):
    """studybot on Discord: `start()` logs in, syncs the commands and returns once the gateway is READY.

    Raises PlatformRejected when Discord refuses DISCORD_TOKEN and PlatformUnreachable when the
    REST API or the gateway cannot be reached in time. A connection that ends with an error
    discord.py does not handle itself is opened again after `reconnect_delay`, doubling up to a
    minute while connections fail before READY, and back to the start after a healthy one."""

    platform = PLATFORM
    title = "Discord"
    failures = (discord.HTTPException, aiohttp.ClientError, OSError, TimeoutError)
    undeliverable = UNDELIVERABLE

    def __init__(self, bot: StudyBot, settings: DiscordSettings, *, guild_ready_timeout: float = 2.0,
                 ready_timeout: float = 30.0, reconnect_delay: float = 1.0,
                 identify_window: float = IDENTIFY_WINDOW) -> None:
        super().__init__(bot)
        self.settings = settings
        self.pacer = IdentifyPacer(bot.store.engine, identify_window)
        self._logging_in = False  # AutoShardedBot can be closed only once login began
        self.ready_timeout = ready_timeout
        self.reconnect_delay = reconnect_delay
        self.reconnect_delays: list[float] = []  # each wait before a reconnect, for the log and tests
        self.healthy = False  # set once a connection reached READY (or RESUMED)
        self.raw = RawInteractions()
        self.client = (ShardedStudyClient(self, guild_ready_timeout=guild_ready_timeout, **shard_options(settings))
                       if settings.sharded else StudyClient(self, guild_ready_timeout=guild_ready_timeout))
        self._roles: dict[int, frozenset[str]] = {}  # guild id -> resolved role ids of configured names
        self._fatal: BaseException | None = None
        self._supervisor: asyncio.Task[None] | None = None

    # -------------------------------------------------------- lifecycle

    async def connect(self) -> None:
        if self.settings.token is None:
            raise PlatformRejected("DISCORD_TOKEN is not set: copy the bot token from the Developer Portal")
        apply_urls(self.settings.api_url, self.settings.gateway_url)
        self._logging_in = True
        try:
            async with asyncio.timeout(self.ready_timeout):
                await self.client.login(self.settings.token.reveal())
        except discord.LoginFailure:
            raise PlatformRejected("DISCORD_TOKEN was refused by Discord (401 Unauthorized): "
                                   "copy the bot token again (Developer Portal, Bot, Reset Token)") from None
        except (OSError, TimeoutError, aiohttp.ClientError, discord.HTTPException, RuntimeError) as exc:
            raise PlatformUnreachable(f"cannot reach Discord at {self.settings.api_url} ({_why(exc)}): "
                                      "check the network or DISCORD_API_URL") from None
        if self._closing:
            return
        self._supervisor = asyncio.create_task(self._stay_connected(), name="discord-gateway")
        ready = asyncio.create_task(self.client.wait_until_ready())
        try:
            done, _ = await asyncio.wait({self._supervisor, ready}, timeout=self.ready_timeout,
                                         return_when=asyncio.FIRST_COMPLETED)
        finally:
            ready.cancel()
        if ready in done and not self._closing:
            user = self.client.user
            log.info("discord connected as @%s in %d server(s)%s", clean(user.name if user else "?"),
                     len(self.client.guilds), shards_said(self.settings))
            return
        fatal = self._fatal
        if self._closing:
            return
        refused = isinstance(fatal, discord.ConnectionClosed) and fatal.code == 4004
        if refused or isinstance(fatal, discord.LoginFailure):
            raise PlatformRejected("DISCORD_TOKEN was refused by the Discord gateway (4004 Authentication "
                                   "failed): copy the bot token again")
        if fatal is not None:
            raise PlatformRejected(f"Discord ended the gateway connection ({_why(fatal)}): check the bot's "
                                   "settings in the Developer Portal")
        raise PlatformUnreachable(f"the Discord gateway at {self.settings.gateway_url} did not become ready within "
                                  f"{self.ready_timeout:g} s: check the network or DISCORD_GATEWAY_URL")

    async def _stay_connected(self) -> None:
        """Keep the gateway open. discord.py reconnects after network trouble itself; what escapes
        `connect()` is either fatal (a refused token, a close code it will not resume from: the
        client is then closed) or something it could not read, after which a fresh connection is
        opened."""
        delay = self.reconnect_delay
        while not self.client.is_closed():
            self.healthy = False
            try:
                await self.client.connect()
                return  # connect() returns only once the client is closed
            except (discord.LoginFailure, discord.PrivilegedIntentsRequired, discord.ConnectionClosed) as exc:
                self._fatal = exc
                log.error("the Discord gateway refused the connection (%s); not reconnecting", _why(exc))
                await self.client.close()
                return
            except Exception as exc:
                if self.client.is_closed():
                    return
                if self.healthy:
                    delay = self.reconnect_delay
                log.warning("the Discord gateway connection failed (%s: %s); reconnecting in %.1f s",
                            type(exc).__name__, clean(exc, 60), delay)
            ws = self.client.ws
            if ws is not None:
                await ws.close(code=4000)
            self.reconnect_delays.append(delay)
            await asyncio.sleep(delay)
            delay = min(delay * 2, 60.0)

    async def disconnect(self) -> None:
        """Close the gateway and the HTTP session."""
        await self.pacer.close()
        if self._logging_in or not self.settings.sharded:
            await self.client.close()
        supervisor, self._supervisor = self._supervisor, None
        if supervisor is not None and supervisor is not asyncio.current_task():
            try:
                await asyncio.wait_for(supervisor, 10)
            except Exception:  # the connection's own failure was logged
                log.debug("discord connection ended with an error", exc_info=True)

    # -------------------------------------------------------- who, and where

    def resolve_roles(self, guild: discord.Guild) -> None:
        """Resolve the configured role names to this guild's role ids, once per guild (when it
        first becomes available): a role created or renamed later does not become one."""
        if guild.id in self._roles:
            return
        names = frozenset(r for r in self.settings.instructor_roles if not r.isdecimal())
        found, warnings = resolve_role_names(names, [(str(r.id), r.name) for r in guild.roles])
        for warning in warnings:
            log.warning("discord server %s: %s", guild.id, warning)
        self._roles[guild.id] = found

    def _actor(self, interaction: discord.Interaction) -> tuple[Actor, Place]:
        """Who acted, with the role ids the payload itself carries, and where. An instructor by
        user id (listed for this guild, or everywhere), or by holding one of the configured role
        ids or the ids configured role names were resolved to in this guild (a name never counts)."""
        roles, channel_id = self.raw.take(interaction.id)
        user = interaction.user
        cohort = str(interaction.guild_id) if interaction.guild_id else ""
        allowed = {r for r in self.settings.instructor_roles if r.isdecimal()}
        allowed |= self._roles.get(interaction.guild_id or 0, frozenset())
        teacher = self.bot.settings.instructors.listed(Cohort(PLATFORM, cohort), str(user.id)) or bool(roles & allowed)
        actor = Actor(PLATFORM, cohort, str(user.id), user.display_name, teacher, str(interaction.locale))
        return actor, place_of(interaction, channel_id)

    async def resolve_choice(self, spec: CommandSpec, option: str, value: str | None) -> str | None:
        """An autocomplete value back to the name it stands for (see `choice_value`)."""
        cut = cut_value(value) if isinstance(value, str) else None
        if cut is None:
            return value
        prefix, wanted = cut
        for name in await self.bot.suggest(spec.name, option, prefix):
            if digest(name) == wanted:
                return name
        return prefix

    # -------------------------------------------------------- inbound

    async def on_command(self, interaction: discord.Interaction, name: str, args: str) -> None:
        await self._handle(interaction, partial(Command, name, args))

    async def on_choice(self, interaction: discord.Interaction, token: str) -> None:
        await self._handle(interaction, partial(ChoiceMade, token))

    async def on_form(self, interaction: discord.Interaction, token: str) -> None:
        text = submitted_text(interaction_data(interaction).get("components"))
        await self._handle(interaction, partial(TextSubmitted, token, text))

    async def _handle(self, interaction: discord.Interaction, make: Callable[[Actor, Place], Inbound]) -> None:
        async def event() -> Inbound:
            return make(*self._actor(interaction))

        await self.handle(DiscordInteraction(interaction), event)

    # -------------------------------------------------------- Outbox

    async def send(self, reply: Reply) -> MessageRef | None:
        """Post a reply: in its channel when public, else (or in a DM context) to its user by DM.
        A refusal for good (DMs closed, no access, channel gone) is a permanent DeliveryFailed."""
        if reply.audience is Audience.PUBLIC and reply.place is not None and reply.place.channel_id:
            channel: discord.abc.Messageable = self.client.get_partial_messageable(int(reply.place.channel_id))
        elif reply.to is not None:
            with self.refusals(_for_good):
                channel = await self.client.create_dm(discord.Object(id=int(reply.to.user_id)))
        else:
            log.warning("a %s reply has no channel and no recipient; not sent", reply.audience)
            return None
        with self.refusals(_for_good):
            message = await channel.send(**message_kwargs(reply))
        return MessageRef(PLATFORM, str(message.channel.id), str(message.id))

    async def channel_problem(self, place: Place) -> str | None:
        """Why studybot could not post in this server's channel (fetched: its server and its
        permissions), else None."""
        channel_id = place.channel_id or ""
        if not channel_id.isdecimal():
            return "not a Discord channel id (a number, from Copy Channel ID)"
        try:
            channel = await self.client.fetch_channel(int(channel_id))
        except discord.HTTPException as exc:
            return f"HTTP {exc.status} code {exc.code}"
        if isinstance(channel, discord.abc.GuildChannel) and str(channel.guild.id) != place.cohort:
            return f"the channel is in another server ({channel.guild.id}), not in {place.cohort}"
        if isinstance(channel, discord.abc.GuildChannel) and channel.guild.me is not None:
            allowed = channel.permissions_for(channel.guild.me)
            if not (allowed.view_channel and allowed.send_messages):
                return "studybot lacks the View Channel or Send Messages permission there"
        return None

    async def edit(self, ref: MessageRef, reply: Reply) -> None:
        """Replace an earlier message's text and buttons (no choices: the buttons go)."""
        content, view = render(reply)
        message = self.client.get_partial_messageable(int(ref.channel_id)).get_partial_message(int(ref.message_id))
        try:
            with self.refusals(_for_good):
                await message.edit(content=content, view=view)
        except DeliveryFailed as exc:
            if not isinstance(exc.__cause__, discord.NotFound):
                raise
            log.warning("discord message to edit is gone: %s", _why(exc.__cause__))  # deleted meanwhile

    def why(self, exc: BaseException) -> str:
        return _why(exc) if isinstance(exc, discord.HTTPException) else super().why(exc)


def _for_good(exc: BaseException) -> str | None:
    """Discord's refusals for good: no access (403) or no such channel, user or message (404)."""
    return f"HTTP {exc.status} code {exc.code}" if isinstance(exc, discord.Forbidden | discord.NotFound) else None


def _why(exc: BaseException) -> str:
    """A failure as a short log token."""
    if isinstance(exc, discord.ConnectionClosed):
        return f"close code {exc.code}"
    if isinstance(exc, discord.HTTPException):
        return f"HTTP {exc.status}"
    return type(exc).__name__
