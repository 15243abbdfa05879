"""`studybot reload` on PostgreSQL reaches every process on the database (NOTIFY, which each process
LISTENs for), wherever it runs; SIGHUP still reloads the one process it is sent to."""

from __future__ import annotations

import asyncio
import shutil
import signal
import sys
from pathlib import Path

import psycopg
import pytest
from readiness import READY_WITHIN
from support import CORE_PACK
from test_console import Console
from test_reload_process import RELOADED, WORDINGS, environment, logged, reword, studybot_reload

from bot.store.postgres_engine import redacted

pytestmark = pytest.mark.postgres


async def listening(url: str, processes: int) -> None:
    """Wait until that many connections LISTEN on the database (each process's listener)."""
    deadline = asyncio.get_running_loop().time() + READY_WITHIN
    while asyncio.get_running_loop().time() < deadline:
        async with await psycopg.AsyncConnection.connect(url, autocommit=True) as c:
            cursor = await c.execute("SELECT COUNT(*) FROM pg_stat_activity WHERE datname = current_database()"
                                     " AND query LIKE 'LISTEN %'")
            row = await cursor.fetchone()
            if row is not None and row[0] >= processes:
                return
        await asyncio.sleep(0.05)
    pytest.fail(f"{processes} processes never listened")


async def test_studybot_reload_reaches_every_process_and_sighup_one(tmp_path: Path, database: str) -> None:
    content = tmp_path / "content"
    shutil.copytree(CORE_PACK, content)
    env = environment(tmp_path, content, STUDYBOT_DATABASE_URL=database)
    consoles, logs = [], []
    try:
        for n in range(2):
            logs.append(log := tmp_path / f"console{n}.log")
            with log.open("ab") as err:
                proc = await asyncio.create_subprocess_exec(
                    sys.executable, "-m", "adapters.cli", "console", cwd=tmp_path, env=env,
                    stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=err)
            consoles.append(Console(proc))
        for console in consoles:
            await console.ready()
        await listening(database, 2)

        reword(content, WORDINGS[0], WORDINGS[1])
        code, out, err_text = await studybot_reload(tmp_path, env)
        assert (code, err_text) == (0, "")
        assert f"asked every studybot process on {redacted(database)} to reload the lesson packs" in out
        for log in logs:
            await logged(log, lambda text: RELOADED in text, "the reload")
        for console in consoles:
            await console.type("/quiz")
            assert WORDINGS[1] in await console.reply()

        reword(content, WORDINGS[1], WORDINGS[2])
        consoles[0].proc.send_signal(signal.SIGHUP)  # this one only
        await logged(logs[0], lambda text: text.count(RELOADED) == 2, "the reload on SIGHUP")
        await consoles[0].type("/quiz")
        await consoles[1].type("/quiz")
        assert WORDINGS[2] in await consoles[0].reply()
        assert WORDINGS[1] in await consoles[1].reply()  # the other kept its packs
        assert logs[1].read_text().count(RELOADED) == 1
        for console in consoles:
            assert await console.quit() == 0
    finally:
        for console in consoles:
            if console.proc.returncode is None:
                console.proc.kill()
                await console.proc.wait()
    assert not any("Traceback" in log.read_text() for log in logs)
    assert not list((tmp_path / "db").glob("*.pid"))  # on PostgreSQL no pid file is written
