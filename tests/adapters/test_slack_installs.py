"""slack_sdk's installation and OAuth state stores over studybot's database, the same on both engines."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest
from slack_sdk.oauth.installation_store import Installation

from adapters import cli
from adapters.slack_installs import InstallationStore, OAuthStates, TooManyStates
from bot.core.clock import FixedClock, SystemClock
from bot.core.config import Settings
from bot.core.messages import Actor
from bot.store import Store

pytestmark = pytest.mark.both_engines


@pytest.fixture
async def store(settings: Settings, clock: FixedClock, engine: str) -> AsyncIterator[Store]:
    opened = await Store.open(settings.database, clock)
    yield opened
    await opened.close()  # again: closing twice is harmless


def installation(team: str, token: str, *, installer: str = "U0INSTALL", expires_in: int | None = None) -> Installation:
    return Installation(app_id="A0001", team_id=team, team_name=f"Team {team}", bot_token=token, bot_id="B" + team,
                        bot_user_id="U0BOT" + team, bot_scopes="chat:write,commands", user_id=installer,
                        bot_refresh_token="xoxe-1-" + team if expires_in else None, bot_token_expires_in=expires_in)


async def test_a_saved_installation_is_found_per_workspace(store: Store) -> None:
    installs = InstallationStore(store)
    await installs.async_save(installation("T1", "xoxb-one", expires_in=43200))
    await installs.async_save(installation("T2", "xoxb-two"))
    one = await installs.async_find_bot(enterprise_id=None, team_id="T1")
    two = await installs.async_find_bot(enterprise_id=None, team_id="T2")
    assert one is not None and two is not None
    assert (one.bot_token, one.bot_id, one.bot_refresh_token) == ("xoxb-one", "BT1", "xoxe-1-T1")
    assert one.bot_token_expires_at is not None and abs(one.bot_token_expires_at - (time.time() + 43200)) < 60
    assert one.bot_scopes == ["chat:write", "commands"]
    assert (two.bot_token, two.bot_token_expires_at) == ("xoxb-two", None)
    assert await installs.async_find_bot(enterprise_id=None, team_id="T3") is None
    found = await installs.async_find_installation(enterprise_id=None, team_id="T1")
    assert found is not None and (found.bot_token, found.user_id) == ("xoxb-one", "U0INSTALL")


async def test_a_reinstall_replaces_the_token_and_keeps_the_first_installer(store: Store) -> None:
    installs = InstallationStore(store)
    await installs.async_save(installation("T1", "xoxb-old"))
    [first] = await store.installs.listed("slack")
    await installs.async_save(installation("T1", "xoxb-new", installer="U0OTHER"))
    [install] = await store.installs.listed("slack")
    assert (install.bot_token, install.installer_id) == ("xoxb-new", "U0INSTALL")
    assert install.installed_at == first.installed_at


async def test_uninstall_removes_the_token_and_keeps_the_scores(store: Store, clock: FixedClock) -> None:
    installs = InstallationStore(store)
    await installs.async_save(installation("T1", "xoxb-one"))
    await installs.async_save(installation("T2", "xoxb-two"))
    learner = Actor("slack", "T1", "U1", "ada")
    await store.learners.touch(learner)
    await installs.async_delete_all(enterprise_id=None, team_id="T1")
    assert await installs.async_find_bot(enterprise_id=None, team_id="T1") is None
    assert await installs.async_find_bot(enterprise_id=None, team_id="T2") is not None
    [gone, kept] = await store.installs.listed("slack")
    assert (gone.cohort, gone.installed, gone.bot_token) == ("T1", False, None)
    assert kept.installed
    assert await store.count("learners") == 1  # the scores stay until the retention runs out

    assert await store.purge_uninstalled(timedelta(days=30)) == []
    clock.advance(31 * 86400)
    purged = await store.purge_uninstalled(timedelta(days=30))
    assert [str(c) for c in purged] == ["slack:T1"]
    assert await store.count("learners") == 0
    assert [i.cohort for i in await store.installs.listed()] == ["T2"]


async def test_a_reinstall_after_an_uninstall_is_installed_again(store: Store) -> None:
    installs = InstallationStore(store)
    await installs.async_save(installation("T1", "xoxb-one"))
    await installs.async_delete_bot(enterprise_id=None, team_id="T1")
    await installs.async_save(installation("T1", "xoxb-again"))
    bot = await installs.async_find_bot(enterprise_id=None, team_id="T1")
    assert bot is not None and bot.bot_token == "xoxb-again"


async def test_a_user_token_revoked_leaves_the_workspace_installed(store: Store) -> None:
    installs = InstallationStore(store)
    await installs.async_save(installation("T1", "xoxb-one"))
    await installs.async_delete_installation(enterprise_id=None, team_id="T1", user_id="U0INSTALL")
    assert await installs.async_find_bot(enterprise_id=None, team_id="T1") is not None


async def test_an_oauth_state_is_good_once_and_only_until_it_expires(store: Store, clock: FixedClock) -> None:
    states = OAuthStates(store)
    first, second = await states.async_issue(), await states.async_issue()
    assert first != second
    assert await states.async_consume(first)
    assert not await states.async_consume(first)
    assert not await states.async_consume("never-issued")
    clock.advance(601)
    assert not await states.async_consume(second)


async def unused_states(store: Store) -> int:
    return int((await store.engine.read("SELECT count(*) AS n FROM oauth_states"))[0]["n"])


async def test_unused_oauth_states_expire_and_are_bounded(store: Store, clock: FixedClock) -> None:
    states = OAuthStates(store, most=3)
    for _ in range(3):
        await states.async_issue()
    with pytest.raises(TooManyStates):
        await states.async_issue()
    assert await unused_states(store) == 3
    clock.advance(601)  # the three expire unused
    kept = await states.async_issue()
    assert await unused_states(store) == 1
    assert await states.async_consume(kept)


async def test_check_and_health_list_the_installed_workspaces(
        settings: Settings, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, engine: str) -> None:
    for name in ("SLACK_BOT_TOKEN", "SLACK_CLIENT_ID", "DISCORD_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    store = await Store.open(settings.database, SystemClock())  # health reads the heartbeat by the real clock
    installs = InstallationStore(store)
    await installs.async_save(installation("T1", "xoxb-one", installer="U0ADA", expires_in=43200))
    await installs.async_save(installation("T2", "xoxb-two"))
    await installs.async_delete_all(enterprise_id=None, team_id="T2")
    await store.beat()
    await store.close()
    kept = replace(settings, uninstalled_retention_days=30)
    today = datetime.now(UTC).date()

    assert cli.check(kept) == 0
    assert await cli.health(kept) == 0
    for printed in capsys.readouterr().out.split("healthy:"):
        assert f"workspace slack:T1 (Team T1): installed since {today} by U0ADA, its token rotates" in printed
        assert (f"workspace slack:T2 (Team T2): uninstalled on {today}, its scores kept until "
                f"{today + timedelta(days=30)}" in printed)
