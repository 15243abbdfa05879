"""Slack for many workspaces, end to end: "Add to Slack" through Bolt's OAuth flow against the
stand-in, each workspace with its own bot token, quizzes whose scores never mix, uninstalls, and
token rotation for sends that no request triggers."""

from __future__ import annotations

import asyncio
import html
import json
import re
import time
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import pytest
import yaml
from pg import PgServer
from support import CORE_PACK, REPO
from test_slack_installs import unused_states

from adapters.http_guard import Limits
from adapters.slack_app import SlackAdapter
from adapters.slack_settings import SlackSettings
from bot.core.clock import FixedClock
from bot.core.config import Instructors, Secret, Settings
from bot.core.errors import ConfigError, DeliveryFailed
from bot.core.messages import Audience, Cohort, Place, Reply
from bot.runtime.app import StudyBot
from standins.slack_standin import SlackStandIn, block_actions, post_signed, sign, slash_command


def oauth_settings(fake: SlackStandIn) -> SlackSettings:
    return SlackSettings(signing_secret=Secret(fake.signing_secret), api_url=fake.api_url, http_host="127.0.0.1",
                         http_port=0, client_id=fake.client_id, client_secret=Secret(fake.client_secret))


@pytest.fixture
def settings(tmp_path: Path, database_url: str | None, request: pytest.FixtureRequest) -> Settings:
    """The bot's settings; a test may name instructors per workspace (`{"cohorts": {team: [user ids]}}`)."""
    cohorts = getattr(request, "param", {}).get("cohorts", {})
    instructors = Instructors(per_cohort={Cohort("slack", team): frozenset(users) for team, users in cohorts.items()})
    return Settings(db_path=tmp_path / "bot.db", database_url=database_url, content_dir=CORE_PACK,
                    results_dir=tmp_path / "results", instructors=instructors)


@pytest.fixture
async def adapter(bot: StudyBot, fake: SlackStandIn) -> AsyncIterator[SlackAdapter]:
    adapter = SlackAdapter(bot, oauth_settings(fake))
    await adapter.start()
    fake.oauth_redirect_url = f"http://127.0.0.1:{adapter.port}/slack/oauth_redirect"
    yield adapter
    await adapter.close()


async def install(adapter: SlackAdapter, team: str, installer: str = "U0INSTALL", grid: str = "") -> tuple[int, str]:
    """Add to Slack as a browser does: the install page (its state cookie), Slack's authorize page
    (which redirects back with a code), then the app's redirect URL with the code and the cookie.
    `grid` adds the stand-in's Enterprise Grid parameters (`&enterprise=E1`, `&org_wide=1`)."""
    app = f"http://127.0.0.1:{adapter.port}"
    async with aiohttp.ClientSession() as browser:
        async with browser.get(f"{app}/slack/install", allow_redirects=False) as page:
            assert page.status == 200
            cookie = page.headers["Set-Cookie"].split(";")[0]
            link = html.unescape(re.search(r'href="([^"]*/oauth/v2/authorize[^"]*)"', await page.text())[1])
        async with browser.get(f"{link}&team={team}&installer={installer}{grid}", allow_redirects=False) as slack:
            assert slack.status == 302
            back = slack.headers["Location"]
        assert back.startswith(f"{app}/slack/oauth_redirect?code=")
        async with browser.get(back, headers={"Cookie": cookie}, allow_redirects=False) as done:
            return done.status, await done.text()


async def post(adapter: SlackAdapter, built: tuple[str, dict[str, str]]) -> tuple[int, str]:
    answered = await post_signed(f"http://127.0.0.1:{adapter.port}/slack/events", *built)
    await adapter.idle()
    return answered


def buttons(blocks: list[dict]) -> list[dict]:
    return [e for b in blocks if b["type"] == "actions" for e in b["elements"]]


async def answer_a_question_right(adapter: SlackAdapter, fake: SlackStandIn, team: str, user: str) -> None:
    status, body = await post(adapter, slash_command("/quiz", user_id=user, team_id=team,
                                                     trigger_id=fake.new_trigger_id(),
                                                     response_url=fake.response_url(f"quiz-{team}")))
    assert status == 200, body
    question = next(iter(adapter.bot.library.lessons.values())).questions[0]
    right = next(b for b in buttons(json.loads(body)["blocks"]) if b["value"].endswith(f".{question.correct_index}"))
    status, _ = await post(adapter, block_actions(right["action_id"], right["value"], user_id=user, team_id=team,
                                                  response_url=fake.response_url(f"click-{team}"),
                                                  trigger_id=fake.new_trigger_id()))
    assert status == 200


async def leaderboard(adapter: SlackAdapter, fake: SlackStandIn, team: str) -> str:
    status, body = await post(adapter, slash_command("/leaderboard", "all", user_id="U0001", team_id=team,
                                                     response_url=fake.response_url(f"board-{team}")))
    assert status == 200
    return json.loads(body)["text"]


def event(team: str, kind: str, **fields: object) -> tuple[str, dict[str, str]]:
    body = json.dumps({"token": "verification-token", "team_id": team, "api_app_id": "A0001", "type": "event_callback",
                       "event_id": f"Ev{time.monotonic_ns()}", "event_time": int(time.time()),
                       "event": {"type": kind, **fields}})
    return body, {"Content-Type": "application/json", **sign(body)}


def grid_event(enterprise: str, team: str | None, kind: str) -> tuple[str, dict[str, str]]:
    """An event of an Enterprise Grid organization's install: a workspace's own (`team`), or with no
    team the organization-wide install's, as Slack names it in `authorizations`."""
    body = json.dumps({"token": "verification-token", "team_id": team or "T0OTHER", "enterprise_id": enterprise,
                       "api_app_id": "A0001", "type": "event_callback", "event_id": f"Ev{time.monotonic_ns()}",
                       "event_time": int(time.time()), "event": {"type": kind},
                       "authorizations": [{"enterprise_id": enterprise, "team_id": team, "user_id": "U0BOT",
                                           "is_bot": True, "is_enterprise_install": team is None}]})
    return body, {"Content-Type": "application/json", **sign(body)}


def public(team: str, text: str) -> Reply:
    return Reply(text, Audience.PUBLIC, place=Place("slack", team, "C0001"))


@pytest.mark.both_engines
async def test_two_workspaces_install_quiz_apart_and_one_uninstalls(
        adapter: SlackAdapter, fake: SlackStandIn, bot: StudyBot, engine: str) -> None:
    assert (await install(adapter, "T1", installer="U0ADA"))[0] == 200
    assert (await install(adapter, "T2"))[0] == 200
    one, two = fake.token_of("T1"), fake.token_of("T2")
    assert one != two
    installs = {i.cohort: i for i in await bot.store.installs.listed("slack")}
    assert {c: (i.bot_token, i.installer_id) for c, i in installs.items()} == {
        "T1": (one, "U0ADA"), "T2": (two, "U0INSTALL")}

    # The same user id answers in both workspaces: two learners, two scores.
    await answer_a_question_right(adapter, fake, "T1", "U0001")
    await answer_a_question_right(adapter, fake, "T1", "U0002")
    await answer_a_question_right(adapter, fake, "T2", "U0001")
    rows = await bot.store.engine.read("SELECT cohort, user_id, points FROM learners ORDER BY cohort, user_id")
    assert [(r["cohort"], r["user_id"]) for r in rows] == [("T1", "U0001"), ("T1", "U0002"), ("T2", "U0001")]
    assert all(r["points"] > 0 for r in rows)
    assert "U0002" not in await leaderboard(adapter, fake, "T2")

    # A send no request triggers (a timer's) picks the workspace's token by its id.
    await adapter.send(public("T2", "the daily question"))
    await adapter.send(public("T1", "the daily question"))
    assert [fake.team_of(c) for c in fake.calls_to("chat.postMessage")] == ["T2", "T1"]

    fake.uninstall("T1")
    status, _ = await post(adapter, event("T1", "app_uninstalled"))
    assert status == 200
    assert await bot.store.installs.find("slack", "T1") is None
    assert await bot.store.installs.find("slack", "T2") is not None
    with pytest.raises(DeliveryFailed) as refused:
        await adapter.send(public("T1", "nobody is there"))
    assert refused.value.permanent
    status, _ = await post(adapter, slash_command("/quiz", user_id="U0001", team_id="T1",
                                                  response_url=fake.response_url("after")))
    told = [body["text"] for url_id, body in fake.responses if url_id == "after"]
    assert status == 200 and "no longer available" in told[0]  # Bolt's answer for a workspace not installed
    await adapter.send(public("T2", "still here"))
    assert fake.team_of(fake.calls_to("chat.postMessage")[-1]) == "T2"
    assert await bot.store.count("learners") == 3  # the scores stay until the retention runs out


async def test_the_installer_is_the_workspaces_first_instructor(adapter: SlackAdapter, fake: SlackStandIn) -> None:
    assert (await install(adapter, "T1", installer="U0ADA"))[0] == 200
    assert await adapter._is_instructor("T1", "U0ADA")
    assert not await adapter._is_instructor("T1", "U0BOB")
    assert not await adapter._is_instructor("T2", "U0ADA")  # not the installer of another workspace


async def audit(adapter: SlackAdapter, fake: SlackStandIn, team: str, user: str) -> str:
    """What `/audit` answers `user`: the instructors' summary, or the refusal a learner gets."""
    status, body = await post(adapter, slash_command("/audit", user_id=user, team_id=team,
                                                     response_url=fake.response_url(f"audit-{user}")))
    assert status == 200
    return str(json.loads(body)["text"])


async def test_a_reinstall_by_a_learner_keeps_the_first_installer_the_instructor(
        adapter: SlackAdapter, fake: SlackStandIn, bot: StudyBot, caplog: pytest.LogCaptureFixture) -> None:
    assert (await install(adapter, "T1", installer="U0ADA"))[0] == 200
    assert (await install(adapter, "T1", installer="U0BOB"))[0] == 200  # any member may Add to Slack again
    installed = await bot.store.installs.find("slack", "T1")
    assert installed is not None and installed.bot_token == fake.token_of("T1")  # the reinstall's token is used
    assert "Only instructors" in await audit(adapter, fake, "T1", "U0BOB")
    assert "Only instructors" not in await audit(adapter, fake, "T1", "U0ADA")
    assert "installed again by U0BOB; its first installer U0ADA stays its instructor" in caplog.text


@pytest.mark.parametrize("settings", [{"cohorts": {"T1": ["U0TEACH"]}}], indirect=True)
async def test_a_workspaces_configured_instructors_win_over_its_installer(
        adapter: SlackAdapter, fake: SlackStandIn) -> None:
    assert (await install(adapter, "T1", installer="U0ADA"))[0] == 200
    assert (await install(adapter, "T2", installer="U0ADA"))[0] == 200
    assert "Only instructors" in await audit(adapter, fake, "T1", "U0ADA")
    assert "Only instructors" not in await audit(adapter, fake, "T1", "U0TEACH")
    assert "Only instructors" not in await audit(adapter, fake, "T2", "U0ADA")  # T2 configures none


async def test_a_redirect_without_the_install_pages_state_is_refused(adapter: SlackAdapter) -> None:
    url = f"http://127.0.0.1:{adapter.port}/slack/oauth_redirect?code=abc&state=forged"
    async with aiohttp.ClientSession() as browser, browser.get(url) as answer:
        assert answer.status == 400
    assert await adapter.bot.store.installs.listed() == []


async def install_pages(port: int, times: int, address: str = "127.0.0.1") -> list[int]:
    """Open the install page `times` times from `address`, as a flood would: each page's status."""
    connector = aiohttp.TCPConnector(local_addr=(address, 0))
    async with aiohttp.ClientSession(connector=connector) as flood:
        statuses = []
        for _ in range(times):
            async with flood.get(f"http://127.0.0.1:{port}/slack/install", allow_redirects=False) as page:
                statuses.append(page.status)
        return statuses


async def test_install_pages_are_bounded_per_address_and_store_nothing_past_the_bound(
        bot: StudyBot, fake: SlackStandIn) -> None:
    adapter = SlackAdapter(bot, oauth_settings(fake), limits=Limits(install_pages_per_client=5))
    await adapter.start()
    try:
        assert adapter.port is not None
        assert await install_pages(adapter.port, 50) == [200] * 5 + [429] * 45
        assert await unused_states(bot.store) == 5
        assert await install_pages(adapter.port, 1, address="127.0.0.2") == [200]  # another address is served
        assert await unused_states(bot.store) == 6
    finally:
        await adapter.close()


async def test_tokens_revoked_removes_the_install(adapter: SlackAdapter, fake: SlackStandIn, bot: StudyBot) -> None:
    await install(adapter, "T1")
    status, _ = await post(adapter, event("T1", "tokens_revoked", tokens={"oauth": [], "bot": ["U0BOTT1"]}))
    assert status == 200
    assert await bot.store.installs.find("slack", "T1") is None


async def test_in_an_enterprise_grid_a_workspaces_uninstall_leaves_the_organizations_install(
        adapter: SlackAdapter, fake: SlackStandIn, bot: StudyBot) -> None:
    assert (await install(adapter, "T1", grid="&enterprise=E1"))[0] == 200  # one workspace of the organization
    assert (await install(adapter, "", grid="&enterprise=E1&org_wide=1"))[0] == 200  # the whole organization
    installs = {i.cohort: (i.enterprise_id, i.is_enterprise_install) for i in await bot.store.installs.listed("slack")}
    assert installs == {"T1": ("E1", False), "E1": ("E1", True)}

    fake.uninstall("T1")
    assert (await post(adapter, grid_event("E1", "T1", "app_uninstalled")))[0] == 200
    assert await bot.store.installs.find("slack", "T1") is None
    assert await bot.store.installs.find("slack", "E1") is not None  # the organization keeps studybot
    await adapter.send(public("E1", "still installed"))
    assert fake.team_of(fake.calls_to("chat.postMessage")[-1]) == "E1"

    fake.uninstall("E1")
    assert (await post(adapter, grid_event("E1", None, "app_uninstalled")))[0] == 200
    assert await bot.store.installs.find("slack", "E1") is None


# -- token rotation -----------------------------------------------------------------------------


async def expire_now(bot: StudyBot, fake: SlackStandIn, team: str) -> None:
    """The token's lifetime passed: Slack refuses it, and the install says it has expired."""
    fake.expire(team)
    await bot.store.engine.write(lambda c: c.execute(
        "UPDATE installs SET token_expires_at = ? WHERE cohort = ?", (int(time.time()) - 1, team)))


async def test_sends_with_a_token_slack_calls_expired_refresh_it_once_and_go_through(
        adapter: SlackAdapter, fake: SlackStandIn, bot: StudyBot) -> None:
    """This process still holds the old token (its cached install): Slack refuses it, the token is
    refreshed once for the three sends due together, and each is sent again with the new one."""
    fake.rotation = True
    await install(adapter, "T1")
    first = fake.token_of("T1")
    await adapter.send(public("T1", "before"))
    assert fake.refreshes == []  # twelve hours left: nothing to refresh
    await expire_now(bot, fake, "T1")
    sent = await asyncio.gather(*(adapter.send(public("T1", f"due {n}")) for n in range(3)))
    assert all(ref is not None for ref in sent)
    assert fake.refreshes == ["T1"]
    fresh = fake.token_of("T1")
    assert [c.token for c in fake.calls_to("chat.postMessage")] == [first] * 4 + [fresh] * 3
    assert (await bot.store.installs.find("slack", "T1")).bot_token == fresh  # type: ignore[union-attr]


async def test_two_processes_due_at_once_refresh_the_token_once(
        fake: SlackStandIn, pg_server: PgServer, tmp_path: Path, clock: FixedClock) -> None:
    """Two processes (each its own bot, engine and connection) on one PostgreSQL database."""
    url = pg_server.new_database()
    fake.rotation = True
    bots = [await StudyBot.start(Settings(db_path=tmp_path / "unused.db", database_url=url, content_dir=CORE_PACK,
                                          results_dir=tmp_path / f"results{n}"), clock) for n in range(2)]
    adapters = [SlackAdapter(b, oauth_settings(fake)) for b in bots]
    try:
        for a in adapters:
            await a.start()
        fake.oauth_redirect_url = f"http://127.0.0.1:{adapters[0].port}/slack/oauth_redirect"
        await install(adapters[0], "T1")
        await expire_now(bots[0], fake, "T1")
        await asyncio.gather(*(a.send(public("T1", "the round is over")) for a in adapters))
        assert fake.refreshes == ["T1"]
        assert [c.token for c in fake.calls_to("chat.postMessage")] == [fake.token_of("T1")] * 2
        assert sum(a.workspaces.refreshes for a in adapters if a.workspaces) == 1
    finally:
        for a in adapters:
            await a.close()
        for b in bots:
            await b.close()
        pg_server.drop(url)


# -- settings -----------------------------------------------------------------------------------


def test_the_scopes_asked_for_are_the_manifests() -> None:
    manifest = yaml.safe_load((REPO / "slack_manifest.yaml").read_text())
    assert SlackSettings().scopes == tuple(manifest["oauth_config"]["scopes"]["bot"])


def test_the_client_id_and_secret_turn_on_installs_in_many_workspaces() -> None:
    read = SlackSettings.from_env({"SLACK_CLIENT_ID": "1.2", "SLACK_CLIENT_SECRET": "s", "SLACK_SIGNING_SECRET": "x",
                                   "SLACK_REDIRECT_URL": "https://bot.example/slack/back"})
    assert read.distributed and read.configured and read.redirect_path == "/slack/back"
    assert not SlackSettings.from_env({"SLACK_CLIENT_ID": "1.2", "SLACK_CLIENT_SECRET": "s"}).configured


@pytest.mark.parametrize(("environ", "says"), [
    ({"SLACK_CLIENT_ID": "1.2"}, "SLACK_CLIENT_ID and SLACK_CLIENT_SECRET go together"),
    ({"SLACK_CLIENT_ID": "1.2", "SLACK_CLIENT_SECRET": "s", "SLACK_BOT_TOKEN": "xoxb-1"}, "not both"),
    ({"SLACK_CLIENT_ID": "1.2", "SLACK_CLIENT_SECRET": "s", "SLACK_APP_TOKEN": "xapp-1"}, "unset SLACK_APP_TOKEN"),
    ({"SLACK_REDIRECT_URL": "bot.example/back"}, "SLACK_REDIRECT_URL: .* is not a URL"),
])
def test_a_wrong_distribution_setting_is_one_line_saying_what_to_do(environ: dict[str, str], says: str) -> None:
    with pytest.raises(ConfigError, match=says):
        SlackSettings.from_env(environ)
