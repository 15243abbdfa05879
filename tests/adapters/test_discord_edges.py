"""The Discord adapter at its edges: instructor roles by id only, payloads discord.py cannot read,
the reconnect delay, mentions, deliveries that fail after the reply, and close() during start()."""

from __future__ import annotations

import asyncio
import logging
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from readiness import READY_WITHIN
from support import CORE_PACK
from test_discord_app import private_reply
from worst_case import LONG_TERM, worst_case_pack

from adapters.discord_app import DiscordAdapter
from adapters.discord_settings import DiscordSettings
from bot.core.clock import FixedClock
from bot.core.config import Secret, Settings
from bot.core.messages import Place
from bot.runtime.app import StudyBot
from bot.runtime.scheduler import fire_due
from standins.discord_standin import FakeMember, FakeRole

ALICE, BOB, CAROL = "4444", "5555", "6666"  # carol holds the Instructor role (7777)


async def running(tmp_path: Path, fake: Any, roles: frozenset[str], content: Path = CORE_PACK,
                  **knobs: Any) -> tuple[StudyBot, DiscordAdapter]:
    settings = Settings(db_path=tmp_path / "bot.db", content_dir=content, results_dir=tmp_path / "results")
    bot = await StudyBot.start(settings, FixedClock("2026-11-30T09:00:00+00:00"))
    adapter = DiscordAdapter(bot, DiscordSettings(token=Secret(fake.token), api_url=fake.api_base,
                                                  gateway_url=fake.gateway_url, instructor_roles=roles),
                             **{"guild_ready_timeout": 0.05, **knobs})
    await adapter.start()
    return bot, adapter


async def stop(bot: StudyBot, adapter: DiscordAdapter) -> None:
    await adapter.close()
    await bot.close()


async def post_board(fake: Any, user: str, **changes: Any) -> str:
    body = fake.slash("leaderboard", {"action": "post"}, user_id=user)
    body.update(changes)
    result = await fake.interact(body)
    return (await private_reply(fake, result))["content"]


async def test_roles_count_by_id_never_by_name(tmp_path: Path, discord_fake: Any,
                                               caplog: pytest.LogCaptureFixture) -> None:
    """A configured name resolves to the guild's role id at start-up; a second role of that name
    makes the name ambiguous (neither counts, with a warning); a role *named* like a configured id
    is not that role; an uncached guild's member is judged by the role ids in the payload."""
    fake = discord_fake
    fake.roles.append(FakeRole("8888", "Instructor"))  # anyone with Manage Roles can make one
    fake.roles.append(FakeRole("9999", "1212"))  # named like the configured id below
    fake.members.append(FakeMember("7070", "mallory", ["8888", "9999"]))
    caplog.set_level(logging.WARNING)
    bot, adapter = await running(tmp_path, fake, frozenset({"Instructor", "1212"}))
    try:
        assert any("2 roles are named 'Instructor'" in r.getMessage() for r in caplog.records)
        assert (await post_board(fake, CAROL)).startswith("Only instructors")  # the name is ambiguous now
        assert (await post_board(fake, "7070")).startswith("Only instructors")
        uncached = fake.slash("leaderboard", {"action": "post"}, user_id=BOB, roles=["1212"])
        uncached.update(guild_id="31337")
        uncached.pop("channel")  # only channel_id, as in Discord's own example
        uncached["member"].pop("flags")
        result = await fake.interact(uncached)
        assert (await private_reply(fake, result))["content"] == "Posted."
    finally:
        await stop(bot, adapter)


async def test_a_role_name_resolves_to_its_id(tmp_path: Path, discord_fake: Any) -> None:
    fake = discord_fake
    bot, adapter = await running(tmp_path, fake, frozenset({"Instructor"}))
    try:
        assert await post_board(fake, CAROL) == "Posted."
        assert (await post_board(fake, ALICE)).startswith("Only instructors")
    finally:
        await stop(bot, adapter)


async def test_every_message_goes_out_with_mentions_disabled(tmp_path: Path, discord_fake: Any) -> None:
    fake = discord_fake
    fake.members[0].name = "@everyone"
    bot, adapter = await running(tmp_path, fake, frozenset({"Instructor"}))
    try:
        quiz = await fake.interact(fake.slash("quiz", user_id=ALICE))
        await fake.interact(fake.component(quiz.message["components"][0]["components"][0]["custom_id"],
                                           quiz.message, user_id=ALICE))
        assert await post_board(fake, CAROL) == "Posted."
        started = await fake.interact(fake.slash("quiz", {"mode": "round"}, user_id=CAROL))
        await private_reply(fake, started)
    finally:
        await stop(bot, adapter)
    bodies = [c.json for c in fake.calls if c.method in ("POST", "PATCH") and isinstance(c.json, dict)
              and ("content" in c.json or "content" in (c.json.get("data") or {}))]
    assert len(bodies) >= 5
    for body in bodies:
        data = body.get("data", body)
        assert data["allowed_mentions"] == {"parse": []}, data


async def test_a_file_that_fails_after_the_reply_is_reported(tmp_path: Path, discord_fake: Any) -> None:
    fake = discord_fake
    bot, adapter = await running(tmp_path, fake, frozenset())
    try:
        fake.inject("POST", r"/channels/\d+/messages", 503, {"message": "Service Unavailable", "code": 0})
        sent = await fake.interact(fake.slash("results", user_id=ALICE))
        said = (await private_reply(fake, sent))["content"]
        assert "check your direct messages" not in said and "HTTP 503" in said
    finally:
        await stop(bot, adapter)


async def test_an_unreadable_dispatch_before_ready_does_not_stop_start_up(tmp_path: Path, discord_fake: Any) -> None:
    fake = discord_fake
    settings = Settings(db_path=tmp_path / "bot.db", content_dir=CORE_PACK, results_dir=tmp_path / "results")
    bot = await StudyBot.start(settings, FixedClock("2026-11-30T09:00:00+00:00"))
    adapter = DiscordAdapter(bot, DiscordSettings(token=Secret(fake.token), api_url=fake.api_base,
                                                  gateway_url=fake.gateway_url), guild_ready_timeout=0.5)
    starting = asyncio.create_task(adapter.start())
    try:
        await asyncio.wait_for(fake.identified.wait(), READY_WITHIN)
        broken = {"id": fake.snowflake(), "token": "t", "type": 2, "data": {}}  # no application_id, no version
        await fake.dispatch("INTERACTION_CREATE", broken)  # in the wait for guilds, before on_ready
        await fake.dispatch("GUILD_MEMBER_UPDATE", {"guild_id": fake.guild_id})
        await asyncio.wait_for(starting, 10)
        result = await fake.interact(fake.slash("glossary", {"term": "MFU"}))
        assert "MFU" in result.data["content"]
        assert [f["op"] for f in fake.gateway_frames].count(2) == 1  # the same connection throughout
    finally:
        await stop(bot, adapter)


async def test_the_reconnect_delay_starts_over_after_a_healthy_connection(tmp_path: Path, discord_fake: Any) -> None:
    fake = discord_fake
    bot, adapter = await running(tmp_path, fake, frozenset(), reconnect_delay=0.01)
    try:
        fake.garbage_before_ready = 2  # the next two connections fail before READY
        fake.identified.clear()
        await fake.send_garbage()  # the healthy connection fails
        await asyncio.wait_for(fake.identified.wait(), READY_WITHIN)
        while not adapter.healthy:  # READY, and the guilds are in
            await asyncio.sleep(0.01)
        await fake.send_garbage()  # and once more, after a healthy connection
        while len(adapter.reconnect_delays) < 4:
            await asyncio.sleep(0.01)
        assert adapter.reconnect_delays == [0.01, 0.02, 0.04, 0.01]
        fake.identified.clear()
        await asyncio.wait_for(fake.identified.wait(), READY_WITHIN)
        result = await fake.interact(fake.slash("help"))
        assert "/quiz" in result.data["content"]
    finally:
        await stop(bot, adapter)


async def test_close_during_start_is_safe(tmp_path: Path, discord_fake: Any) -> None:
    fake = discord_fake
    settings = Settings(db_path=tmp_path / "bot.db", content_dir=CORE_PACK, results_dir=tmp_path / "results")
    bot = await StudyBot.start(settings, FixedClock("2026-11-30T09:00:00+00:00"))
    try:
        for moment in ("logging in", "waiting for guilds"):
            adapter = DiscordAdapter(bot, DiscordSettings(token=Secret(fake.token), api_url=fake.api_base,
                                                          gateway_url=fake.gateway_url), guild_ready_timeout=5)
            starting = asyncio.create_task(adapter.start())
            if moment == "waiting for guilds":
                fake.identified.clear()
                await asyncio.wait_for(fake.identified.wait(), READY_WITHIN)
            else:
                await asyncio.sleep(0)
            await adapter.close()
            assert await asyncio.wait_for(starting, 10) is None
            assert adapter.client.is_closed()
            fake.reset_connection_state()
    finally:
        await bot.close()


async def test_a_long_term_from_autocomplete_resolves(tmp_path: Path, discord_fake: Any) -> None:
    fake = discord_fake
    bot, adapter = await running(tmp_path, fake, frozenset(), content=worst_case_pack(tmp_path))
    try:
        offered = await fake.interact(fake.autocomplete("glossary", "term", "Zero Redundancy"))
        [choice] = [c for c in offered.data["choices"] if c["name"].startswith("Zero Redundancy")]
        assert len(choice["name"]) <= 100 and len(choice["value"]) <= 100 and len(LONG_TERM) > 100
        looked_up = await fake.interact(fake.slash("glossary", {"term": choice["value"]}))
        assert looked_up.data["content"].startswith(f"**{LONG_TERM}**")
    finally:
        await stop(bot, adapter)


async def test_a_channel_the_bot_lost_access_to_ends_the_round_and_tells_its_starter(
        tmp_path: Path, discord_fake: Any) -> None:
    """A 403 on the round's channel is for good: the timer is given up at once with its reason, the
    round is closed (the channel is free again), the starter hears why by DM, and nothing is retried."""
    fake = discord_fake
    bot, adapter = await running(tmp_path, fake, frozenset())
    try:
        started = await fake.interact(fake.slash("quiz", {"mode": "round"}))
        assert "Round started" in (await private_reply(fake, started))["content"]
        await fake.wait_for_call("POST", rf"/channels/{fake.channel_id}/messages")
        missing = {"message": "Missing Access", "code": 50001}
        fake.inject("PATCH", rf"/channels/{fake.channel_id}/messages/\d+", 403, missing)
        fake.inject("POST", rf"/channels/{fake.channel_id}/messages", 403, missing)
        bot.ctx.clock.advance(61)  # type: ignore[attr-defined]
        assert await fire_due(bot, {"discord": adapter}) == 1
        [given_up] = await bot.store.timers.given_up(bot.ctx.clock.now() - timedelta(hours=1))
        assert given_up.timer.startswith("round:") and "HTTP 403 code 50001" in given_up.reason
        dm = next(c for c in fake.calls_matching("POST", r"/channels/\d+/messages")
                  if c.json and "was stopped at question 2" in c.json.get("content", ""))
        assert dm.path != f"/api/v10/channels/{fake.channel_id}/messages"
        bot.ctx.clock.advance(3600)  # type: ignore[attr-defined]
        assert await fire_due(bot, {"discord": adapter}) == 0
        again = await fake.interact(fake.slash("quiz", {"mode": "round"}))
        assert "Round started" in (await private_reply(fake, again))["content"]
    finally:
        await stop(bot, adapter)


async def test_configured_channels_are_checked_by_fetching_them(tmp_path: Path, discord_fake: Any) -> None:
    fake = discord_fake
    muted = fake.add_text_channel("announcements")
    elsewhere = fake.add_text_channel("another-server")
    fake._channels[elsewhere]["guild_id"] = "9090"  # a channel id copied from another server
    fake._channels[muted]["permission_overwrites"] = [  # @everyone may read but not send (Discord's overwrite)
        {"id": fake.guild_id, "type": 0, "allow": "0", "deny": str(1 << 11)}]
    bot, adapter = await running(tmp_path, fake, frozenset())

    async def problem(channel: str) -> str | None:
        return await adapter.channel_problem(Place("discord", fake.guild_id, channel))

    try:
        assert await problem(fake.channel_id) is None
        assert await problem(muted) == "studybot lacks the View Channel or Send Messages permission there"
        assert await problem("123456789") == "HTTP 404 code 10003"
        assert await problem(elsewhere) == f"the channel is in another server (9090), not in {fake.guild_id}"
        assert (await problem("#general") or "").startswith("not a Discord channel id")
        assert [c.path for c in fake.calls_matching("GET", r"/channels/\d+")] == [
            f"/channels/{fake.channel_id}", f"/channels/{muted}", "/channels/123456789", f"/channels/{elsewhere}"]
    finally:
        await stop(bot, adapter)


async def test_a_command_studybot_does_not_have_is_told_the_closest_one(tmp_path: Path, discord_fake: Any) -> None:
    """A stale or mistyped command Discord still sends (CommandNotFound) gets the closest one, as everywhere."""
    fake = discord_fake
    bot, adapter = await running(tmp_path, fake, frozenset())
    try:
        payload = fake.slash("quiz")
        payload["data"].update(name="quizz", id=fake.snowflake())
        result = await fake.interact(payload)
        assert result.data["content"] == ("There is no command /quizz here (did you mean /quiz?). Type /help to see "
                                          "the commands.")
    finally:
        await stop(bot, adapter)
