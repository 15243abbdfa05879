"""The console chat: the same command lines as the platforms, in a terminal, with no network.

Choices are shown as numbered lines and answered by their number; a form's answer is
the next line typed. Timers (a round's reveal) fire in the background.
"""

from __future__ import annotations

import asyncio
import sys
from dataclasses import replace
from typing import TextIO

from bot.app import StudyBot
from bot.messages import Actor, ChoiceMade, Command, Event, Form, MessageRef, Place, Reply, TextSubmitted
from bot.scheduler import deliver, run_scheduler

PLATFORM, COHORT, CHANNEL = "console", "local", "console"
BANNER = "studybot console. Type /help for the commands, /quit to leave."


class ConsoleChat:
    def __init__(self, bot: StudyBot, out: TextIO = sys.stdout, user: str = "learner") -> None:
        self.bot = bot
        self.out = out
        self.actor = Actor(PLATFORM, COHORT, user, user, bot.settings.instructors.console)
        self.place = Place(PLATFORM, COHORT, CHANNEL)
        self.choices: list[str] = []
        self.form: Form | None = None
        self._posted = 0

    async def line(self, text: str) -> None:
        """Handle one typed line."""
        text = text.strip()
        if not text:
            return
        event: Event
        if text.startswith("/"):
            name, _, args = text[1:].partition(" ")
            event = Command(name, args, self.actor, self.place)
        elif text.isdigit() and self.choices and 1 <= int(text) <= len(self.choices):
            event = ChoiceMade(self.choices[int(text) - 1], self.actor, self.place)
        elif self.form is not None:
            event = TextSubmitted(self.form.token, text, self.actor, self.place)
        else:
            self.say("Type a command such as /quiz or /help" + (", or a choice number." if self.choices else "."))
            return
        await self.show(await self.bot.handle(event))

    async def show(self, replies: list[Reply]) -> None:
        """Print replies; new choices or a new form replace the old ones, and a refusal (with
        neither) leaves them, so the learner can answer again."""
        if any(r.choices or r.form for r in replies):
            self.choices, self.form = [], None
        for reply in replies:
            await deliver(self.bot, self, reply)

    async def send(self, reply: Reply) -> MessageRef:
        """The console's Outbox: print the reply; numbered choices; a form asks for the next line."""
        self.say(reply.text.replace("**", ""))  # the core's bold markers mean nothing in a terminal
        for choice in reply.choices:
            self.choices.append(choice.token)
            self.say(f"{len(self.choices)}. {choice.label}")
        if reply.form:
            self.form = reply.form
            self.say(f"{reply.form.label} (type it on the next line):")
        if reply.file:
            self.say(f"--- {reply.file.filename} ---\n{reply.file.content.decode()}--- end ---")
        self._posted += 1
        return MessageRef(PLATFORM, CHANNEL, str(self._posted))

    async def edit(self, ref: MessageRef, reply: Reply) -> None:
        await self.send(replace(reply, text=f"[message {ref.message_id} updated]\n{reply.text}"))

    def say(self, text: str) -> None:
        print(text, file=self.out, flush=True)


async def run_console(bot: StudyBot, stdin: TextIO = sys.stdin, out: TextIO = sys.stdout) -> None:
    chat = ConsoleChat(bot, out)
    chat.say(BANNER)
    loop = asyncio.get_running_loop()

    ticker = asyncio.create_task(run_scheduler(bot, {PLATFORM: chat}))
    try:
        while True:
            text = await loop.run_in_executor(None, stdin.readline)
            if not text or text.strip() in ("/quit", "/exit"):
                break
            await chat.line(text)
    finally:
        ticker.cancel()
