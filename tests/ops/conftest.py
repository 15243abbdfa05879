"""What the operations tests share: `studybot ARGS` run in this process, and a PostgreSQL database
of its own for a test."""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from pg import PgServer
from support import CORE_PACK

from adapters import cli

Run = Callable[..., tuple[int, str, str]]


@pytest.fixture
def studybot(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Iterator[Run]:
    """`studybot ARGS` in this process, from an empty folder, with only the given variables set."""
    monkeypatch.chdir(tmp_path)
    for name in list(os.environ):
        if name.startswith(("SLACK_", "DISCORD_", "STUDYBOT_", "FAKE_")):
            monkeypatch.delenv(name)
    monkeypatch.setenv("STUDYBOT_CONTENT", str(CORE_PACK))
    monkeypatch.setenv("STUDYBOT_DB", str(tmp_path / "bot.db"))
    root = logging.getLogger()
    saved = root.handlers[:], root.level

    def run(*argv: str, **env: str) -> tuple[int, str, str]:
        for name, value in env.items():
            monkeypatch.setenv(name, value)
        with pytest.raises(SystemExit) as done:
            cli.main(list(argv))
        out = capsys.readouterr()
        return int(done.value.code or 0), out.out, out.err

    yield run
    root.handlers[:], _ = saved
    root.setLevel(saved[1])
    logging.captureWarnings(False)


@pytest.fixture
def database(pg_server: PgServer) -> Iterator[str]:
    """A PostgreSQL database of this test's own, dropped after it."""
    url = pg_server.new_database()
    yield url
    pg_server.drop(url)
