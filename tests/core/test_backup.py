"""`studybot backup` while the bot writes: a sound copy holding every answer committed before it began."""

import asyncio
import os
import sqlite3
import sys

from support import REPO, learner, record

from bot.core.clock import SystemClock


async def test_backup_during_a_burst_of_writes(bot, settings, tmp_path) -> None:
    committed: list[int] = []
    stop = asyncio.Event()

    async def writer(n: int) -> None:
        who = learner(f"U{n}")
        lesson = next(iter(bot.library.lessons.values()))
        while not stop.is_set():
            recorded = await record(bot, who, f"q{len(committed)}", lesson_id=lesson.id)
            committed.append(recorded.answer_id)

    writers = [asyncio.create_task(writer(n)) for n in range(4)]
    await asyncio.sleep(0.3)
    before = list(committed)
    target = tmp_path / "copy.db"
    env = {**os.environ, "STUDYBOT_DB": str(settings.db_path)}
    proc = await asyncio.create_subprocess_exec(sys.executable, "-m", "adapters.cli", "backup", str(target), cwd=REPO,
                                                env=env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out, err = await proc.communicate()
    stop.set()
    await asyncio.gather(*writers)
    assert proc.returncode == 0, err.decode()
    assert len(committed) > len(before) > 0  # writes went on before, during and after
    with sqlite3.connect(target) as copy:
        assert copy.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        saved = {row[0] for row in copy.execute("SELECT id FROM answers")}
    assert set(before) <= saved


async def test_backup_of_a_missing_database_says_so(tmp_path) -> None:
    env = {**os.environ, "STUDYBOT_DB": str(tmp_path / "nope" / "x.db")}
    proc = await asyncio.create_subprocess_exec(sys.executable, "-m", "adapters.cli", "backup", str(tmp_path / "c.db"),
                                                cwd=REPO, env=env, stderr=asyncio.subprocess.PIPE)
    _, err = await proc.communicate()
    assert proc.returncode == 2 and b"does not exist" in err


async def test_health_needs_a_fresh_heartbeat(bot, settings) -> None:
    env = {**os.environ, "STUDYBOT_DB": str(settings.db_path)}

    async def health() -> int:
        proc = await asyncio.create_subprocess_exec(sys.executable, "-m", "adapters.cli", "health", cwd=REPO,
                                                    env=env, stdout=asyncio.subprocess.DEVNULL,
                                                    stderr=asyncio.subprocess.DEVNULL)
        return await proc.wait()

    assert await health() == 1  # the scheduler never beat
    bot.store.engine.clock = SystemClock()  # health compares with the real time
    await bot.store.beat()
    assert await health() == 0
