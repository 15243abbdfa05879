"""Shared fixtures: the network guard, a fixed clock, and a bot on a real SQLite file."""

from __future__ import annotations

import ipaddress
import socket
from pathlib import Path

import pytest
from fsrs import Scheduler

from bot.app import StudyBot
from bot.clock import FixedClock
from bot.config import Settings
from support import CONTENT


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


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings(db_path=tmp_path / "studybot.db", content_dir=CONTENT, results_dir=tmp_path / "results",
                    round_seconds=60)


@pytest.fixture
async def bot(settings: Settings, clock: FixedClock):
    studybot = await StudyBot.start(settings, clock)
    studybot.fsrs = Scheduler(enable_fuzzing=False)
    yield studybot
    await studybot.close()
