"""The Slack adapter at its edges: the 3-second acknowledgement, admin lookups under rate limits,
mentions, deliveries that fail, slow and oversized requests, deep JSON, logs, and start-up."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import AsyncIterator
from dataclasses import replace
from datetime import timedelta
from pathlib import Path

import aiohttp
import pytest
from support import CORE_PACK
from test_slack_crash import free_port

from adapters.http_guard import Limits, ReplayGuard
from adapters.slack_app import SlackAdapter
from adapters.slack_settings import SlackSettings
from bot.core.clock import FixedClock
from bot.core.config import Instructors, Secret, Settings
from bot.core.errors import PlatformRejected, PlatformUnreachable
from bot.core.messages import Place
from bot.runtime.app import StudyBot
from bot.runtime.scheduler import fire_due
from standins.slack_standin import (
    FORM,
    SlackStandIn,
    block_actions,
    post_signed,
    sign,
    slash_command,
)

TEACHER = "U0TEACH"


@pytest.fixture
async def bot(tmp_path: Path) -> AsyncIterator[StudyBot]:
    settings = Settings(db_path=tmp_path / "bot.db", content_dir=CORE_PACK, results_dir=tmp_path / "results",
                        instructors=Instructors(everywhere={"slack": frozenset({TEACHER})}))
    bot = await StudyBot.start(settings, FixedClock("2026-11-30T09:00:00+00:00"))
    yield bot
    await bot.close()


@pytest.fixture
async def adapter(bot: StudyBot, slack: SlackSettings) -> AsyncIterator[SlackAdapter]:
    adapter = SlackAdapter(bot, slack, limits=Limits(header_timeout=0.5, body_timeout=0.5, max_connections=4,
                                                     queue_wait=0.2))
    await adapter.start()
    yield adapter
    await adapter.close()


def url(adapter: SlackAdapter) -> str:
    return f"http://127.0.0.1:{adapter.port}/slack/events"


async def private_reply(adapter: SlackAdapter, fake: SlackStandIn, name: str, text: str = "", **fields) -> str:
    status, body = await post_signed(url(adapter), *slash_command(name, text, response_url=fake.response_url(name[1:]),
                                                                   **fields))
    assert status == 200
    await adapter.idle()
    return json.loads(body)["text"] if body else "\n".join(r["text"] for i, r in fake.responses if i == name[1:])


# ------------------------------------------------------------ record, ack, then the rest


async def test_a_slow_response_url_does_not_hold_the_ack(adapter: SlackAdapter, fake: SlackStandIn,
                                                         bot: StudyBot) -> None:
    status, text = await post_signed(url(adapter), *slash_command("/quiz"))
    button = json.loads(text)["blocks"][1]["elements"][0]
    fake.response_gate = asyncio.Event()  # the response_url answers only when the test says so
    click = block_actions(button["action_id"], button["value"], response_url=fake.response_url("slow"))
    status, _ = await asyncio.wait_for(post_signed(url(adapter), *click), 10)
    assert status == 200 and fake.responses == []  # acknowledged while the feedback is still on its way
    assert await bot.store.count("answers") == 1  # and recorded before that
    fake.response_gate.set()
    await adapter.idle()
    assert [i for i, _ in fake.responses] == ["slow"]


async def test_follow_ups_share_a_connection_that_survives_a_slack_restart(adapter: SlackAdapter,
                                                                          fake: SlackStandIn) -> None:
    """Feedback after the ack goes to response_url through one shared HTTP session: one kept-alive
    connection for posts in a row, and after Slack's side restarts the next post still arrives."""
    async def answer(user: str) -> None:
        status, text = await post_signed(url(adapter), *slash_command("/quiz", user_id=user))
        button = json.loads(text)["blocks"][1]["elements"][0]
        click = block_actions(button["action_id"], button["value"], user_id=user, response_url=fake.response_url(user))
        assert (await post_signed(url(adapter), *click))[0] == 200
        await adapter.idle()

    await answer("U0001")
    await answer("U0002")
    assert fake.response_peers[0] == fake.response_peers[1]  # the same connection
    await fake.restart()
    await answer("U0003")
    assert [i for i, _ in fake.responses] == ["U0001", "U0002", "U0003"]


async def test_admin_lookup_under_a_rate_limit_does_not_hold_the_ack_and_expires(
    fake: SlackStandIn, bot: StudyBot, slack: SlackSettings
) -> None:
    admins = replace(slack, admins_are_instructors=True)
    adapter = SlackAdapter(bot, admins, admin_ttl=0.0)  # every lookup expires at once
    await adapter.start()
    try:
        fake.users["U0ADMIN"] = {"is_admin": True}
        fake.inject("users.info", 429, {"ok": False, "error": "ratelimited"}, {"Retry-After": "30"})
        first = await asyncio.wait_for(private_reply(adapter, fake, "/leaderboard", "post", user_id="U0ADMIN"), 10)
        assert first.startswith("Only instructors")  # not waited for: a learner this time
        assert len(fake.calls_to("users.info")) == 1  # and not retried before the ack
        fake.responses.clear()
        assert await private_reply(adapter, fake, "/leaderboard", "post", user_id="U0ADMIN") == "Posted."
        fake.users["U0ADMIN"] = {"is_admin": False}  # demoted
        fake.responses.clear()
        demoted = await private_reply(adapter, fake, "/leaderboard", "post", user_id="U0ADMIN")
        assert demoted.startswith("Only instructors")
    finally:
        await adapter.close()


async def test_posted_is_said_only_once_the_post_was_delivered(adapter: SlackAdapter, fake: SlackStandIn) -> None:
    fake.inject("chat.postMessage", 200, {"ok": False, "error": "not_in_channel"})
    said = await private_reply(adapter, fake, "/leaderboard", "post", user_id=TEACHER)
    assert "Posted." not in said and said.startswith("I could not post in this channel")


async def test_a_display_name_that_looks_like_a_mention_pings_nobody(adapter: SlackAdapter, fake: SlackStandIn,
                                                                     bot: StudyBot) -> None:
    status, text = await post_signed(url(adapter), *slash_command("/quiz", user_name="<!everyone>"))
    right = next(iter(bot.library.lessons.values())).questions[0].correct_index
    button = next(b for b in json.loads(text)["blocks"][1]["elements"] if b["value"].endswith(f".{right}"))
    await post_signed(url(adapter), *block_actions(button["action_id"], button["value"], user_name="<!everyone>"))
    assert await private_reply(adapter, fake, "/leaderboard", "post all", user_id=TEACHER) == "Posted."
    [post] = fake.calls_to("chat.postMessage")
    sent = json.dumps(post.params)
    assert "&lt;!everyone&gt;" in post.params["text"]
    assert "<!everyone>" not in sent and "<!channel>" not in sent and "<!here>" not in sent


async def test_an_envelope_no_listener_takes_is_acknowledged(fake: SlackStandIn, bot: StudyBot,
                                                             slack: SlackSettings) -> None:
    adapter = SlackAdapter(bot, replace(slack, app_token=Secret(fake.app_token), signing_secret=None))
    await adapter.start()
    try:
        event = {"type": "event_callback", "team_id": "T0001", "event": {"type": "app_mention", "user": "U0001",
                                                                          "text": "<@U0BOT> hi", "ts": "1.2"}}
        sent = await fake.socket_send("events_api", event)
        assert await fake.socket_ack(sent) == {"envelope_id": sent}
    finally:
        await adapter.close()


# ------------------------------------------------------------ hostile requests


async def test_slow_clients_are_cut_off_and_real_requests_get_through(adapter: SlackAdapter) -> None:
    """Clients trickling their headers hold connections only until the header timeout; past the
    connection cap a client waits for a place, and gets a 503 when none frees up in time; one
    trickling its body gets a 408."""
    port = adapter.port
    tricklers = [await asyncio.open_connection("127.0.0.1", port) for _ in range(4)]
    for _, writer in tricklers:
        writer.write(b"POST /slack/events HTTP/1.1\r\nHost: x\r\n")
        await writer.drain()
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    assert (await asyncio.wait_for(reader.read(), 5)).startswith(b"HTTP/1.1 503")  # over the cap, waited 0.2 s
    writer.close()
    for reader, writer in tricklers:
        writer.write(b"X-Slow: 1\r\n")
        await writer.drain()
        assert await asyncio.wait_for(reader.read(), 5) == b""  # closed by the server, headers unfinished
        writer.close()
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(b"POST /slack/events HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\n"
                 b"Content-Length: 1000\r\n\r\ncommand=/q")
    await writer.drain()
    assert (await asyncio.wait_for(reader.read(), 5)).startswith(b"HTTP/1.1 408")  # the body never came
    writer.close()
    status, text = await post_signed(url(adapter), *slash_command("/glossary", "mfu"))
    assert status == 200 and "MFU" in text


async def burst(port: int, requests: int, source: str = "127.0.0.1") -> list[int]:
    """`requests` signed /glossary posts at once, each on a connection of its own from `source`."""
    connector = aiohttp.TCPConnector(limit=0, force_close=True, local_addr=(source, 0))
    async with aiohttp.ClientSession(connector=connector) as session:
        async def one() -> int:
            status, _ = await post_signed(session, *slash_command("/glossary", "mfu"),
                                          url=f"http://127.0.0.1:{port}/slack/events")
            return status
        return await asyncio.gather(*(one() for _ in range(requests)))


async def test_a_burst_past_the_connection_cap_waits_and_is_all_answered(bot: StudyBot, slack: SlackSettings) -> None:
    adapter = SlackAdapter(bot, slack, limits=Limits(max_connections=8, queue_wait=10.0))
    await adapter.start()
    try:
        assert await burst(adapter.port, 120) == [200] * 120  # 15 times the cap, none refused
    finally:
        await adapter.close()


async def test_a_flooding_client_is_cut_off_while_others_get_through(bot: StudyBot, slack: SlackSettings) -> None:
    """One address may keep only so many connections waiting: the rest are refused at once; those
    that get a place but send nothing are cut off at the header timeout, as before."""
    limits = Limits(header_timeout=0.3, max_connections=4, queue_wait=5.0, max_waiting_per_client=6)
    adapter = SlackAdapter(bot, slack, limits=limits)
    await adapter.start()
    try:
        flood = [await asyncio.open_connection("127.0.0.1", adapter.port, local_addr=("127.0.0.2", 0))
                 for _ in range(20)]
        honest = asyncio.create_task(burst(adapter.port, 3))
        said = await asyncio.gather(*(asyncio.wait_for(reader.read(), 10) for reader, _ in flood))
        refused = [s for s in said if s.startswith(b"HTTP/1.1 503")]
        assert len(refused) == 20 - 4 - 6  # past the places and the address's share of the queue
        assert said.count(b"") == 10  # served or queued, then cut off: the headers never came
        assert await honest == [200] * 3
        for _, writer in flood:
            writer.close()
    finally:
        await adapter.close()


async def test_a_burst_from_one_address_past_its_share_is_queued_and_answered(bot: StudyBot,
                                                                              slack: SlackSettings) -> None:
    """Behind a load balancer every press comes from one address: connections whose request has all
    arrived are not held to the address's share of the queue (meant for the slow), so a burst many
    times that share and the places is all answered."""
    limits = Limits(max_connections=8, max_connections_per_client=4, max_waiting_per_client=10, queue_wait=20.0)
    adapter = SlackAdapter(bot, slack, limits=limits)
    await adapter.start()
    try:
        assert await burst(adapter.port, 300) == [200] * 300  # 30 times its share of the queue, none refused
    finally:
        await adapter.close()


async def slow_loris(port: int, connections: int, source: str, stop: asyncio.Event, trickling: asyncio.Event) -> int:
    """Keep `connections` connections from `source` trickling a request's headers, opening a new one
    for each the server closes, until `stop`; `trickling` is set once every one has sent its first
    header line. How many it opened."""
    opened = 0

    async def one() -> None:
        nonlocal opened
        while not stop.is_set():
            reader, writer = await asyncio.open_connection("127.0.0.1", port, local_addr=(source, 0))
            opened += 1
            with contextlib.suppress(OSError):  # cut off by the server
                writer.write(b"POST /slack/events HTTP/1.1\r\nHost: x\r\n")
                await writer.drain()
                if opened >= connections:
                    trickling.set()
                while not stop.is_set() and not reader.at_eof():
                    writer.write(b"X-Slow: 1\r\n")
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(reader.read(100), 0.1)
            writer.close()

    tasks = [asyncio.create_task(one()) for _ in range(connections)]
    await stop.wait()
    await asyncio.gather(*tasks, return_exceptions=True)
    return opened


async def test_slow_connections_from_one_address_leave_places_for_others(bot: StudyBot, slack: SlackSettings) -> None:
    """Slow-loris: one address trickling headers on as many connections as it may, reopening each one
    cut off, holds at most its share of the served places; signed requests from elsewhere get the rest."""
    limits = Limits(header_timeout=1.0, max_connections=8, max_connections_per_client=4, queue_wait=0.5)
    adapter = SlackAdapter(bot, slack, limits=limits)
    await adapter.start()
    stop, trickling = asyncio.Event(), asyncio.Event()
    try:
        attack = asyncio.create_task(slow_loris(adapter.port, 40, "127.0.0.2", stop, trickling))
        await asyncio.wait_for(trickling.wait(), 120)  # every slow connection is open and trickling
        said = []
        for _ in range(6):
            said.append((await post_signed(url(adapter), *slash_command("/glossary", "mfu")))[0])
        stop.set()
        assert await attack >= 40
        assert said == [200] * 6
    finally:
        stop.set()
        await adapter.close()


async def test_idle_keep_alive_connections_yield_their_places(bot: StudyBot, slack: SlackSettings) -> None:
    """Connections answered and kept alive, idle, give their places to connections that wait."""
    adapter = SlackAdapter(bot, slack, limits=Limits(max_connections=8, max_connections_per_client=8, queue_wait=1.0))
    await adapter.start()
    try:
        async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as kept:
            first = await asyncio.gather(*(post_signed(kept, *slash_command("/glossary", "mfu"), url=url(adapter))
                                           for _ in range(8)))
            assert [status for status, _ in first] == [200] * 8  # and their 8 connections stay open, idle
            assert await burst(adapter.port, 40) == [200] * 40
            again = await asyncio.gather(*(post_signed(kept, *slash_command("/glossary", "mfu"), url=url(adapter))
                                           for _ in range(8)))
            assert [status for status, _ in again] == [200] * 8  # the kept session still works
    finally:
        await adapter.close()


async def test_an_oversized_body_is_refused(adapter: SlackAdapter) -> None:
    body = "text=" + "x" * (2 * 1024 * 1024)
    status, _ = await post_signed(url(adapter), body, {"Content-Type": FORM, **sign(body)})
    assert status == 413


async def test_deeply_nested_json_is_refused_after_the_signature_check(
    adapter: SlackAdapter, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    nested = "payload=" + "%5B" * 50_000 + "%5D" * 50_000
    assert (await post_signed(url(adapter), nested, {"Content-Type": FORM, **sign(nested, "wrong")}))[0] == 401
    status, _ = await post_signed(url(adapter), nested, {"Content-Type": FORM, **sign(nested)})
    assert status == 400
    logged = "\n".join(r.getMessage() + (r.exc_text or "") for r in caplog.records)
    assert "RecursionError" not in logged and "Traceback" not in logged
    assert not any(r.exc_info for r in caplog.records)


async def test_refused_requests_log_no_body_no_forged_line_and_at_a_bounded_rate(
    adapter: SlackAdapter, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    body = "payload=" + json.dumps({"type": "block_actions", "text": "Zebrafish answer\n2026-11-30 INFO FORGED"})
    for _ in range(5):
        status, _ = await post_signed(url(adapter), body, {"Content-Type": FORM, **sign(body, "rotated-secret")})
        assert status == 401
    shortcut = "payload=" + json.dumps({"type": "shortcut", "callback_id": "x", "team": {"id": "T0001"},
                                        "user": {"id": "U0001"}, "trigger_id": "1.2.3", "note": "Zebrafish\nFORGED"})
    assert (await post_signed(url(adapter), shortcut, {"Content-Type": FORM, **sign(shortcut)}))[0] == 200
    messages = [r.getMessage() for r in caplog.records if not r.name.startswith("aiohttp")]
    assert all("Zebrafish" not in m and "\n" not in m for m in messages), messages
    refused = [m for m in messages if m.startswith("refused a request")]
    assert len(refused) == 1 and "401" in refused[0]  # five refusals, one line


# ------------------------------------------------------------ start-up


async def test_start_checks_the_bot_token_and_says_who_connected(
    fake: SlackStandIn, bot: StudyBot, slack: SlackSettings, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    wrong = SlackAdapter(bot, replace(slack, bot_token=Secret("xoxb-wrong")))
    with pytest.raises(PlatformRejected) as refused:
        await wrong.start()
    assert str(refused.value) == ("SLACK_BOT_TOKEN was refused by Slack (invalid_auth): copy the Bot User OAuth "
                                  "Token again")
    assert not any("connected" in r.getMessage() for r in caplog.records)
    adapter = SlackAdapter(bot, slack)
    await adapter.start()
    await adapter.close()
    assert any(r.getMessage().startswith("slack connected as @studybot in Fake") for r in caplog.records)


async def test_a_refused_app_token_and_an_unreachable_slack_are_one_line_each(
    fake: SlackStandIn, bot: StudyBot, slack: SlackSettings
) -> None:
    socket = SlackAdapter(bot, replace(slack, app_token=Secret("xapp-wrong"), signing_secret=None))
    with pytest.raises(PlatformRejected, match=r"^SLACK_APP_TOKEN was refused by Slack \(invalid_auth\)"):
        await socket.start()
    nowhere = SlackAdapter(bot, replace(slack, api_url=f"http://127.0.0.1:{free_port()}/api/"))
    with pytest.raises(PlatformUnreachable) as unreachable:
        await nowhere.start()
    assert "\n" not in str(unreachable.value) and "SLACK_API_URL" in str(unreachable.value)


async def test_close_while_starting_stops_the_start(fake: SlackStandIn, bot: StudyBot, slack: SlackSettings) -> None:
    gate = fake.hold("auth.test")
    for settings in (slack, replace(slack, app_token=Secret(fake.app_token), signing_secret=None)):
        adapter = SlackAdapter(bot, settings)
        starting = asyncio.create_task(adapter.start())
        while not fake.calls_to("auth.test"):
            await asyncio.sleep(0.01)
        await adapter.close()
        assert await asyncio.wait_for(starting, 5) is None  # stopped, not an error
        assert adapter.port is None
        fake.calls.clear()
    gate.set()


async def test_an_unanswered_start_gives_up_within_its_timeout(fake: SlackStandIn, bot: StudyBot,
                                                               slack: SlackSettings) -> None:
    gate = fake.hold("auth.test")
    adapter = SlackAdapter(bot, slack, connect_timeout=0.2)
    with pytest.raises(PlatformUnreachable, match="^cannot reach Slack at "):
        await adapter.start()
    gate.set()


def test_slack_bolts_own_lines_quote_no_request(bot: StudyBot, slack: SlackSettings,
                                                caplog: pytest.LogCaptureFixture) -> None:
    """slack-bolt logs bodies in some lines (a failed signature at INFO, an unhandled request): the
    adapter's Bolt logger withholds them and keeps each record on one line."""
    adapter = SlackAdapter(bot, slack)
    caplog.set_level(logging.DEBUG)
    adapter.app.logger.info("Invalid request signature detected (signature: v0=1, timestamp: 1, body: "
                            "payload=Zebrafish\nFORGED)")
    adapter.app.logger.warning("Unhandled request ({'type': 'shortcut', 'note': 'Zebrafish'})\n---\n[Suggestion]")
    [signature, unhandled] = [r.getMessage() for r in caplog.records if r.name == adapter.app.logger.name]
    assert signature == "Invalid request signature detected [request details withheld]"
    assert unhandled == "Unhandled request [request details withheld]"


async def test_a_channel_archived_mid_round_ends_the_round_and_tells_its_starter(
        adapter: SlackAdapter, fake: SlackStandIn, bot: StudyBot) -> None:
    """is_archived is for good: the timer is given up at once with its reason, the round is closed,
    its starter hears why by DM, and nothing is retried; another channel can start a round meanwhile."""
    started = await private_reply(adapter, fake, "/quiz", "round", channel_id="C0001")
    assert started.startswith("Round started")
    archived = {"ok": False, "error": "is_archived"}
    fake.inject("chat.update", 200, archived)
    fake.inject("chat.postMessage", 200, archived)
    bot.ctx.clock.advance(61)  # type: ignore[attr-defined]
    assert await fire_due(bot, {"slack": adapter}) == 1
    [given_up] = await bot.store.timers.given_up(bot.ctx.clock.now() - timedelta(hours=1))
    assert given_up.timer.startswith("round:") and given_up.reason == "slack refused the message: is_archived"
    dm = fake.calls_to("chat.postMessage")[-1]
    assert dm.params["channel"] == "DU0001" and "was stopped at question 2" in dm.params["text"]
    bot.ctx.clock.advance(3600)  # type: ignore[attr-defined]
    assert await fire_due(bot, {"slack": adapter}) == 0
    assert (await private_reply(adapter, fake, "/quiz", "round", channel_id="C0001")).startswith("Round started")


async def test_a_message_deleted_before_its_reveal_is_left_alone(adapter: SlackAdapter, fake: SlackStandIn,
                                                                 bot: StudyBot) -> None:
    await private_reply(adapter, fake, "/quiz", "round", channel_id="C0001")
    fake.messages.clear()  # someone deleted the question
    bot.ctx.clock.advance(61)  # type: ignore[attr-defined]
    assert await fire_due(bot, {"slack": adapter}) == 1
    assert await bot.store.timers.given_up(bot.ctx.clock.now() - timedelta(hours=1)) == []
    assert "question 2 of" in fake.calls_to("chat.postMessage")[-1].params["text"]  # the round goes on


async def test_configured_channels_are_checked_through_conversations_info(adapter: SlackAdapter, fake: SlackStandIn,
                                                                         bot: StudyBot) -> None:
    fake.channels.update({"C0ARCH": {"is_archived": True}, "G0SECRET": {"is_private": True, "is_member": False}})

    async def problem(channel: str) -> str | None:
        return await adapter.channel_problem(Place("slack", "T0001", channel))

    assert await problem("C0001") is None
    assert await problem("C0ARCH") == "is_archived"
    assert await problem("G0SECRET") == "not_in_channel"
    assert await problem("C0TYPO") == "channel_not_found"
    assert [c.params["channel"] for c in fake.calls_to("conversations.info")] == ["C0001", "C0ARCH", "G0SECRET",
                                                                                 "C0TYPO"]
    fake.inject("conversations.info", 200, {"ok": False, "error": "missing_scope", "needed": "channels:read"})
    assert await problem("C0TYPO") is None  # an app without the scope cannot tell: not a problem


async def test_a_replayed_request_is_acknowledged_and_not_done_twice(adapter: SlackAdapter, fake: SlackStandIn) -> None:
    """Slack accepts a signature for five minutes, so a captured (or resent) `/leaderboard post`
    could post twice: the same timestamp and signature is taken once."""
    request = slash_command("/leaderboard", "post", response_url=fake.response_url("leaderboard"), user_id=TEACHER)
    assert (await post_signed(url(adapter), *request))[0] == 200
    await adapter.idle()
    assert (await post_signed(url(adapter), *request))[0] == 200
    await adapter.idle()
    assert len(fake.calls_to("chat.postMessage")) == 1
    again = slash_command("/leaderboard", "post", response_url=fake.response_url("leaderboard"), user_id=TEACHER,
                          trigger_id="another")
    await post_signed(url(adapter), *again)  # a new request (its own body, so its own signature) is done
    await adapter.idle()
    assert len(fake.calls_to("chat.postMessage")) == 2


def test_the_replay_guard_forgets_after_slacks_window() -> None:
    now = [0.0]
    guard = ReplayGuard(lambda: now[0])
    assert guard.first_time("1", "v0=a") and guard.first_time("1", "v0=a")  # not taken yet: a failed one may retry
    guard.taken("1", "v0=a")
    assert not guard.first_time("1", "v0=a") and guard.first_time("1", "v0=b")
    now[0] = ReplayGuard.WINDOW + 61
    assert guard.first_time("1", "v0=a")  # by now Slack itself refuses a signature this old
