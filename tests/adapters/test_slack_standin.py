"""The Slack stand-in enforces its rules against the real slack-sdk and slack-bolt."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest
from aiohttp import web
from slack_bolt.adapter.socket_mode.async_handler import AsyncSocketModeHandler
from slack_bolt.async_app import AsyncApp
from slack_sdk.errors import SlackApiError
from slack_sdk.http_retry.builtin_async_handlers import AsyncRateLimitErrorRetryHandler
from slack_sdk.web.async_client import AsyncWebClient
from slack_sdk.webhook.async_client import AsyncWebhookClient

from standins.slack_standin import (
    SlackStandIn,
    block_actions,
    post_signed,
    slash_command,
    slash_payload,
    view_submission,
)


def web_client(fake: SlackStandIn, **kwargs) -> AsyncWebClient:
    return AsyncWebClient(
        token=kwargs.pop("token", fake.bot_token), base_url=fake.api_url, **kwargs
    )


def bolt_app(fake: SlackStandIn) -> AsyncApp:
    """A bare Bolt app: /quiz posts a question and acks, a button answers via response_url."""
    app = AsyncApp(
        client=web_client(fake), signing_secret=fake.signing_secret, process_before_response=True
    )

    @app.command("/quiz")
    async def quiz(ack, command, client) -> None:
        await client.chat_postMessage(channel=command["channel_id"], text="2+2?")
        await ack(f"quiz on {command['text']}")

    @app.action("answer")
    async def answer(ack, body, respond) -> None:
        await ack()
        await respond(text=f"<@{body['user']['id']}> answered {body['actions'][0]['value']}")

    @app.view("deck")
    async def deck(ack, view) -> None:
        name = view["state"]["values"]["name"]["input"]["value"]
        await ack(response_action="errors", errors={"name": f"{name} taken"})

    return app


@asynccontextmanager
async def serve(app: AsyncApp) -> AsyncIterator[str]:
    """Serve a Bolt app on 127.0.0.1; yields its events URL."""
    runner = web.AppRunner(app.web_app(path="/slack/events"), shutdown_timeout=1.0)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}/slack/events"
    finally:
        await runner.cleanup()


# -- Web API ---------------------------------------------------------------------------------


async def test_post_message_is_recorded_with_json_params(fake: SlackStandIn) -> None:
    client = web_client(fake)
    blocks = [{"type": "section", "text": {"type": "mrkdwn", "text": "hi"}}]
    first = await client.chat_postMessage(channel="C0001", text="hi", blocks=blocks)
    second = await client.chat_postMessage(channel="U0002", text="dm")

    assert (first["channel"], second["channel"]) == ("C0001", "DU0002")
    assert float(first["ts"]) < float(second["ts"])
    assert first["message"]["text"] == "hi"
    call = fake.calls_to("chat.postMessage")[0]
    assert call.params == {"channel": "C0001", "text": "hi", "blocks": blocks}
    assert call.token == fake.bot_token


async def test_wrong_token_gets_invalid_auth(fake: SlackStandIn) -> None:
    with pytest.raises(SlackApiError) as err:
        await web_client(fake, token="xoxb-wrong").chat_postMessage(channel="C0001", text="hi")
    assert err.value.response.status_code == 200
    assert err.value.response["error"] == "invalid_auth"
    assert [c.method for c in fake.calls] == ["chat.postMessage"]


@pytest.mark.filterwarnings("ignore:The top-level `text` argument is missing")
async def test_unknown_method_and_missing_fields_fail(fake: SlackStandIn) -> None:
    client = web_client(fake)
    with pytest.raises(SlackApiError, match="unknown_method"):
        await client.api_call("chat.nonsense")
    with pytest.raises(SlackApiError, match="no_text"):
        await client.chat_postMessage(channel="C0001")
    with pytest.raises(SlackApiError, match="message_not_found"):
        await client.chat_update(channel="C0001", ts="1.000001", text="edit")


async def test_query_string_methods_and_user_flags(fake: SlackStandIn) -> None:
    client = web_client(fake)
    fake.users["U0009"] = {"is_admin": True}
    posted = await client.chat_postMessage(channel="C0001", text="q")

    assert (await client.auth_test())["user_id"] == "U0BOT"
    assert (await client.conversations_open(users="U0001"))["channel"]["id"] == "DU0001"
    assert (await client.users_info(user="U0009"))["user"]["is_admin"] is True
    assert (await client.users_info(user="U0001"))["user"]["is_admin"] is False
    updated = await client.chat_update(channel="C0001", ts=posted["ts"], text="edited")
    assert (updated["ts"], updated["text"]) == (posted["ts"], "edited")
    link = await client.chat_getPermalink(channel="C0001", message_ts=posted["ts"])
    assert link["permalink"].endswith(posted["ts"].replace(".", ""))
    eph = await client.chat_postEphemeral(channel="C0001", user="U0001", text="psst")
    assert eph["message_ts"]
    assert fake.calls_to("conversations.open")[0].params == {"users": "U0001"}


async def test_injected_429_is_retried_only_with_the_rate_limit_handler(
    fake: SlackStandIn,
) -> None:
    ratelimited = {"ok": False, "error": "ratelimited"}
    fake.inject("chat.postMessage", 429, ratelimited, {"Retry-After": "0"})
    with pytest.raises(SlackApiError) as err:
        await web_client(fake).chat_postMessage(channel="C0001", text="hi")
    assert err.value.response.status_code == 429
    assert err.value.response["error"] == "ratelimited"
    assert err.value.response.headers["Retry-After"] == "0"

    fake.calls.clear()
    fake.inject("chat.postMessage", 429, ratelimited, {"Retry-After": "0"})
    client = web_client(fake, retry_handlers=[AsyncRateLimitErrorRetryHandler(max_retry_count=1)])
    assert (await client.chat_postMessage(channel="C0001", text="hi"))["ok"]
    assert len(fake.calls_to("chat.postMessage")) == 2


async def test_files_upload_v2_goes_through_three_steps(fake: SlackStandIn) -> None:
    resp = await web_client(fake).files_upload_v2(
        channel="C0001", filename="quiz_results.txt", content="x", initial_comment="results"
    )

    assert [c.method for c in fake.calls] == [
        "files.getUploadURLExternal",
        "upload",
        "files.completeUploadExternal",
    ]
    step1 = fake.calls[0].params
    assert (step1["filename"], step1["length"]) == ("quiz_results.txt", "1")
    assert fake.calls[1].token is None  # the upload POST carries no auth
    file_id = resp["file"]["id"]
    assert fake.uploads == {file_id: b"x"}
    shared = fake.shared_files[0]
    assert (shared["id"], shared["channel_id"], shared["initial_comment"]) == (
        file_id,
        "C0001",
        "results",
    )


async def test_views_open_enforces_the_trigger_window(fake: SlackStandIn) -> None:
    client = web_client(fake)
    view = {"type": "modal", "callback_id": "deck", "title": {"type": "plain_text", "text": "D"}}
    trigger = fake.new_trigger_id()

    opened = await client.views_open(trigger_id=trigger, view=view)
    assert opened["view"]["id"] in fake.views
    with pytest.raises(SlackApiError, match="exchanged_trigger_id"):
        await client.views_open(trigger_id=trigger, view=view)
    with pytest.raises(SlackApiError, match="expired_trigger_id"):
        await client.views_open(trigger_id="1.2.never-issued", view=view)
    fake.trigger_ttl = 0.05
    late = fake.new_trigger_id()
    await asyncio.sleep(0.1)
    with pytest.raises(SlackApiError, match="expired_trigger_id"):
        await client.views_open(trigger_id=late, view=view)

    updated = await client.views_update(view_id=opened["view"]["id"], view={**view, "blocks": []})
    assert updated["view"]["hash"] != opened["view"]["hash"]
    with pytest.raises(SlackApiError, match="hash_conflict"):
        await client.views_update(
            view_id=opened["view"]["id"], hash=opened["view"]["hash"], view=view
        )


async def test_response_url_records_json(fake: SlackStandIn) -> None:
    resp = await AsyncWebhookClient(fake.response_url("r1")).send(text="done")
    assert (resp.status_code, resp.body) == (200, "ok")
    assert fake.responses == [("r1", {"text": "done"})]


# -- Bolt over HTTP --------------------------------------------------------------------------


async def test_bolt_accepts_signed_and_rejects_forged_or_stale_requests(
    fake: SlackStandIn,
) -> None:
    async with serve(bolt_app(fake)) as url:
        assert await post_signed(url, *slash_command("/quiz", "algebra")) == (
            200,
            "quiz on algebra",
        )
        forged = slash_command("/quiz", "algebra", secret="not-the-secret")
        stale = slash_command("/quiz", "algebra", ts=int(time.time()) - 301)
        assert (await post_signed(url, *forged))[0] == 401
        assert (await post_signed(url, *stale))[0] == 401

    assert [c.method for c in fake.calls] == ["auth.test", "chat.postMessage"]
    assert fake.calls[1].params == {"channel": "C0001", "text": "2+2?", "team_id": "T0001"}


async def test_bolt_routes_button_clicks_and_view_submissions(fake: SlackStandIn) -> None:
    async with serve(bolt_app(fake)) as url:
        click = block_actions("answer", "4", response_url=fake.response_url("click"))
        assert (await post_signed(url, *click))[0] == 200
        submit = view_submission("deck", "meta", {"name": {"input": "Algebra"}})
        status, text = await post_signed(url, *submit)

    assert fake.responses == [("click", {"text": "<@U0001> answered 4"})]
    assert status == 200
    assert '"response_action": "errors"' in text and "Algebra taken" in text


# -- Bolt over Socket Mode -------------------------------------------------------------------


async def test_socket_mode_acks_envelopes_and_reconnects(fake: SlackStandIn) -> None:
    handler = AsyncSocketModeHandler(bolt_app(fake), fake.app_token)
    await handler.connect_async()
    try:
        await fake.wait_socket_connected(timeout=2)
        envelope_id = await fake.socket_send("slash_commands", slash_payload("/quiz", "algebra"))
        ack = await fake.socket_ack(envelope_id, timeout=2)
        assert ack == {"envelope_id": envelope_id, "payload": {"text": "quiz on algebra"}}

        await fake.socket_disconnect()
        await fake.wait_socket_connected(timeout=2)
        envelope_id = await fake.socket_send("slash_commands", slash_payload("/quiz", "again"))
        assert (await fake.socket_ack(envelope_id, timeout=2))["payload"]["text"] == "quiz on again"
    finally:
        await handler.close_async()

    opens = fake.calls_to("apps.connections.open")
    assert len(opens) == 2 and all(c.token == fake.app_token for c in opens)
    assert fake.socket_connections == 2


async def test_apps_connections_open_requires_the_app_token(fake: SlackStandIn) -> None:
    with pytest.raises(SlackApiError, match="not_allowed_token_type"):
        await web_client(fake).apps_connections_open(app_token=fake.bot_token)
    with pytest.raises(SlackApiError, match="invalid_auth"):
        await web_client(fake).apps_connections_open(app_token="xapp-wrong")
