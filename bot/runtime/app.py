"""StudyBot.handle: one neutral event in, the replies out.

The router: it keeps the list of features and routes by what each declares (`Feature`):
commands by name, button and form tokens through the store to the handler of their prompt's
kind, timers by their key's kind. Handlers return replies, they never send. The features know
nothing of this module.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any, TypeVar

from bot.answering import questions as answering
from bot.content.loader import Report, check_library
from bot.content.model import Library
from bot.core import i18n, logs
from bot.core.clock import Clock, SystemClock
from bot.core.config import Settings
from bot.core.errors import ContentErrors, ContentProblem, StudyError, TextRefused, reference_id
from bot.core.gate import Gate
from bot.core.messages import (
    MAX_FORM_TEXT,
    MAX_TEXT,
    ChoiceMade,
    Command,
    Event,
    MessageRef,
    Place,
    Reply,
    TextSubmitted,
    TimerFired,
    TimerKey,
)
from bot.core.suggest import no_such_command
from bot.features import (
    audit,
    confidence,
    daily,
    disputes,
    forget,
    glossary,
    hints,
    insights,
    language,
    leaderboard,
    lessons,
    progress,
    quiz,
    reader,
    results,
    review,
    rounds,
    streaks,
    teachback,
    teams,
    timezone,
    tracks,
)
from bot.kit.commands import CommandForm, CommandSpec, command, run_command
from bot.kit.context import Context, Declared
from bot.kit.feature import ChoiceHandler, Feature, TextHandler, TimerSpec
from bot.runtime import metrics
from bot.store import Store
from bot.store.areas import Area
from bot.store.model import Prompt, PromptKind

log = logging.getLogger("studybot")
STARTUP = "start-up"  # the lock under which a starting process arms schedules and repairs rounds
RELOAD_LOG = "studybot.reload"  # what a reload found and did (the console shows it, below its WARNING level)
reload_log = logging.getLogger(RELOAD_LOG)
_K = TypeVar("_K")
_V = TypeVar("_V")

FEATURES: tuple[Feature, ...] = (  # in the order /help lists their commands (and offers are made)
    answering.FEATURE,
    quiz.FEATURE,
    rounds.FEATURE,
    glossary.FEATURE,
    teachback.FEATURE,
    review.FEATURE,
    lessons.FEATURE,
    progress.FEATURE,
    streaks.FEATURE,
    timezone.FEATURE,
    results.FEATURE,
    leaderboard.FEATURE,
    teams.FEATURE,
    forget.FEATURE,
    audit.FEATURE,
    reader.FEATURE,  # its opinion under a verdict comes before "Ask my instructor"
    disputes.FEATURE,
    hints.FEATURE,
    confidence.FEATURE,
    insights.FEATURE,
    daily.FEATURE,
    tracks.FEATURE,
    language.FEATURE,
)


def declared_commands(features: Sequence[Feature] = FEATURES) -> tuple[CommandSpec, ...]:
    """Every feature's commands, then /help, which lists them all."""
    specs = [spec for feature in features for spec in feature.commands]

    @command(summary="The studybot commands", name="help")
    async def help_command(ctx: Context, cmd: Command) -> list[Reply]:
        """/help: the commands and what they do."""
        lines = ("• " + ctx._(line) for spec in specs for line in spec.usage)
        return [Reply(page) for page in pages([ctx._("Commands:"), *lines])]

    specs.append(help_command)
    return tuple(specs)


def pages(lines: Sequence[str], limit: int = MAX_TEXT) -> list[str]:
    """Lines gathered into as few messages as fit a platform's limit, never splitting a line."""
    found: list[str] = []
    for line in lines:
        if found and len(found[-1]) + 1 + len(line) <= limit:
            found[-1] += "\n" + line
        else:
            found.append(line)
    return found


def feature_areas(features: Sequence[Feature] = FEATURES) -> tuple[Area[Any], ...]:
    """The features' own store areas (their tables), each declared once."""
    return tuple(_one_each("store area", [(area.name, area) for f in features for area in f.storage]).values())


def settings_problems(settings: Settings, library: Library,
                      features: Sequence[Feature] = FEATURES) -> list[tuple[str, str]]:
    """(config key, message) for each setting these lesson packs cannot serve."""
    return [problem for feature in features if feature.check for problem in feature.check(settings, library)]


@dataclass(frozen=True)
class Settled:
    """What became of a fired timer once its replies were delivered, or failed to be."""

    attempts: int = 0  # failed deliveries in a row; 0: delivered
    retry_at: datetime | None = None  # failed: tried again then; None after a failure: given up
    notices: tuple[Reply, ...] = ()  # given up: what its feature tells whom


def _one_each(kind: str, pairs: list[tuple[_K, _V]]) -> dict[_K, _V]:
    """A table of handlers gathered from the features; two for one key is a mistake in the list."""
    table: dict[_K, _V] = {}
    for key, value in pairs:
        if key in table:
            raise ValueError(f"two features declare the {kind} {key}")
        table[key] = value
    return table


class StudyBot:
    def __init__(self, ctx: Context, features: Sequence[Feature] = FEATURES) -> None:
        self.ctx = ctx
        self.features = tuple(features)
        self.gate = Gate()
        self._reloading = asyncio.Lock()  # one reload at a time: a slow one never undoes a newer one
        self._next_reload: asyncio.Future[Report] | None = None  # the reload waiting to begin, if any
        self.commands: dict[str, CommandSpec] = _one_each(
            "command", [(spec.name, spec) for spec in declared_commands(self.features)])
        self._choices: dict[PromptKind, ChoiceHandler] = _one_each(
            "buttons of", [pair for f in self.features for pair in f.choices.items()])
        self._forms: dict[PromptKind, TextHandler] = _one_each(
            "forms of", [pair for f in self.features for pair in f.forms.items()])
        self._timers: dict[str, TimerSpec] = _one_each(
            "timer", [(spec.kind, spec) for f in self.features for spec in f.timers])
        _one_each("prompt kind", [(kind, f.name) for f in self.features for kind in f.prompt_kinds])
        forms = _one_each("form", [((sub.command, sub.word), sub) for f in self.features for sub in f.command_forms])
        self._forms_of: dict[str, tuple[CommandForm, ...]] = {
            name: tuple(sub for sub in forms.values() if sub.command == name) for name in self.commands}
        ctx.declared = Declared(_one_each("mode", [(mode.name, mode) for f in self.features for mode in f.modes]),
                                tuple(offer for f in self.features for offer in f.offers),
                                tuple(_one_each("aid", [(a.name, a) for f in self.features for a in f.aids]).values()),
                                tuple(lines for f in self.features for lines in f.insights))

    @classmethod
    async def start(cls, settings: Settings, clock: Clock | None = None,
                    features: Sequence[Feature] = FEATURES) -> StudyBot:
        """Load and check every lesson pack, then open the store (ContentErrors lists all problems)."""
        report = check_library(settings.content_dir)
        if report.problems:
            raise ContentErrors(report.problems)
        for warning in report.warnings:
            log.warning("%s", warning)
        for key, message in settings_problems(settings, report.library, features):
            raise settings.config_error(key, message)
        store = await Store.open(settings.database, clock or SystemClock(), feature_areas(features))
        bot = cls(Context(store, report.library, settings, store.clock), features)
        try:
            async with store.engine.locked(STARTUP):  # processes starting together do this in turn
                await bot.arm_schedules()
                for feature in bot.features:
                    if feature.on_start is not None:
                        await feature.on_start(bot.ctx)
                await bot.purge_uninstalled()
        except BaseException:
            await store.close()
            raise
        return bot

    async def close(self) -> None:
        """This process stops: it leaves the processes `studybot health` lists, then the store closes."""
        store = self.ctx.store
        if store.engine.failure is None:  # a database deleted or replaced under the bot is left as it is
            try:
                await store.processes.leave()
            except Exception as exc:
                log.warning("could not remove this process from the database's processes (%s); studybot health "
                            "lists it as not heard from", type(exc).__name__)
        await store.close()

    async def purge_uninstalled(self) -> None:
        """Delete the scores of workspaces uninstalled longer ago than STUDYBOT_UNINSTALLED_RETENTION_DAYS."""
        days = self.settings.uninstalled_retention_days
        if days is None:
            return
        for cohort in await self.store.purge_uninstalled(timedelta(days=days)):
            log.info("%s was uninstalled over %d day(s) ago: its learners and scores were deleted", cohort, days)

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
                replies = await self._answer(await self._with_cohort(event))
        except StudyError as exc:
            outcome = "refused"
            replies = [Reply(exc.user_message, retype=isinstance(exc, TextRefused))]
        except Exception:
            outcome = "error"
            ref = reference_id()
            log.exception("bug ref=%s while handling %s", ref, _summary(event))
            tr = i18n.translator(None if isinstance(event, TimerFired) else event.actor.locale)
            replies = [Reply(tr.gettext("Something went wrong on our side (reference {ref}). Please try again; "
                                        "if it keeps happening, give the reference to your instructor.", ref=ref))]
        seconds = time.perf_counter() - started
        if log.isEnabledFor(logging.INFO):  # the line's fields are worked out only when it is written
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
            raise StudyError(i18n.translator(event.actor.locale).gettext(
                "Use studybot in your cohort's channel first; after that, direct messages work too."))
        return replace(event, actor=replace(event.actor, cohort=cohort), place=replace(event.place, cohort=cohort))

    async def _answer(self, event: Event) -> list[Reply]:
        """The replies, written for their reader (`bot.core.i18n`): a learner's event in their language
        (`bot.features.language`), a timer's in its cohort's (its features address each post)."""
        if isinstance(event, TimerFired):
            return await self._dispatch(event)
        with i18n.reading(await language.reader_of(self.ctx, event.actor)):
            return await self._dispatch(event)

    async def _dispatch(self, event: Event) -> list[Reply]:
        if isinstance(event, Command):
            name = event.name.lstrip("/").lower()
            spec = self.commands.get(name)
            if spec is None:
                raise StudyError(no_such_command(name, self.commands))
            return await run_command(self.ctx, spec, event, self._forms_of.get(spec.name, ()))
        if isinstance(event, ChoiceMade):
            prompt_id, _, suffix = event.token.partition(".")
            prompt = await self._prompt(prompt_id, event)
            on_choice = self._choices.get(prompt.kind)
            if on_choice is None:
                raise StudyError(self.ctx._("That button is no longer valid. Run the command again for a fresh one."))
            return await on_choice(self.ctx, event, prompt, suffix)
        if isinstance(event, TextSubmitted):
            prompt = await self._prompt(event.form_token, event)
            on_text = self._forms.get(prompt.kind)
            if on_text is None:
                raise StudyError(self.ctx._("That form has expired. Run the command again for a fresh one."))
            if not event.text.strip():
                raise TextRefused(self.ctx._("Your answer is empty. Write a sentence or two and submit again."))
            if len(event.text) > MAX_FORM_TEXT:
                tr = self.ctx.tr
                raise TextRefused(tr.gettext(
                    "Your answer is {length} characters; keep it under {most} and submit again.",
                    length=tr.decimal(len(event.text)), most=tr.decimal(MAX_FORM_TEXT)))
            return await on_text(self.ctx, event, prompt)
        timer = self._timers.get(event.key.kind)
        return await timer.fire(self.ctx, event.key) if timer else []

    async def _prompt(self, prompt_id: str, event: ChoiceMade | TextSubmitted) -> Prompt:
        prompt = await self.ctx.store.prompts.get(prompt_id) if prompt_id else None
        if prompt is None or (prompt.platform, prompt.cohort) != (event.actor.platform, event.actor.cohort):
            raise StudyError(self.ctx._("That button is no longer valid. Use /quiz for a fresh question."))
        if prompt.owner is not None and prompt.owner != event.actor.user_id:
            raise StudyError(self.ctx._("That button belongs to someone else. Use /quiz for your own question."))
        return prompt

    # ------------------------------------------------------------ timers

    async def message_posted(self, tag: str, ref: MessageRef) -> None:
        """An adapter reports that a tagged reply was delivered: a timer that wants to know (a
        reminder) is told, and any other message is remembered, so that it can be edited later."""
        key = TimerKey.parse(tag)
        timer = self._timers.get(key.kind)
        if timer is not None and timer.on_delivered is not None:
            await timer.on_delivered(self.ctx, key)
        else:
            await self.ctx.store.messages.remember(tag, ref)

    async def due_timers(self) -> list[TimerFired]:
        """Claim the due timers for this process: each fires in one process only (see `Timers.claim`)."""
        now = self.ctx.clock.now()
        lease = timedelta(seconds=self.ctx.settings.timer_lease)
        claimed = await self.ctx.store.timers.claim(now, self.ctx.store.processes.me, lease)
        return [TimerFired(TimerKey.parse(c.key), now, c.claim) for c in claimed]

    async def fire(self, event: TimerFired) -> list[Reply]:
        """A due timer's replies. Unlike `handle`, a failure raises: `settle` then records it."""
        timer = self._timers.get(event.key.kind)
        if timer is None:
            return []
        async with self.gate.event():
            return await timer.fire(self.ctx, event.key)

    async def settle(self, event: TimerFired, failure: str | None = None, *, permanent: bool = False) -> Settled:
        """Close a fired timer by its declared rules. Delivered (no `failure`): it is done, deleted or,
        when it repeats, re-armed; only now, so that a crash before delivery repeats a post rather than
        drop it. Failed: it is tried again with backoff, or given up (a permanent failure at once), its
        reason recorded and its feature's notices returned for delivery."""
        timer = self._timers.get(event.key.kind) or TimerSpec(event.key.kind, _nothing)
        key, timers = str(event.key), self.ctx.store.timers
        if failure is None:
            if timer.repeat is None:
                await timers.delete(key, event.at, event.claim)
            else:
                await timers.rearm(key, timer.repeat(self.ctx, event.key), event.claim)
            return Settled()
        attempts = await timers.failed(key, failure, event.claim)
        again = None if permanent else timer.retry_at(self.ctx.clock.now(), attempts)
        if again is not None:
            await timers.postpone(key, event.at, again, event.claim)
            return Settled(attempts, again)
        if not await timers.give_up(key, failure, timer.repeat(self.ctx, event.key) if timer.repeat else None,
                                    event.claim):
            return Settled(attempts)  # another process holds it now
        notices = await timer.on_given_up(self.ctx, event.key, failure) if timer.on_given_up else []
        return Settled(attempts, None, tuple(notices))

    async def arm_schedules(self) -> None:
        """Arm each timer the settings ask for (a weekly post) at its next time; a post missed while
        down stays due (once)."""
        for timer in self._timers.values():
            if timer.schedule is not None and timer.repeat is not None:
                for scheduled in timer.schedule(self.ctx.settings):
                    await self.ctx.store.timers.arm(str(scheduled.key), timer.repeat(self.ctx, scheduled.key))

    def channels(self, platform: str) -> list[tuple[str, Place]]:
        """The channels this platform's cohorts post to on a schedule, as (config key, place), once each."""
        found = [(s.setting, s.place) for timer in self._timers.values() if timer.schedule is not None
                 for s in timer.schedule(self.ctx.settings) if s.place.platform == platform]
        return list(dict.fromkeys(found))

    # ------------------------------------------------------------ reloading

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
            if unknown := settings_problems(self.ctx.settings, report.library, self.features):
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


async def _nothing(ctx: Context, key: TimerKey) -> list[Reply]:
    """An unknown kind of timer (its feature was removed): it fires nothing, and is then deleted."""
    return []


def _summary(event: Event) -> str:
    """What a log line may say about an event: never a token, never an answer's text."""
    if isinstance(event, TimerFired):
        return f"timer={event.key.kind}"
    actor = event.actor
    what = f"command=/{event.name[:20]}" if isinstance(event, Command) else type(event).__name__
    return f"platform={actor.platform} cohort={actor.cohort} {what}"
