"""StudyBot.handle: one neutral event in, the replies out.

A plain routing table sends each command to its feature handler; button tokens and
form tokens are resolved through the store to the handler of the prompt's kind.
Handlers return replies, they never send.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import replace
from datetime import datetime, timedelta

from fsrs import Scheduler

from bot import forget, leaderboard, progress, quiz, results, review, rounds, teachback
from bot.clock import Clock, SystemClock, iso_week
from bot.config import Settings
from bot.content import Lesson, Library, load_library
from bot.errors import StudyError, reference_id
from bot.glossary import Glossary, glossary_command
from bot.messages import (
    MAX_FORM_TEXT,
    ChoiceMade,
    Command,
    Event,
    MessageRef,
    Reply,
    TextSubmitted,
    TimerFired,
)
from bot.store import PromptRow, Store

log = logging.getLogger("studybot")

CommandHandler = Callable[["StudyBot", Command], Awaitable[list[Reply]]]
ChoiceHandler = Callable[["StudyBot", ChoiceMade, PromptRow, str], Awaitable[list[Reply]]]
TextHandler = Callable[["StudyBot", TextSubmitted, PromptRow], Awaitable[list[Reply]]]
TimerHandler = Callable[["StudyBot", TimerFired, str], Awaitable[list[Reply]]]


async def help_command(bot: StudyBot, cmd: Command) -> list[Reply]:
    """/help: the commands and what they do."""
    lines = ["Commands:"]
    for handler in dict.fromkeys(bot.commands.values()):
        doc = (handler.__doc__ or "").strip()
        lines.extend("• " + line.strip() for line in doc.splitlines() if line.strip().startswith("/"))
    return [Reply("\n".join(lines))]


class StudyBot:
    def __init__(self, library: Library, store: Store, settings: Settings, clock: Clock | None = None) -> None:
        self.library = library
        self.store = store
        self.settings = settings
        self.clock = clock or store.clock
        self.glossary = Glossary(library.terms)
        self.fsrs = Scheduler()  # tests swap in Scheduler(enable_fuzzing=False)
        self.commands: dict[str, CommandHandler] = {
            "quiz": quiz.quiz_command,
            "glossary": glossary_command,
            "teachback": teachback.teachback_command,
            "review": review.review_command,
            "progress": progress.progress_command,
            "leaderboard": leaderboard.leaderboard_command,
            "results": results.results_command,
            "forget": forget.forget_command,
            "help": help_command,
        }
        self.choice_kinds: dict[str, ChoiceHandler] = {
            "question": quiz.on_choice,
            "next": quiz.on_next,
            "selfgrade": quiz.on_self_grade,
            "forget": forget.on_confirm,
        }
        self.form_kinds: dict[str, TextHandler] = {
            "question": quiz.on_text,
            "teachback": teachback.on_text,
        }
        self.timer_kinds: dict[str, TimerHandler] = {
            "round": rounds.on_timer,
            review.REMINDER_KEY: review.on_reminders,
            leaderboard.SCHEDULE: leaderboard.on_schedule,
        }
        # Repeating timers: after delivery each is re-armed at the time these give, instead of deleted.
        self.timer_repeats: dict[str, Callable[[StudyBot, str], datetime]] = {
            review.REMINDER_KEY: lambda bot, key: bot.clock.now() + review.REMINDER_EVERY,
            leaderboard.SCHEDULE: leaderboard.next_post,
        }

    @classmethod
    async def start(cls, settings: Settings, clock: Clock | None = None) -> StudyBot:
        """Load and check every lesson pack, then open the store (ContentErrors lists all problems)."""
        library = load_library(settings.content_dir)
        store = await Store.open(settings.db_path, clock or SystemClock())
        bot = cls(library, store, settings, clock)
        await bot.arm_schedules()
        return bot

    async def close(self) -> None:
        await self.store.close()

    # ------------------------------------------------------------ the boundary

    async def handle(self, event: Event) -> list[Reply]:
        """The replies to one event. A user's mistake becomes a short private reply; a bug a
        generic one with a reference id, its traceback in the log under that id."""
        started = time.perf_counter()
        outcome = "ok"
        try:
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
        log.info("handled %s outcome=%s latency_ms=%.1f", _summary(event), outcome,
                 (time.perf_counter() - started) * 1000)
        return replies

    async def _with_cohort(self, event: Event) -> Event:
        """A command sent by direct message belongs to the cohort the learner last used."""
        if isinstance(event, TimerFired) or event.actor.cohort:
            return event
        cohort = await self.store.last_cohort(event.actor.platform, event.actor.user_id)
        if cohort is None:
            raise StudyError("Use studybot in your cohort's channel first; after that, direct messages work too.")
        return replace(event, actor=replace(event.actor, cohort=cohort), place=replace(event.place, cohort=cohort))

    async def _dispatch(self, event: Event) -> list[Reply]:
        if isinstance(event, Command):
            name = event.name.lstrip("/").lower()
            handler = self.commands.get(name)
            if handler is None:
                raise StudyError(f"There is no command /{name[:40]}. Type /help to see the commands.")
            return await handler(self, event)
        if isinstance(event, ChoiceMade):
            prompt_id, _, suffix = event.token.partition(".")
            prompt = await self._prompt(prompt_id, event)
            return await self.choice_kinds[prompt.kind](self, event, prompt, suffix)
        if isinstance(event, TextSubmitted):
            prompt = await self._prompt(event.form_token, event)
            handler = self.form_kinds.get(prompt.kind)
            if handler is None:
                raise StudyError("That form has expired. Run the command again for a fresh one.")
            if not event.text.strip():
                raise StudyError("Your answer is empty. Write a sentence or two and submit again.")
            if len(event.text) > MAX_FORM_TEXT:
                raise StudyError(f"Your answer is {len(event.text):,} characters; keep it under "
                                 f"{MAX_FORM_TEXT:,} and submit again.")
            return await handler(self, event, prompt)
        kind = event.key.split(":", 1)[0]
        handler = self.timer_kinds.get(kind)
        return await handler(self, event, event.key) if handler else []

    async def _prompt(self, prompt_id: str, event: ChoiceMade | TextSubmitted) -> PromptRow:
        prompt = await self.store.prompt(prompt_id) if prompt_id else None
        if prompt is None or (prompt.platform, prompt.cohort) != (event.actor.platform, event.actor.cohort):
            raise StudyError("That button is no longer valid. Use /quiz for a fresh question.")
        if prompt.owner_id is not None and prompt.owner_id != await self.store.find_learner(event.actor):
            raise StudyError("That button belongs to someone else. Use /quiz for your own question.")
        return prompt

    async def message_posted(self, tag: str, ref: MessageRef) -> None:
        """An adapter reports where a tagged reply landed, so that it can be edited later."""
        await self.store.remember_message(tag, ref)

    async def due_timers(self) -> list[TimerFired]:
        now = self.clock.now()
        return [TimerFired(key, now) for key, _ in await self.store.due_timers(now)]

    async def timer_done(self, event: TimerFired) -> None:
        """Called after a timer's replies were delivered: it will not fire again for this moment.

        Re-arming only now means a crash before delivery repeats a post rather than drop it."""
        repeat = self.timer_repeats.get(event.key.split(":", 1)[0])
        if repeat is None:
            await self.store.delete_timer(event.key, event.at)
        else:
            await self.store.set_timer(event.key, repeat(self, event.key))

    async def arm_schedules(self) -> None:
        """Arm each cohort's weekly leaderboard post; a post missed while down stays due (once)."""
        for key in leaderboard.schedule_keys(self.settings):
            await self.store.arm_timer(key, leaderboard.next_post(self, key))

    # ------------------------------------------------------------ helpers for the features

    def lesson(self, name: str | None) -> Lesson:
        lesson = self.library.lesson(name)
        if lesson is None:
            known = ", ".join(self.library.lessons) or "none"
            raise StudyError(f"No lesson '{(name or '')[:40]}'. Lessons: {known}.")
        return lesson

    def week(self, cohort: str, weeks_ago: int = 0) -> str:
        zone = self.settings.cohort(cohort).timezone
        return iso_week(self.clock.now() - timedelta(weeks=weeks_ago), zone)

    def require_instructor(self, event: Command | ChoiceMade, what: str) -> None:
        if not event.actor.is_instructor:
            raise StudyError(f"Only instructors can {what}. Ask your instructor if you need it.")


def _summary(event: Event) -> str:
    """What a log line may say about an event: never a token, never an answer's text."""
    if isinstance(event, TimerFired):
        return f"timer={event.key.split(':', 1)[0]}"
    actor = event.actor
    what = f"command=/{event.name[:20]}" if isinstance(event, Command) else type(event).__name__
    return f"platform={actor.platform} cohort={actor.cohort} {what}"

