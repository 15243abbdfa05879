"""The Discord stand-in against the real discord.py: login, sync, gateway, interactions, limits."""

from __future__ import annotations

import asyncio
import io
import time

import aiohttp
import discord
import pytest
from discord import app_commands
from discord.ext import commands

from standins.discord_standin import DiscordStandIn, running_bot

TERMS = ["derivative", "determinant", "integral"]


class PingView(discord.ui.View):
    """One button with a stable custom_id."""

    def __init__(self) -> None:
        super().__init__(timeout=None)
        self.clicked = asyncio.Event()

    @discord.ui.button(label="Again", custom_id="ping:again", style=discord.ButtonStyle.primary)
    async def again(self, interaction: discord.Interaction, button: discord.ui.Button) -> None:
        self.clicked.set()
        await interaction.response.edit_message(content="pong again", view=None)


class TeachModal(discord.ui.Modal, title="Teach it back"):
    """A modal mixing a label-wrapped input (type 18) and a plain one (action row)."""

    answer = discord.ui.Label(text="Your explanation", component=discord.ui.TextInput(custom_id="teach:answer"))
    confidence = discord.ui.TextInput(label="Confidence", custom_id="teach:conf", required=False)

    async def on_submit(self, interaction: discord.Interaction) -> None:
        text = self.answer.component.value  # type: ignore[attr-defined]
        await interaction.response.send_message(f"got: {text} ({self.confidence.value or '-'})")


class ProbeBot(commands.Bot):
    """A bare commands.Bot with a few app commands; syncs them in setup_hook."""

    def __init__(self) -> None:
        super().__init__(
            command_prefix="!",
            intents=discord.Intents.default(),
            guild_ready_timeout=0.05,
            chunk_guilds_at_startup=False,
        )
        self.views: list[PingView] = []
        self.app_errors: list[app_commands.AppCommandError] = []

        @self.tree.command(description="Answer pong")
        async def ping(interaction: discord.Interaction) -> None:
            view = PingView()
            self.views.append(view)
            await interaction.response.send_message("pong", ephemeral=True, view=view)

        @self.tree.command(description="Answers too late")
        async def slow(interaction: discord.Interaction) -> None:
            await asyncio.sleep(0.4)
            await interaction.response.send_message("late")

        @self.tree.command(description="Explain a concept")
        async def teach(interaction: discord.Interaction) -> None:
            await interaction.response.send_modal(TeachModal())

        @self.tree.command(description="Look up a term")
        async def define(interaction: discord.Interaction, term: str) -> None:
            await interaction.response.defer(thinking=True)
            await interaction.followup.send(f"{term}: see notes", file=discord.File(io.BytesIO(b"notes"), "notes.txt"))

        @define.autocomplete("term")
        async def define_term(interaction: discord.Interaction, current: str) -> list[app_commands.Choice[str]]:
            return [app_commands.Choice(name=t, value=t) for t in TERMS if t.startswith(current)]

        @self.tree.error
        async def on_app_error(interaction: discord.Interaction, error: app_commands.AppCommandError) -> None:
            self.app_errors.append(error)

    async def setup_hook(self) -> None:
        await self.tree.sync()


@pytest.fixture
async def bot(discord_fake: DiscordStandIn):  # noqa: F811
    """A ProbeBot logged in, synced and ready against the stand-in."""
    async with running_bot(ProbeBot(), discord_fake) as b:
        yield b


async def test_login_sync_and_ready(bot: ProbeBot, discord_fake: DiscordStandIn) -> None:  # noqa: F811
    fake = discord_fake
    assert [c.path for c in fake.calls[:3]] == [
        "/users/@me",
        "/oauth2/applications/@me",
        f"/applications/{fake.app_id}/commands",
    ]
    put = fake.calls_matching("PUT", rf"/applications/{fake.app_id}/commands")[0]
    assert {c["name"] for c in put.json} == {"ping", "slow", "teach", "define"}
    assert all(c.headers["Authorization"] == f"Bot {fake.token}" for c in fake.calls)
    assert fake.identified.is_set() and bot.application_id == int(fake.app_id)
    guild = bot.get_guild(int(fake.guild_id))
    assert guild is not None and guild.get_channel(int(fake.channel_id)) is not None
    assert guild.get_role(int(fake.instructor_role_id)).name == "Instructor"
    assert [f["op"] for f in fake.gateway_frames[:2]] == [1, 2]


async def test_ping_then_button_click(bot: ProbeBot, discord_fake: DiscordStandIn) -> None:  # noqa: F811
    fake = discord_fake
    result = await fake.interact(fake.slash("ping"))
    assert result.status == 200 and result.type == 4
    assert result.data["content"] == "pong" and result.data["flags"] == 64
    assert result.data["components"][0]["components"][0]["custom_id"] == "ping:again"
    message = result.message
    assert message is not None and message["flags"] & 64

    click = await fake.interact(fake.component("ping:again", message))
    await asyncio.wait_for(bot.views[0].clicked.wait(), 1)
    assert click.type == 7 and click.data["content"] == "pong again"
    assert fake.messages[message["id"]]["components"] == []
    with pytest.raises(ValueError):  # the button is gone from the edited message
        fake.component("ping:again", message)


async def test_late_first_callback_is_unknown_interaction(
    bot: ProbeBot,
    discord_fake: DiscordStandIn,  # noqa: F811
) -> None:
    fake = discord_fake
    fake.initial_response_deadline_s = 0.2
    result = await fake.interact(fake.slash("slow"))
    assert (result.status, result.response["code"]) == (404, 10062)
    await fake.wait_for(lambda: bot.app_errors)
    original = bot.app_errors[0].__cause__ or getattr(bot.app_errors[0], "original", None)
    assert isinstance(original, discord.NotFound) and original.code == 10062
    assert fake.callbacks() == []


async def test_second_initial_callback_is_rejected(
    bot: ProbeBot,
    discord_fake: DiscordStandIn,  # noqa: F811
) -> None:
    fake = discord_fake
    payload = fake.slash("ping")
    await fake.interact(payload)
    url = f"{fake.api_base}/interactions/{payload['id']}/{payload['token']}/callback"
    body = {"type": 4, "data": {"content": "again"}}
    async with aiohttp.ClientSession() as session, session.post(url, json=body) as resp:
        assert resp.status == 400 and resp.headers["Content-Type"] == "application/json"
        assert (await resp.json())["code"] == 40060


async def test_rate_limited_send_is_retried(bot: ProbeBot, discord_fake: DiscordStandIn) -> None:  # noqa: F811
    fake = discord_fake
    path = rf"/channels/{fake.channel_id}/messages"
    fake.rate_limit("POST", path, retry_after=0.2)
    started = time.monotonic()
    sent = await bot.get_channel(int(fake.channel_id)).send("hello")
    assert time.monotonic() - started >= 0.2
    assert [c.status for c in fake.calls_matching("POST", path)] == [429, 200]
    assert fake.messages[str(sent.id)]["content"] == "hello"


async def test_wrong_token_is_login_failure(discord_fake: DiscordStandIn) -> None:  # noqa: F811
    with pytest.raises(discord.LoginFailure):
        async with running_bot(ProbeBot(), discord_fake, token="wrong"):
            pass
    assert [(c.path, c.status) for c in discord_fake.calls] == [("/users/@me", 401)]


async def test_modal_autocomplete_defer_followup(
    bot: ProbeBot,
    discord_fake: DiscordStandIn,  # noqa: F811
) -> None:
    fake = discord_fake
    modal = await fake.interact(fake.slash("teach"))
    assert modal.type == 9 and modal.data["custom_id"]
    answer = await fake.interact(fake.modal_submit(modal.data["custom_id"], {"teach:answer": "slopes"}))
    assert answer.data["content"] == "got: slopes (-)"

    choices = await fake.interact(fake.autocomplete("define", "term", "de"))
    assert choices.type == 8
    assert [c["value"] for c in choices.data["choices"]] == ["derivative", "determinant"]

    deferred = await fake.interact(fake.slash("define", {"term": "integral"}))
    assert deferred.type == 5 and deferred.response["interaction"]["response_message_loading"]
    followup = await fake.wait_for_call("POST", rf"/webhooks/{fake.app_id}/[^/]+")
    assert "Authorization" not in followup.headers
    assert followup.json["content"] == "integral: see notes"
    assert followup.files == {"notes.txt": b"notes"}
    # The first followup after a thinking defer replaces the loading message.
    original = fake.messages[deferred.message["id"]]
    assert followup.response["id"] == original["id"] and not original["flags"] & 128
    assert original["attachments"][0]["filename"] == "notes.txt"


async def test_dm_and_resume(bot: ProbeBot, discord_fake: DiscordStandIn) -> None:  # noqa: F811
    fake = discord_fake
    user = await bot.fetch_user(4444)
    await user.send("private", file=discord.File(io.BytesIO(b"x1"), "card.txt"))
    dm = fake.calls_matching("POST", r"/channels/\d+/messages")[-1]
    assert fake.calls_matching("POST", r"/users/@me/channels")[0].json == {"recipient_id": 4444}
    assert dm.json["content"] == "private" and dm.files == {"card.txt": b"x1"}

    await fake.request_reconnect()
    await asyncio.wait_for(fake.resumed.wait(), 2)
    result = await fake.interact(fake.slash("ping"))
    assert result.type == 4
