"""No output, argument list or file mode reveals a secret: a generated PostgreSQL password (with the `%`,
`/` and `@` that must be percent-encoded in a URL) and a workspace's bot token are looked for in every
output of `check`, `run`, `health`, `migrate-db`, `backup` and `restore`, in the argument lists of the
processes they start (`ps` shows them to every user: pg_dump and pg_restore are wrapped to record theirs,
then run for real), and in the files they write, under a good URL and broken ones."""

from __future__ import annotations

import asyncio
import os
import re
import secrets
import stat
import subprocess
import sys
from pathlib import Path
from urllib.parse import quote, urlsplit

import pytest
from pg import PgServer, free_port, with_database
from test_run_signals import HERE, environment, until

from bot.core.clock import SystemClock
from bot.store import Store
from bot.store.installs import Install

pytestmark = pytest.mark.postgres
KEY = "o8PZ3gwQyS8cXQbRydOEkZ3lq7QMX0w0ON2AAPiMXbE="  # a Fernet key for these tests only

PASSWORD = f"S{secrets.token_hex(5)}%Q{secrets.token_hex(5)}/{secrets.token_hex(5)}@{secrets.token_hex(4)}"
TOKEN = f"xoxb-{secrets.randbelow(10**12)}-{secrets.token_hex(12)}"
WRAPPER = """#!/bin/sh
# Records what `ps` shows of this process (its argument list) and whether a password came through the
# environment, then runs the real tool.
tr '\\0' ' ' < /proc/$$/cmdline >> "{log}"; echo >> "{log}"
[ -n "$PGPASSWORD" ] && echo "PGPASSWORD given" >> "{log}"
exec {real} "$@"
"""


def forbidden() -> list[str]:
    """The password as written, encoded and decoded, each piece of it, and the token."""
    pieces = [p for p in re.split(r"[%/@]", PASSWORD) if len(p) >= 4]
    return [PASSWORD, quote(PASSWORD, safe=""), *pieces, TOKEN, TOKEN.split("-", 2)[2]]


def assert_nothing_shown(what: str, text: str) -> None:
    for secret in forbidden():
        assert secret not in text, f"{what} shows a secret ({secret[:4]}…):\n{text[-1500:]}"


def with_password(url: str, password: str, **parts: str) -> str:
    """The server's URL with this user, password (as given: encode it first for a good URL) and parts."""
    split = urlsplit(url)
    host = f"{parts.get('host', split.hostname)}:{parts.get('port', split.port or 5432)}"
    return f"postgresql://{parts.get('user', split.username)}:{password}@{host}{parts.get('path', split.path)}"


def wrap_tools(tmp_path: Path) -> tuple[Path, Path]:
    """A folder with pg_dump and pg_restore wrappers, and the log they write."""
    folder, log = tmp_path / "bin", tmp_path / "tools.log"
    folder.mkdir(exist_ok=True)
    for tool in ("pg_dump", "pg_restore"):
        real = subprocess.run(["which", tool], capture_output=True, text=True).stdout.strip()
        if not real:
            pytest.skip(f"{tool} is not installed")
        wrapper = folder / tool
        wrapper.write_text(WRAPPER.format(log=log, real=real))
        wrapper.chmod(0o755)
    return folder, log


async def studybot(tmp_path: Path, *argv: str, **extra: str) -> str:
    """A studybot command run to its end with the fake platform registered: its stdout and stderr."""
    proc = await asyncio.create_subprocess_exec(sys.executable, str(HERE / "fake_platform.py"), *argv, cwd=tmp_path,
                                                env=environment(tmp_path, **extra), stdin=asyncio.subprocess.DEVNULL,
                                                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT)
    out, _ = await asyncio.wait_for(proc.communicate(), 60)
    return f"$ studybot {argv[0]} (exit {proc.returncode})\n{out.decode()}"


async def run_until_serving(tmp_path: Path, url: str, env: dict[str, str]) -> str:
    """`studybot run` until it serves, with the process list read meanwhile; then stopped with SIGTERM."""
    log = tmp_path / "run.log"
    with log.open("wb") as out:
        proc = await asyncio.create_subprocess_exec(
            sys.executable, str(HERE / "fake_platform.py"), "run", cwd=tmp_path,
            env=environment(tmp_path, STUDYBOT_DATABASE_URL=url, FAKE_PLATFORM="serve", **env),
            stdin=asyncio.subprocess.DEVNULL, stdout=out, stderr=out)
    await until(lambda: "studybot is running" in log.read_text(), "serving", proc, log)
    listed = subprocess.run(["ps", "-eo", "pid,args"], capture_output=True, text=True).stdout
    proc.terminate()
    await asyncio.wait_for(proc.wait(), 20)
    return f"$ ps -eo pid,args\n{listed}\n$ studybot run\n{log.read_text()}"


async def store_a_token(url: str) -> None:
    store = await Store.open(url, SystemClock())
    try:
        await store.installs.save(Install("slack", "T1", TOKEN, installer_id="U1", team_name="Team"))
    finally:
        await store.close()


def private(path: Path) -> bool:
    return stat.S_IMODE(path.stat().st_mode) & 0o077 == 0


async def test_no_output_argument_list_or_file_shows_the_password_or_a_token(
        tmp_path: Path, pg_server: PgServer, monkeypatch: pytest.MonkeyPatch) -> None:
    bin_folder, tools_log = wrap_tools(tmp_path)
    env = {"PATH": f"{bin_folder}{os.pathsep}{os.environ['PATH']}", "STUDYBOT_SECRET_KEY": KEY}
    monkeypatch.setenv("STUDYBOT_SECRET_KEY", KEY)
    source = pg_server.new_database()
    good = with_password(source, quote(PASSWORD, safe=""))  # the server trusts 127.0.0.1: any password is taken
    await store_a_token(good)
    broken = {
        "unencoded": with_password(source, PASSWORD),
        "unreachable": with_password(source, quote(PASSWORD, safe=""), port=str(free_port())),
        "no such database": with_password(with_database(source, "studybot_none"), quote(PASSWORD, safe="")),
    }
    shown: list[str] = []
    try:
        for name, url in {"good": good, **broken}.items():
            folder = tmp_path / re.sub(r"\W", "_", name)
            folder.mkdir()
            given = {**env, "STUDYBOT_DATABASE_URL": url}
            for argv in (("check",), ("health",), ("backup", str(folder / "dump.pg"))):
                shown.append(await studybot(folder, *argv, **given))
            if name == "good":
                shown.append(await run_until_serving(folder, url, env))
                shown.append(await studybot(folder, "restore", str(folder / "dump.pg"), **given))
                assert private(folder / "dump.pg"), "the dump holds every bot token: 0600"
                assert "PGPASSWORD given" in tools_log.read_text()  # the password went through the environment
            else:
                shown.append(await studybot(folder, "run", **given, FAKE_PLATFORM="serve"))
                shown.append(await studybot(folder, "restore", str(tmp_path / "good" / "dump.pg"), **given))
            sqlite_given = {k: v for k, v in env.items()}
            shown.append(await studybot(folder, "console", **sqlite_given))  # a SQLite file for migrate-db
            target = pg_server.empty_database() if name == "good" else None
            to = with_password(target, quote(PASSWORD, safe="")) if target else url
            shown.append(await studybot(folder, "migrate-db", "--to", to, **sqlite_given))
            if target:
                pg_server.drop(target)
        everything = "\n".join(shown)
        assert_nothing_shown("the commands' output", everything)
        assert_nothing_shown("the argument lists of pg_dump and pg_restore", tools_log.read_text())
        assert everything.count("(exit 0)") >= 5, everything[-3000:]  # the good URL's commands worked
        assert "copied" in everything and "backed up" in everything and "restored" in everything
        for file in tmp_path.rglob("*"):
            if file.is_file() and file.suffix in (".db", ".pg", ".pid") or file.name.endswith(("-wal", "-shm")):
                assert private(file), f"{file} is readable by others"
                assert TOKEN not in file.read_bytes().decode("latin-1")
    finally:
        pg_server.drop(source)
