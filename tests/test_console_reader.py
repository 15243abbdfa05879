"""The second reader on the console, tried as the README says: the OpenAI-compatible stand-in started with
`python -m standins.openai_standin` (it prints its /v1 URL), `STUDYBOT_READER_URL` and `STUDYBOT_READER_MODEL`
pointed at it; a short answer graded short of the point shows the second opinion under the verdict, and
`/audit disputes` shows it beside the dispute."""

import asyncio
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from readiness import READY_WITHIN
from support import CORE_PACK, REPO
from test_console import Console, answer_until_short, numbered

from bot.content.loader import load_library

STANDIN = [sys.executable, "-m", "standins.openai_standin"]
IN_OTHER_WORDS = "FSDP shards the parameters, and it pays with more chatter"  # the rubric misses the second point


@pytest.fixture
async def reader_url() -> AsyncIterator[str]:
    """The stand-in in a subprocess, as a newcomer runs it; its URL as it prints it."""
    proc = await asyncio.create_subprocess_exec(*STANDIN, cwd=REPO, stdout=asyncio.subprocess.PIPE)
    try:
        assert proc.stdout is not None
        line = (await asyncio.wait_for(proc.stdout.readline(), READY_WITHIN)).decode()
        assert line.startswith("serving http://127.0.0.1:") and line.rstrip().endswith("/v1"), line
        yield line.split()[1]
    finally:
        proc.kill()
        await proc.wait()


def test_the_standin_says_how_to_run_it() -> None:
    shown = subprocess.run([*STANDIN, "--help"], cwd=REPO, capture_output=True, text=True, check=False)
    assert shown.returncode == 0 and "prints its /v1 URL" in shown.stdout
    wrong = subprocess.run([*STANDIN, "eighty"], cwd=REPO, capture_output=True, text=True, check=False)
    assert wrong.returncode == 2 and "Traceback" not in wrong.stderr and "invalid int value" in wrong.stderr


async def test_a_second_opinion_under_the_verdict_and_beside_the_dispute(
        tmp_path: Path, reader_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STUDYBOT_READER_URL", reader_url)
    monkeypatch.setenv("STUDYBOT_READER_MODEL", "standin")
    lesson = next(iter(load_library(CORE_PACK).lessons.values()))
    async with Console.running(tmp_path, CORE_PACK) as console:
        await console.type("/quiz")
        await answer_until_short(console, lesson)
        await console.type(IN_OTHER_WORDS)
        feedback = await console.reply()
        assert "🔎 A second reader also finds: “It pays with extra communication”" in feedback, feedback
        await console.type(numbered(feedback, "Ask my instructor"))
        assert "Sent to your instructor" in await console.reply()
        await console.type("/audit disputes")
        listed = await console.reply()
        assert "It pays with extra communication ('it pays with more chatter')" in listed, listed
        assert "second reader (advice only): finds" in listed
        assert await console.quit() == 0
