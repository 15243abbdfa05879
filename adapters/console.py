"""The console chat: the same command lines as the platforms, in a terminal, with no network.

Choices are shown one a line under one label each, and a form's answer is the next line typed; what a
line answers follows the rules of `adapters/console_choices.py`. In a terminal, lines are read with the
standard `readline` (arrow keys edit the line, up and down walk the history); Ctrl-D or Ctrl-C end the
chat at any prompt. Timers (a round's reveal) fire in the background, and what is due when the chat
ends (a stopped round's summary) is shown before it does; a round the learner started stops when the
chat ends (/quit, end of input, Ctrl-C), its summary shown before "Bye.".
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import logging
import os
import secrets
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from dataclasses import replace
from typing import TextIO

from adapters.console_choices import Pending, Shown
from adapters.replies import ChatAdapter, Inbound
from bot.core.errors import DeliveryFailed
from bot.core.messages import (
    Actor,
    Audience,
    Command,
    Form,
    MessageRef,
    Place,
    Reply,
)
from bot.runtime.app import StudyBot
from bot.runtime.scheduler import fire_due, run_scheduler

log = logging.getLogger("studybot.console")

PLATFORM, COHORT, CHANNEL = "console", "local", "console"
BANNER = "studybot console. Type /help for the commands, /quit (or Ctrl-D) to leave."
PROMPT, ANSWER_PROMPT = "> ", "answer> "
CLEAR_LINE = "\r\x1b[K"  # back to the line's start, and erase it (ANSI, as every terminal reads it)
FORM_HINT = "(type it on the next line; a number typed here is part of your answer, not a choice)"
QUIT = ("/quit", "/exit")
SHOWN_INLINE = ".txt"  # a saved file of another kind (a CSV, an HTML report) is named by its path only


class ConsoleTurn:
    """One typed line, answered by printing: the console answers with any reply, and has no modals
    (a form is the next line typed)."""

    opens_forms = form_answers = False
    answers = (Audience.PRIVATE, Audience.PUBLIC)

    def __init__(self, chat: ConsoleChat) -> None:
        self.chat = chat

    async def open_form(self, reply: Reply) -> bool:
        return False

    async def answer(self, reply: Reply | None, *, more: bool) -> bool | MessageRef:
        return True if reply is None else await self._show(reply) or True

    async def say(self, reply: Reply) -> None:
        await self._show(reply)

    async def _show(self, reply: Reply) -> MessageRef | None:
        """Print a reply. The console has no direct messages: a file sent by DM was shown inline
        with where it was written, in place of the private reply that would point to the DM."""
        if self.chat.shown_file and not (reply.choices or reply.form or reply.file):
            return None
        return await self.chat.send(reply)

    async def fail(self, text: str) -> None:
        self.chat.say(text)


class ConsoleChat(ChatAdapter):
    platform = PLATFORM
    title = "The console"
    undeliverable = {True: "The console could not show that post.", False: "The console could not show that."}

    def __init__(self, bot: StudyBot, out: TextIO = sys.stdout, user: str = "learner",
                 language: str | None = None) -> None:
        super().__init__(bot)
        self.out = out
        self.actor = Actor(PLATFORM, COHORT, user, user, bot.settings.instructors.console,
                           language or terminal_language())
        self.place = Place(PLATFORM, COHORT, CHANNEL)
        self.pending = Pending()  # what the next line typed answers (adapters/console_choices.py has the rules)
        self._headings: dict[str, str] = {}  # the first line of each message this chat showed (its edits name it)
        self.shown_file = False  # whether this line's replies showed a file sent by DM
        self._chat_mark = secrets.token_hex(4)  # in each message id: an earlier chat's post is told apart
        self._posted = 0
        self.unread = False  # the reader of the output went away (`studybot console | head`): the chat ends
        self.started_rounds: set[int] = set()  # the rounds this chat started (they stop when it ends)
        self.aside: Callable[[], AbstractContextManager[None]] = contextlib.nullcontext  # see LineReader.aside

    @property
    def choices(self) -> dict[str, str]:
        """Each pending label (as typed, upper case) with its choice token."""
        return self.pending.choices

    @property
    def form(self) -> Form | None:
        """The form waiting for the next line."""
        return self.pending.form

    @property
    def prompt(self) -> str:
        return ANSWER_PROMPT if self.pending.wants_text else PROMPT

    async def line(self, text: str) -> None:
        """Handle one typed line."""
        text = text.strip()
        if not text:
            return
        event = self.pending.read(text, self.actor, self.place)
        if isinstance(event, str):  # refused, with what to type instead
            self.say(event)
            return
        self.shown_file = False
        self.pending.typed(text, event)

        async def happened() -> Inbound:
            return event

        try:
            await self.handle(ConsoleTurn(self), happened)
        finally:
            self.pending.answered()
        if isinstance(event, Command) and event.name == "quiz" and event.args.split()[:1] == ["round"]:
            running = await self.bot.store.rounds.in_channel(self.place)
            if running is not None and running.starter == self.actor.user_id:
                self.started_rounds.add(running.id)

    async def send(self, reply: Reply) -> MessageRef:
        """The console's Outbox: print the reply; its choices or its form are what the next line
        answers (see adapters/console_choices.py)."""
        replying = self.pending.line is not None
        text = reply.text.replace("**", "")  # the core's bold markers mean nothing in a terminal
        self._posted += 1
        here = f"{self._chat_mark}.{self._posted}"
        self._headings[here] = _heading(text)
        with contextlib.nullcontext() if replying else self.aside():  # a message on its own: the prompt redrawn
            self._show(reply, text, self.pending.shown(reply, here))
        if self.unread and not replying:  # a timer's message nobody saw: it stays due for the next chat
            raise DeliveryFailed("the console's output was closed")
        return MessageRef(PLATFORM, CHANNEL, here)

    def _show(self, reply: Reply, text: str, shown: Shown) -> None:
        self.say(text)
        for choice in shown.lines:
            self.say(choice)
        if shown.taken:
            self.say(f"({', '.join(shown.taken)} now answer this message, no longer the one before.)")
        if reply.form:
            self.say(f"{reply.form.label} {FORM_HINT}:")
        if reply.file:
            self.shown_file = self.shown_file or reply.audience is Audience.DM
            if reply.file.saved_to is None or reply.file.filename.endswith(SHOWN_INLINE):
                self.say(f"--- {reply.file.filename} ---\n{reply.file.content.decode()}--- end ---")
            if reply.file.saved_to is not None:
                self.say(f"{reply.file.filename} was written to {reply.file.saved_to}")

    async def edit(self, ref: MessageRef, reply: Reply) -> None:
        """Print the message again, named by the first line it was shown with; what it offered (a round
        question, now revealed) is closed, also where the same question was shown again (its choices
        carry the same prompt)."""
        self.pending.updated(ref.message_id)
        heading = self._headings.get(ref.message_id)
        said = "a message of an earlier chat updated" if heading is None else f"update to the message above: {heading}"
        await self.send(replace(reply, text=f"[{said}]\n{reply.text}"))

    def say(self, text: str) -> None:
        """Print a line; once the output's reader has gone, nothing more is printed (and the chat ends)."""
        if self.unread:
            return
        try:
            print(text, file=self.out, flush=True)
        except BrokenPipeError:
            self.unread = True


def _heading(text: str, width: int = 70) -> str:
    """A message's first line, as a learner recognises it when it is updated further down."""
    first = next((line.strip() for line in text.splitlines() if line.strip()), "a message above")
    return first if len(first) <= width else first[:width - 1].rstrip() + "…"


class LineReader:
    """Typed lines, read in a thread (input() blocks) and handed to the event loop one at a time:
    the next prompt is shown only once the last line was answered. None means the chat ends
    (end of input, Ctrl-D or Ctrl-C)."""

    def __init__(self, stdin: TextIO, out: TextIO) -> None:
        self.stdin, self.out = stdin, out
        self.tty = _isatty(stdin) and _isatty(out)
        self.lines: asyncio.Queue[str | None] = asyncio.Queue()
        self._loop = asyncio.get_running_loop()
        self._next = threading.Event()
        self._prompt = PROMPT
        self.at_prompt = False  # waiting at the prompt of a terminal
        if self.tty:
            import readline  # noqa: F401  (input() now edits lines and keeps a history)
        threading.Thread(target=self._read, name="console-input", daemon=True).start()

    def ask(self, prompt: str) -> None:
        """Read the next line, showing `prompt` in a terminal."""
        self._prompt = prompt
        self.at_prompt = self.tty
        self._next.set()

    async def next_line(self, prompt: str) -> str | None:
        """The next line typed at `prompt` (None: the chat ends)."""
        self.ask(prompt)
        try:
            return await self.lines.get()
        finally:
            self.at_prompt = False

    @contextlib.contextmanager
    def aside(self) -> Iterator[None]:
        """Print a message that came on its own (a round's reveal) while the learner is at the prompt of a
        terminal: on the prompt's line, cleared first, and the prompt drawn again under it with what was
        typed so far, where the learner goes on typing."""
        if not self.at_prompt:
            yield
            return
        import readline

        self.out.write(CLEAR_LINE)
        try:
            yield
        finally:
            self.out.write(self._prompt + readline.get_line_buffer())
            self.out.flush()

    def stop(self) -> None:
        self.lines.put_nowait(None)

    def _read(self) -> None:
        while True:
            self._next.wait()
            self._next.clear()
            try:
                text: str | None = input(self._prompt) if self.tty else (self.stdin.readline() or None)
            except (EOFError, OSError, ValueError):
                text = None
            self._loop.call_soon_threadsafe(self.lines.put_nowait, text)
            if text is None:
                return


def terminal_language() -> str | None:
    """The terminal's language, as gettext reads it: LANGUAGE, LC_ALL, LC_MESSAGES, then LANG."""
    return next((v for k in ("LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG") if (v := os.environ.get(k))), None)


async def run_console(bot: StudyBot, stdin: TextIO = sys.stdin, out: TextIO = sys.stdout,
                      language: str | None = None) -> None:
    chat = ConsoleChat(bot, out, language=language)
    chat.say(BANNER)
    loop = asyncio.get_running_loop()
    reader = LineReader(stdin, out)
    chat.aside = reader.aside
    ticker = asyncio.create_task(run_scheduler(bot, {PLATFORM: chat}))
    text: str | None = ""
    with _terminal_kept(stdin if reader.tty else None), _interrupt_ends(loop, reader):
        try:
            while not chat.unread:
                text = await reader.next_line(chat.prompt)
                if text is None or text.strip() in QUIT:
                    break
                await chat.line(text)
        finally:
            ticker.cancel()
            await asyncio.wait({ticker})  # its deliveries under way end first
            if not chat.unread:
                await _stop_own_round(bot, chat)
                await _deliver_due(bot, chat)
            if text is None and reader.tty:
                chat.say("")  # end the prompt's line
            chat.say("Bye.")
    if chat.unread:  # the CLI ends quietly, as for any command whose output was cut short
        raise BrokenPipeError(errno.EPIPE, "the console's output was closed")


async def _stop_own_round(bot: StudyBot, chat: ConsoleChat) -> None:
    """A round this chat started stops with the chat, as /quiz round stop would (its summary is then due):
    on the console nobody else can answer it, and the next chat would carry it on. A round another chat
    started (another process on PostgreSQL) is that chat's."""
    try:
        round_ = await bot.store.rounds.in_channel(chat.place)
    except Exception:
        log.exception("cannot read the console's round; it goes on in the next chat")
        return
    if round_ is not None and round_.id in chat.started_rounds:
        chat.say("The chat ends, and your round with it (nobody else can answer it here):")
        await chat.line("/quiz round stop")


async def _deliver_due(bot: StudyBot, chat: ConsoleChat) -> None:
    """Show what came due since the scheduler last looked (a stopped round's summary, when the
    input ended right after /quiz round stop) before the chat ends, rather than in the next one."""
    try:
        await fire_due(bot, {PLATFORM: chat})
    except Exception:
        log.exception("cannot read the due timers; they are shown in the next chat")


@contextlib.contextmanager
def _interrupt_ends(loop: asyncio.AbstractEventLoop, reader: LineReader) -> Iterator[None]:
    """Ctrl-C and SIGTERM end the chat like Ctrl-D (after the line being handled), without a
    traceback: the database is closed and the pid file removed, exit status 0."""
    stops = (signal.SIGINT, signal.SIGTERM)
    try:
        for sig in stops:
            loop.add_signal_handler(sig, reader.stop)
    except (NotImplementedError, RuntimeError, ValueError):  # not the main thread, or no signals here
        yield
        return
    try:
        yield
    finally:
        for sig in stops:
            loop.remove_signal_handler(sig)


@contextlib.contextmanager
def _terminal_kept(stdin: TextIO | None) -> Iterator[None]:
    """Put the terminal back as it was: the reading thread may be left inside readline."""
    if stdin is None:
        yield
        return
    import termios

    fd = stdin.fileno()
    saved = termios.tcgetattr(fd)
    try:
        yield
    finally:
        termios.tcsetattr(fd, termios.TCSADRAIN, saved)


def _isatty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False
