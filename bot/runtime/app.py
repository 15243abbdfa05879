"""StudyBot.handle: one neutral event in, the replies out.

The router: commands go to their declared handlers, button and form tokens are resolved
through the store to the handler of their prompt's kind, timers to the feature that set
them. Handlers return replies, they never send. The features know nothing of this module.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import replace
from datetime import datetime, timedelta

from bot.content.loader import Report, check_library
from bot.content.model import Library
from bot.core import logs
from bot.core.clock import Clock, SystemClock
from bot.core.config import Settings
from bot.core.errors import ContentErrors, ContentProblem, StudyError, reference_id
from bot.core.gate import Gate
from bot.core.messages import MAX_FORM_TEXT, ChoiceMade, Command, Event, MessageRef, Reply, TextSubmitted, TimerFired
from bot.features import (
    audit,
    daily,
    forget,
    glossary,
    insights,
    leaderboard,
    lessons,
    progress,
    quiz,
    results,
    review,
    rounds,
    teachback,
)
from bot.runtime import metrics
from bot.runtime.commands import CommandSpec, command
from bot.runtime.context import Context
from bot.store import Store
from bot.store.model import Prompt, PromptKind

log = logging.getLogger("studybot")
STARTUP = "start-up"  # the lock under which a starting process arms schedules and repairs rounds
RELOAD_LOG = "studybot.reload"  # what a reload found and did (the console shows it, below its WARNING level)
reload_log = logging.getLogger(RELOAD_LOG)

ChoiceHandler = Callable[[Context, ChoiceMade, Prompt, str], Awaitable[list[Reply]]]
TextHandler = Callable[[Context, TextSubmitted, Prompt], Awaitable[list[Reply]]]
TimerHandler = Callable[[Context, TimerFired, str], Awaitable[list[Reply]]]
Repeat = Callable[[Context, str], datetime]


@command(summary="The studybot commands", name="help")
async def help_command(ctx: Context, cmd: Command) -> list[Reply]:
    """/help: the commands and what they do."""
    return [Reply("\n".join(["Commands:", *("• " + line for spec in COMMANDS for line in spec.usage)]))]


COMMANDS: tuple[CommandSpec, ...] = (
    quiz.quiz,
    glossary.glossary,
    teachback.teachback,
    review.review,
    lessons.lessons,
    progress.progress,
    results.results,
    leaderboard.leaderboard,
    forget.forget,
    audit.audit,
    insights.insights,
    help_command,
)
CHOICES: dict[PromptKind, ChoiceHandler] = {
    PromptKind.QUESTION: quiz.on_choice,
    PromptKind.NEXT: quiz.on_next,
    PromptKind.SELF_GRADE: quiz.on_self_grade,
    PromptKind.FORGET: forget.on_confirm,
    PromptKind.TEACHBACK: teachback.on_again,
}
FORMS: dict[PromptKind, TextHandler] = {
    PromptKind.QUESTION: quiz.on_text,
    PromptKind.TEACHBACK: teachback.on_text,
}
TIMERS: dict[str, TimerHandler] = {
    rounds.TIMER: rounds.on_timer,
    rounds.END: rounds.on_end,
    daily.POST: daily.on_post,
    daily.REVEAL: daily.on_reveal,
    review.REMINDER_KEY: review.on_reminders,
    leaderboard.SCHEDULE: leaderboard.on_schedule,
}
# Tagged replies whose delivery a feature records (any other tag is remembered, to edit later).
DELIVERED: dict[str, Callable[[Context, str], Awaitable[None]]] = {
    review.REMINDER_KEY: review.on_delivered,
}
# What a timer's feature does when its delivery is given up (a round closes and tells its starter).
GIVEN_UP: dict[str, Callable[[Context, str, str], Awaitable[list[Reply]]]] = {
    rounds.TIMER: rounds.on_given_up,
}
# Repeating timers: after delivery each is re-armed at the time these give, instead of deleted.
REPEATS: dict[str, Repeat] = {
    review.REMINDER_KEY: lambda ctx, key: ctx.clock.now() + review.REMINDER_EVERY,
    leaderboard.SCHEDULE: leaderboard.next_post,
    daily.POST: daily.next_time,
    daily.REVEAL: daily.next_time,
}


class StudyBot:
    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.gate = Gate()
        self._reloading = asyncio.Lock()  # one reload at a time: a slow one never undoes a newer one
        self._next_reload: asyncio.Future[Report] | None = None  # the reload waiting to begin, if any
        self.commands: dict[str, CommandSpec] = {spec.name: spec for spec in COMMANDS}

    @classmethod
    async def start(cls, settings: Settings, clock: Clock | None = None) -> StudyBot:
        """Load and check every lesson pack, then open the store (ContentErrors lists all problems)."""
        report = check_library(settings.content_dir)
        if report.problems:
            raise ContentErrors(report.problems)
        for warning in report.warnings:
            log.warning("%s", warning)
        for key, message in daily.unknown_lessons(settings, report.library):
            raise settings.config_error(key, message)
        store = await Store.open(settings.database, clock or SystemClock())
        bot = cls(Context(store, report.library, settings, store.clock))
        try:
            async with store.engine.locked(STARTUP):  # processes starting together do this in turn
                await bot.arm_schedules()
                closed, mended = await rounds.repair(bot.ctx)
            if closed:
                log.warning("%d round(s) started over a day ago were closed; their summary follows", closed)
            if mended:
                log.warning("%d open round(s) had lost their timer; they go on now", mended)
        except BaseException:
            await store.close()
            raise
        return bot

    async def close(self) -> None:
        await self.ctx.store.close()

    @property
    def store(self) -> Store:
        return self.ctx.store

    @property
    def library(self) -> Library:
        return self.ctx.library

    @property
    def settings(self) -> Settings:
        return self.ctx.settings

    # ------------------------------------------------------------ the boundary

    async def handle(self, event: Event) -> list[Reply]:
        """The replies to one event. A user's mistake becomes a short private reply; a bug a
        generic one with a reference id, its traceback in the log under that id."""
        started = time.perf_counter()
        outcome = "ok"
        try:
            async with self.gate.event():
                replies = await self._dispatch(await self._with_cohort(event))
        except StudyError as exc:
            outcome = "refused"
            replies = [Reply(exc.user_message)]
        except Exception:
            outcome = "error"
            ref = reference_id()
            log.exception("bug ref=%s while handling %s", ref, _summary(event))
            replies = [Reply(f"Something went wrong on our side (reference {ref}). Please try again; "
                             "if it keeps happening, give the reference to your instructor.")]
        seconds = time.perf_counter() - started
        log.info("handled %s outcome=%s latency_ms=%.1f", _summary(event), outcome, seconds * 1000,
                 extra=logs.event_fields(event, outcome, seconds))
        metrics.handled(event, outcome, seconds, self.commands)
        return replies

    async def suggest(self, command_name: str, option: str, typed: str) -> list[str]:
        """Values to offer while an option is typed (Discord's autocomplete)."""
        spec = self.commands.get(command_name)
        found = spec.option(option) if spec else None
        return found.suggest(self.ctx, typed) if found and found.suggest else []

    async def _with_cohort(self, event: Event) -> Event:
        """A command sent by direct message belongs to the cohort the learner last used."""
        if isinstance(event, TimerFired) or event.actor.cohort:
            return event
        cohort = await self.ctx.store.learners.last_cohort(event.actor.platform, event.actor.user_id)
        if cohort is None:
            raise StudyError("Use studybot in your cohort's channel first; after that, direct messages work too.")
        return replace(event, actor=replace(event.actor, cohort=cohort), place=replace(event.place, cohort=cohort))

    async def _dispatch(self, event: Event) -> list[Reply]:
        if isinstance(event, Command):
            name = event.name.lstrip("/").lower()
            spec = self.commands.get(name)
            if spec is None:
                raise StudyError(f"There is no command /{name[:40]}. Type /help to see the commands.")
            return await spec.handler(self.ctx, event)
        if isinstance(event, ChoiceMade):
            prompt_id, _, suffix = event.token.partition(".")
            prompt = await self._prompt(prompt_id, event)
            on_choice = CHOICES.get(prompt.kind)
            if on_choice is None:
                raise StudyError("That button is no longer valid. Run the command again for a fresh one.")
            return await on_choice(self.ctx, event, prompt, suffix)
        if isinstance(event, TextSubmitted):
            prompt = await self._prompt(event.form_token, event)
            on_text = FORMS.get(prompt.kind)
            if on_text is None:
                raise StudyError("That form has expired. Run the command again for a fresh one.")
            if not event.text.strip():
                raise StudyError("Your answer is empty. Write a sentence or two and submit again.")
            if len(event.text) > MAX_FORM_TEXT:
                raise StudyError(f"Your answer is {len(event.text):,} characters; keep it under "
                                 f"{MAX_FORM_TEXT:,} and submit again.")
            return await on_text(self.ctx, event, prompt)
        on_timer = TIMERS.get(event.key.split(":", 1)[0])
        return await on_timer(self.ctx, event, event.key) if on_timer else []

    async def _prompt(self, prompt_id: str, event: ChoiceMade | TextSubmitted) -> Prompt:
        prompt = await self.ctx.store.prompts.get(prompt_id) if prompt_id else None
        if prompt is None or (prompt.platform, prompt.cohort) != (event.actor.platform, event.actor.cohort):
            raise StudyError("That button is no longer valid. Use /quiz for a fresh question.")
        if prompt.owner is not None and prompt.owner != event.actor.user_id:
            raise StudyError("That button belongs to someone else. Use /quiz for your own question.")
        return prompt

    # ------------------------------------------------------------ timers

    async def message_posted(self, tag: str, ref: MessageRef) -> None:
        """An adapter reports that a tagged reply was delivered: a reminder is then done, and any
        other message is remembered, so that it can be edited later."""
        on_delivered = DELIVERED.get(tag.split(":", 1)[0])
        if on_delivered is not None:
            await on_delivered(self.ctx, tag)
        else:
            await self.ctx.store.messages.remember(tag, ref)

    async def due_timers(self) -> list[TimerFired]:
        """Claim the due timers for this process: each fires in one process only (see `Timers.claim`)."""
        now = self.ctx.clock.now()
        lease = timedelta(seconds=self.ctx.settings.timer_lease)
        claimed = await self.ctx.store.timers.claim(now, self.ctx.store.processes.me, lease)
        return [TimerFired(c.key, now, c.claim) for c in claimed]

    async def fire(self, event: TimerFired) -> list[Reply]:
        """A due timer's replies. Unlike `handle`, a failure raises, for the scheduler to retry."""
        on_timer = TIMERS.get(event.key.split(":", 1)[0])
        if on_timer is None:
            return []
        async with self.gate.event():
            return await on_timer(self.ctx, event, event.key)

    async def reload(self) -> Report:
        """Read and check the lesson packs again; with no problem, serve them from the next event on
        (never in the middle of one); with any, keep serving the ones loaded before.

        A request made while another reload waits to begin shares that one (it reads the packs after
        both were asked for): a burst of SIGHUPs reads them once more, not once per signal."""
        if self._next_reload is None:
            self._next_reload = asyncio.ensure_future(self._reload())
        return await asyncio.shield(self._next_reload)

    async def _reload(self) -> Report:
        async with self._reloading:
            self._next_reload = None  # from here on, a new request needs a reading of its own
            report = await asyncio.to_thread(check_library, self.ctx.settings.content_dir)
            if report.problems:
                reload_log.warning("the lesson packs have %d problem(s); still serving the ones loaded before",
                                   len(report.problems))
                for problem in report.problems:
                    reload_log.warning("%s", problem)
                return report
            if unknown := daily.unknown_lessons(self.ctx.settings, report.library):
                report = replace(report, problems=[ContentProblem(self.ctx.settings.config_source, 0, key, message)
                                                   for key, message in unknown])
                for problem in report.problems:
                    reload_log.warning("the lesson packs were not reloaded: %s", problem)
                return report
            for warning in report.warnings:
                reload_log.warning("%s", warning)
            async with self.gate.change():
                self.ctx.use(report.library)
        reload_log.info("lesson packs reloaded: %d lesson(s), %d questions", len(report.library.lessons),
                        len(report.library.questions))
        return report

    async def timer_failed(self, event: TimerFired, reason: str) -> int:
        """Note a failed delivery of a timer; returns how many times it has failed in a row."""
        return await self.ctx.store.timers.failed(event.key, reason, event.claim)

    async def retry_timer(self, event: TimerFired, at: datetime) -> None:
        await self.ctx.store.timers.postpone(event.key, event.at, at, event.claim)

    async def give_up_timer(self, event: TimerFired, reason: str) -> list[Reply]:
        """Stop retrying a timer, record why, and let its feature react (notices to deliver)."""
        kind = event.key.split(":", 1)[0]
        repeat = REPEATS.get(kind)
        if not await self.ctx.store.timers.give_up(event.key, reason, repeat(self.ctx, event.key) if repeat else None,
                                                   event.claim):
            return []  # another process holds it now
        on_given_up = GIVEN_UP.get(kind)
        return await on_given_up(self.ctx, event.key, reason) if on_given_up else []

    async def timer_done(self, event: TimerFired) -> None:
        """Called after a timer's replies were delivered: it will not fire again for this moment.

        Re-arming only now means a crash before delivery repeats a post rather than drop it."""
        repeat = REPEATS.get(event.key.split(":", 1)[0])
        if repeat is None:
            await self.ctx.store.timers.delete(event.key, event.at, event.claim)
        else:
            await self.ctx.store.timers.rearm(event.key, repeat(self.ctx, event.key), event.claim)

    async def arm_schedules(self) -> None:
        """Arm each cohort's weekly leaderboard post; a post missed while down stays due (once)."""
        for key in leaderboard.schedule_keys(self.ctx.settings):
            await self.ctx.store.timers.arm(key, leaderboard.next_post(self.ctx, key))
        for key in daily.keys(self.ctx.settings):
            await self.ctx.store.timers.arm(key, daily.next_time(self.ctx, key))


def _summary(event: Event) -> str:
    """What a log line may say about an event: never a token, never an answer's text."""
    if isinstance(event, TimerFired):
        return f"timer={event.key.split(':', 1)[0]}"
    actor = event.actor
    what = f"command=/{event.name[:20]}" if isinstance(event, Command) else type(event).__name__
    return f"platform={actor.platform} cohort={actor.cohort} {what}"
