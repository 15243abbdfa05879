"""Two `studybot run` processes on one machine share the Slack HTTP port (STUDYBOT_REUSE_PORT=1) and
one PostgreSQL database: both start, the kernel spreads new connections between them, and every
request is answered; without the flag the second process names the port in use in one line."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from pathlib import Path

import aiohttp
from pg import free_port
from readiness import logged

from standins.slack_standin import SlackStandIn, post_signed, slash_command

REPO = Path(__file__).resolve().parents[2]


def environment(slack: SlackStandIn, port: int, database_url: str, tmp_path: Path, **more: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if "PROXY" not in k.upper() and not k.startswith(("SLACK_", "DISCORD_", "STUDYBOT_"))}
    env.update(SLACK_BOT_TOKEN=slack.bot_token, SLACK_SIGNING_SECRET=slack.signing_secret, SLACK_API_URL=slack.api_url,
               STUDYBOT_HTTP_HOST="127.0.0.1", STUDYBOT_HTTP_PORT=str(port), STUDYBOT_DATABASE_URL=database_url,
               STUDYBOT_CONTENT=str(REPO / "content"), STUDYBOT_RESULTS_DIR=str(tmp_path / "results"),
               STUDYBOT_DB=str(tmp_path / "unused.db"), **more)
    return env


async def start(env: dict[str, str], log: Path) -> asyncio.subprocess.Process:
    """`studybot run`, returned once its log says Slack is connected (the port is shared, so a
    connection to it proves nothing about this process)."""
    with log.open("ab") as out:
        proc = await asyncio.create_subprocess_exec(sys.executable, "-m", "adapters.cli", "run", env=env,
                                                    cwd=log.parent, stdin=asyncio.subprocess.DEVNULL,
                                                    stdout=out, stderr=out)
    await logged(log, "slack connected", proc)
    return proc


async def stop(proc: asyncio.subprocess.Process) -> int:
    if proc.returncode is None:
        proc.send_signal(signal.SIGTERM)
    return await asyncio.wait_for(proc.wait(), 15)


async def test_two_processes_share_one_slack_port(tmp_path: Path, pg_server) -> None:
    url = pg_server.new_database()
    port = free_port()
    async with SlackStandIn() as slack:
        env = environment(slack, port, url, tmp_path, STUDYBOT_REUSE_PORT="1")
        logs = [tmp_path / "first.log", tmp_path / "second.log"]
        procs = [await start(env, logs[0])]
        try:
            procs.append(await start(env, logs[1]))
            connector = aiohttp.TCPConnector(limit=0, force_close=True)  # a new connection per request
            async with aiohttp.ClientSession(connector=connector) as session:
                said = await asyncio.gather(*(post_signed(session, *slash_command("/glossary", "mfu"),
                                                          url=f"http://127.0.0.1:{port}/slack/events")
                                              for _ in range(40)))
            assert all(status == 200 and "MFU" in text for status, text in said)
        finally:
            codes = [await stop(p) for p in procs]
        assert codes == [0, 0], [log.read_text()[-1500:] for log in logs]
        handled = [log.read_text().count("handled platform=slack") for log in logs]
        assert sum(handled) == 40 and min(handled) > 0, handled  # both processes answered some
    pg_server.drop(url)


async def test_without_the_flag_the_second_process_names_the_port_in_use(tmp_path: Path, pg_server) -> None:
    url = pg_server.new_database()
    port = free_port()
    async with SlackStandIn() as slack:
        first = await start(environment(slack, port, url, tmp_path, STUDYBOT_REUSE_PORT="1"), tmp_path / "first.log")
        try:
            second = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "adapters.cli", "run", env=environment(slack, port, url, tmp_path),
                cwd=tmp_path, stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE)
            _, err = await asyncio.wait_for(second.communicate(), 30)
        finally:
            await stop(first)
    assert second.returncode == 2
    assert err.decode().splitlines()[-1] == (f"studybot: STUDYBOT_HTTP_PORT: port {port} on 127.0.0.1 is in use; "
                                             "stop the program that holds it or set STUDYBOT_HTTP_PORT to a free port")
    pg_server.drop(url)
