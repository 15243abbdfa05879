"""The console chat in a pseudo-terminal, as a person types into it: readline's line editing and
history, Ctrl-C and Ctrl-D ending the chat, and numbers that answer only the message above them."""

from __future__ import annotations

import fcntl
import os
import pty
import re
import select
import signal
import sqlite3
import subprocess
import sys
import termios
import time
from pathlib import Path

import pytest
from readiness import READY_WITHIN
from support import CORE_PACK, REPO

LEFT, UP, CTRL_C, CTRL_D, BACKSPACE = "\x1b[D", "\x1b[A", "\x03", "\x04", "\x7f"
ESCAPES = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b[=>]|\r")


def _controlling_terminal() -> None:
    """In the child: a session of its own whose controlling terminal is the pty (so Ctrl-C is a SIGINT)."""
    os.setsid()
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)


class Terminal:
    """`studybot console` on a pseudo-terminal; `typed()` sends keys, `expect()` reads the screen."""

    def __init__(self, tmp_path: Path, config: str = "") -> None:
        self.db = tmp_path / "db" / "studybot.db"
        env = {k: v for k, v in os.environ.items() if not k.startswith(("STUDYBOT_", "SLACK_", "DISCORD_"))}
        env.update(TERM="xterm", INPUTRC="/dev/null", STUDYBOT_DB=str(self.db), STUDYBOT_CONTENT=str(CORE_PACK),
                   STUDYBOT_RESULTS_DIR=str(tmp_path / "results"))
        if config:
            (tmp_path / "studybot.yaml").write_text(config)
            env.update(STUDYBOT_CONFIG=str(tmp_path / "studybot.yaml"))
        self.master, slave = pty.openpty()
        self.proc = subprocess.Popen([sys.executable, "-m", "adapters.cli", "console"], stdin=slave, stdout=slave,
                                     stderr=slave, cwd=REPO, env=env, preexec_fn=_controlling_terminal)
        os.close(slave)
        self.screen = ""
        self.seen_up_to = 0

    def typed(self, keys: str) -> None:
        os.write(self.master, keys.encode())

    def _read(self, deadline: float) -> bool:
        ready, _, _ = select.select([self.master], [], [], max(0.0, deadline - time.monotonic()))
        if not ready:
            return False
        try:
            chunk = os.read(self.master, 65536)
        except OSError:  # the child closed the terminal
            return False
        self.screen += chunk.decode(errors="replace")
        return bool(chunk)

    def expect(self, text: str, within: float = 20.0) -> str:
        """Read until `text` shows (escape codes aside); what showed since the last expect."""
        deadline = time.monotonic() + within
        while (found := self.plain().find(text, self.seen_up_to)) < 0:
            if not self._read(deadline):
                raise AssertionError(f"{text!r} never showed; the screen:\n{self.plain()[-1500:]}")
        start, self.seen_up_to = self.seen_up_to, found + len(text)
        return self.plain()[start:self.seen_up_to]

    def plain(self) -> str:
        return ESCAPES.sub("", self.screen)

    def ended(self, within: float = 20.0) -> int:
        deadline = time.monotonic() + within
        while self.proc.poll() is None and time.monotonic() < deadline:
            self._read(min(deadline, time.monotonic() + 0.2))
        while self._read(time.monotonic() + 0.1):
            pass
        return self.proc.wait(timeout=1)

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        os.close(self.master)

    def answers(self) -> int:
        with sqlite3.connect(self.db) as db:
            return int(db.execute("SELECT count(*) FROM answers").fetchone()[0])


@pytest.fixture
def terminal(tmp_path: Path):
    term = Terminal(tmp_path)
    term.expect("Type /help", within=READY_WITHIN)  # the banner: the console has started (slowly, on a busy machine)
    yield term
    term.close()


def test_arrow_keys_edit_the_line_and_the_history_recalls_it(terminal: Terminal) -> None:
    terminal.expect("> ")
    terminal.typed(f"/glossary FSP{LEFT}D\r")  # the left arrow moves back over the P: "/glossary FSDP"
    assert "Fully Sharded Data Parallel" in terminal.expect("Related:")
    terminal.expect("> ")  # a person types at the prompt, once readline reads the terminal
    terminal.typed(f"{UP}{BACKSPACE * 4}MFU\r")  # the line again, edited: "/glossary MFU"
    shown = terminal.expect("Model FLOPs utilization")
    assert "No term" not in shown
    terminal.expect("> ")
    terminal.typed(f"{UP}{UP}\r")  # two lines back: FSDP again
    terminal.expect("Fully Sharded Data Parallel")
    terminal.expect("> ")
    terminal.typed(CTRL_D)
    assert terminal.ended() == 0
    assert "Traceback" not in terminal.plain()


@pytest.mark.parametrize("at", ["the command prompt", "a short-answer prompt"])
def test_ctrl_c_ends_the_chat_cleanly(terminal: Terminal, at: str) -> None:
    terminal.expect("> ")
    if at == "a short-answer prompt":
        terminal.typed("/teachback\r")
        terminal.expect("answer> ")
    terminal.typed("/glossary half-typ")
    terminal.typed(CTRL_C)
    assert terminal.ended() == 0
    assert "Traceback" not in terminal.plain() and "KeyboardInterrupt" not in terminal.plain()
    assert terminal.plain().rstrip().endswith("Bye.")


def test_a_number_answers_only_the_message_that_offered_it(terminal: Terminal) -> None:
    terminal.expect("> ")
    terminal.typed("/quiz\r")
    asked = terminal.expect("> ")
    assert "\nA. " in asked and "1. A." not in asked  # the choices, each under the one label it shows
    terminal.typed("/glossary MFU\r")
    terminal.expect("Model FLOPs utilization")
    terminal.expect("> ")
    terminal.typed("1\r")  # a reflex "1": the message above it (the glossary's) offered no choices
    refused = terminal.expect("> ")
    assert "1 is not a choice here" in refused and "Nothing was recorded" in refused
    assert terminal.answers() == 0
    terminal.typed("/teachback\r")
    hint = terminal.expect("answer> ")
    assert "a number typed here is part of your answer, not a choice" in hint
    terminal.typed("/quit\r")
    assert terminal.ended() == 0


def test_ctrl_c_while_the_chat_is_idle_is_not_a_traceback_either(terminal: Terminal) -> None:
    terminal.expect("> ")
    terminal.proc.send_signal(signal.SIGINT)
    assert terminal.ended() == 0
    assert "Traceback" not in terminal.plain()


def test_a_message_arriving_at_the_prompt_redraws_it(tmp_path: Path) -> None:
    """A round's reveal arrives while the learner sits at `> `: it is printed on a line of its own (the prompt's
    line cleared first), and the prompt is drawn again under it, with what was typed so far."""
    terminal = Terminal(tmp_path, config="rounds:\n  shortest: 5\n")
    try:
        terminal.expect("Type /help", within=READY_WITHIN)
        terminal.typed("/quiz round 1 seconds:5\r")
        terminal.expect("Round started")
        terminal.expect("> ")
        terminal.typed("/glo")  # typing, not yet sent, when the reveal comes
        terminal.expect("Round over", within=READY_WITHIN)
        assert "\r\x1b[K[update to the message above" in terminal.screen  # not after the `> `
        terminal.expect("> /glo")  # the prompt again, below, with the line being typed
        terminal.typed("ssary MFU\r")
        assert "Model FLOPs utilization" in terminal.expect("> ")
        terminal.typed("/quit\r")
        assert terminal.ended() == 0
    finally:
        terminal.close()
