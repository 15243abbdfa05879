"""Reloading the lesson packs of a running studybot process: `studybot reload` checks them and
signals the process named by the pid file beside the database; SIGHUP does the same directly.
A pack with problems is refused (by the command, one problem a line; by the process, which keeps
serving the packs it had); a good one is in use from the next event, as the process logs."""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import signal
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from readiness import until
from support import CORE_PACK, REPO
from test_console import Console

from adapters.runner import pid_file

HERE = Path(__file__).resolve().parent
PROBLEM = re.compile(r"^\S+:\d+: \S+: .+$")  # file:line: field: message
WORDINGS = ("What does tensor parallelism split?", "Which part of the work does tensor parallelism split?",
            "Tensor parallelism splits what, exactly?")
RELOADED = "lesson packs reloaded: 1 lesson(s), 4 questions"


def environment(tmp_path: Path, content: Path, **extra: str) -> dict[str, str]:
    (tmp_path / "db").mkdir(exist_ok=True)
    env = {k: v for k, v in os.environ.items()
           if "PROXY" not in k.upper() and not k.startswith(("SLACK_", "DISCORD_", "STUDYBOT_", "FAKE_"))}
    env.update(STUDYBOT_DB=str(tmp_path / "db" / "studybot.db"), STUDYBOT_CONTENT=str(content),
               STUDYBOT_RESULTS_DIR=str(tmp_path / "results"), PYTHONPATH=f"{HERE}{os.pathsep}{REPO}", **extra)
    return env


@pytest.fixture
def content(tmp_path: Path) -> Path:
    folder = tmp_path / "content"
    shutil.copytree(CORE_PACK, folder)
    return folder


def reword(content: Path, old: str, new: str) -> None:
    quiz = content / "basics" / "quiz.yaml"
    quiz.write_text(quiz.read_text().replace(old, new))


def break_pack(content: Path) -> None:
    """A question without its model answer, and a glossary that is not valid YAML."""
    quiz, glossary = content / "basics" / "quiz.yaml", content / "basics" / "glossary.yaml"
    quiz.write_text(re.sub(r"(?m)^    model_answer: .*\n", "", quiz.read_text()))
    glossary.write_text(glossary.read_text() + "\n  - term: [unclosed\n")


async def studybot_reload(tmp_path: Path, env: dict[str, str]) -> tuple[int, str, str]:
    """`studybot reload` as an operator runs it, from another folder."""
    proc = await asyncio.create_subprocess_exec(sys.executable, "-m", "adapters.cli", "reload", cwd=tmp_path, env=env,
                                                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out, err = await asyncio.wait_for(proc.communicate(), 30)
    return proc.returncode or 0, out.decode(), err.decode()


async def logged(log: Path, condition: Callable[[str], bool], what: str,
                 proc: asyncio.subprocess.Process | None = None) -> str:
    await until(lambda: condition(log.read_text()), what, proc, log)
    return log.read_text()


async def test_reload_and_sighup_swap_the_packs_of_a_running_console(tmp_path: Path, content: Path) -> None:
    env = environment(tmp_path, content)
    log = tmp_path / "console.log"
    with log.open("ab") as err:
        proc = await asyncio.create_subprocess_exec(sys.executable, "-m", "adapters.cli", "console", cwd=tmp_path,
                                                    env=env, stdin=asyncio.subprocess.PIPE,
                                                    stdout=asyncio.subprocess.PIPE, stderr=err)
    console = Console(proc)
    marker = pid_file(tmp_path / "db" / "studybot.db")
    try:
        await console.ready()
        assert marker.read_text() == f"{proc.pid}\n"
        await console.type("/quiz")
        assert WORDINGS[0] in await console.reply()

        reword(content, WORDINGS[0], WORDINGS[1])
        code, out, err_text = await studybot_reload(tmp_path, env)
        assert (code, err_text) == (0, "")
        assert f"asked studybot (process {proc.pid}) to reload the lesson packs" in out
        await logged(log, lambda text: RELOADED in text, "the reload", proc)
        await console.type("/quiz")
        assert WORDINGS[1] in await console.reply()

        break_pack(content)
        code, out, err_text = await studybot_reload(tmp_path, env)
        assert code == 2 and "Traceback" not in out + err_text
        problems = [line for line in out.splitlines() if "warning:" not in line]
        assert len(problems) == 2 and all(PROBLEM.match(p) for p in problems), out
        assert any("quiz.yaml:" in p and "model_answer" in p for p in problems), out
        assert any("glossary.yaml:" in p and "not valid YAML" in p for p in problems), out
        assert err_text.splitlines() == ["studybot: 2 problem(s) found, so nothing was reloaded: fix them, then run "
                                         "studybot reload again"]

        proc.send_signal(signal.SIGHUP)  # the process checks for itself, and keeps what it had
        text = await logged(log, lambda text: "still serving the ones loaded before" in text, "the refusal", proc)
        assert all(p in text for p in problems)
        await console.type("/quiz")
        assert WORDINGS[1] in await console.reply()

        shutil.rmtree(content)
        shutil.copytree(CORE_PACK, content)
        reword(content, WORDINGS[0], WORDINGS[2])
        proc.send_signal(signal.SIGHUP)
        await logged(log, lambda text: text.count(RELOADED) == 2, "the second reload", proc)
        await console.type("/quiz")
        assert WORDINGS[2] in await console.reply()
        assert await console.quit() == 0
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    assert "Traceback" not in log.read_text()
    assert not marker.exists()


async def test_studybot_run_reloads_on_studybot_reload(tmp_path: Path, content: Path) -> None:
    """`studybot run` (with the fake platform) writes the pid file, reloads when asked, and removes the
    file when it stops."""
    env = environment(tmp_path, content, FAKE_PLATFORM="serve")
    log = tmp_path / "run.log"
    with log.open("ab") as out:
        proc = await asyncio.create_subprocess_exec(sys.executable, str(HERE / "fake_platform.py"), "run",
                                                    cwd=tmp_path, env=env, stdin=asyncio.subprocess.DEVNULL,
                                                    stdout=out, stderr=out)
    marker = pid_file(tmp_path / "db" / "studybot.db")
    try:
        await logged(log, lambda text: "studybot is running on fake" in text, "serving")
        reword(content, WORDINGS[0], WORDINGS[1])
        code, said, err = await studybot_reload(tmp_path, env)
        assert (code, err) == (0, ""), said
        assert f"(process {proc.pid})" in said
        await logged(log, lambda text: RELOADED in text, "the reload", proc)
        proc.send_signal(signal.SIGTERM)
        assert await asyncio.wait_for(proc.wait(), 10) == 0
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    assert "Traceback" not in log.read_text()
    assert not marker.exists()
