"""Shared fixtures: the network guard, no proxy variables, a fixed clock, a bot on a real SQLite
file with the core test pack, and a running Discord stand-in with discord.py pointed at it."""

from __future__ import annotations

import ipaddress
import os
import socket
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import discord
import pg
import pytest
import yarl
from fsrs import Scheduler
from pg import PgServer
from support import CORE_PACK

from bot.core.clock import FixedClock
from bot.core.config import Settings
from bot.runtime.app import StudyBot
from standins.discord_standin import DiscordStandIn

ENGINES = ("sqlite", "postgresql")
PROXY_VARS = ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "ALL_PROXY", "all_proxy")


def _loopback(address: object) -> bool:
    if not isinstance(address, tuple):
        return True  # a Unix socket path
    host = str(address[0])
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@pytest.fixture(autouse=True)
def network_guard(monkeypatch: pytest.MonkeyPatch) -> None:
    """Any connection beyond the loopback fails the test that made it."""
    real_connect, real_connect_ex = socket.socket.connect, socket.socket.connect_ex
    real_getaddrinfo = socket.getaddrinfo

    def check(address: object) -> None:
        if not _loopback(address):
            pytest.fail(f"test tried to reach {address!r}: tests use 127.0.0.1 only", pytrace=False)

    def connect(self: socket.socket, address: object) -> None:
        check(address)
        return real_connect(self, address)

    def connect_ex(self: socket.socket, address: object) -> int:
        check(address)
        return real_connect_ex(self, address)

    def getaddrinfo(host: object, *args: object, **kwargs: object):
        if host is not None:
            check((host if isinstance(host, str) else str(host), 0))
        return real_getaddrinfo(host, *args, **kwargs)

    monkeypatch.setattr(socket.socket, "connect", connect)
    monkeypatch.setattr(socket.socket, "connect_ex", connect_ex)
    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)


@pytest.fixture
def clock() -> FixedClock:
    return FixedClock("2026-11-30T09:00:00+00:00")  # a Monday


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "both_engines: run each test on SQLite and on PostgreSQL")
    config.addinivalue_line("markers", "postgres: runs on PostgreSQL only (skipped, with one line, without a server)")


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Tests marked both_engines run once per database engine; those also marked postgres, on PostgreSQL only."""
    if "engine" not in metafunc.fixturenames:
        return
    if metafunc.definition.get_closest_marker("postgres"):
        metafunc.parametrize("engine", ["postgresql"], indirect=True)
    elif metafunc.definition.get_closest_marker("both_engines"):
        metafunc.parametrize("engine", ENGINES, indirect=True)


@pytest.fixture
def engine(request: pytest.FixtureRequest) -> str:
    """The database engine of this test: SQLite unless the test runs on both."""
    return getattr(request, "param", "sqlite")


@pytest.fixture(scope="session")
def pg_server() -> Iterator[PgServer]:
    """A PostgreSQL server to create test databases in (see tests/pg.py), or the test is skipped."""
    url = os.environ.get(pg.ENV, "").strip()
    started = None
    if not url:
        started = pg.throwaway_server()
        if started is None:
            pytest.skip(pg.HOW)
        url = next(started)
    server = PgServer(url)
    try:
        yield server
    finally:
        server.close()
        if started is not None:
            started.close()


@pytest.fixture
def database_url(engine: str, request: pytest.FixtureRequest) -> Iterator[str | None]:
    """An empty migrated PostgreSQL database for a test on PostgreSQL; None on SQLite."""
    if engine == "sqlite":
        yield None
        return
    server: PgServer = request.getfixturevalue("pg_server")
    yield server.clean_database()


@pytest.fixture
def settings(tmp_path: Path, database_url: str | None) -> Settings:
    return Settings(db_path=tmp_path / "studybot.db", database_url=database_url, content_dir=CORE_PACK,
                    results_dir=tmp_path / "results", round_seconds=60)


@pytest.fixture
async def bot(settings: Settings, clock: FixedClock):
    studybot = await StudyBot.start(settings, clock)
    studybot.ctx.fsrs = Scheduler(enable_fuzzing=False)
    yield studybot
    await studybot.close()


@pytest.fixture(autouse=True)
def clear_proxy_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """slack-sdk reads the proxy variables itself and ignores NO_PROXY: unset them."""
    for name in PROXY_VARS:
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
async def discord_fake(monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[DiscordStandIn]:
    """A running Discord stand-in, with discord.py's REST and gateway pointed at it (undone after)."""
    async with DiscordStandIn() as fake:
        monkeypatch.setattr(discord.http.Route, "BASE", fake.api_base)
        monkeypatch.setattr(discord.gateway.DiscordWebSocket, "DEFAULT_GATEWAY", yarl.URL(fake.gateway_url))
        yield fake
