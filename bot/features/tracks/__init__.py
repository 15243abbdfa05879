"""Tracks: a cohort's steps (`cohorts.<id>.track`), each on day N after a learner's start at a local
time, sent to each learner by direct message: a lesson's quiz, a teach-back prompt, a review session
or a message.

A learner's track starts on their first use in the cohort (found by a sweep every minute, or at once
by /track or /progress), or on the day an instructor sets (`/track start <learner> YYYY-MM-DD`). Each
step is a stored timer (`bot.features.tracks.storage`): one process claims it (committed before it
sends), sends it, and records it once the platform acknowledged it; a process killed holding a claim
loses it after the lease, and the next process sends the step unless it was recorded. Only a kill
between the platform's acknowledgement and that record sends a step twice; none drops one."""

from __future__ import annotations

import hashlib
import re
from datetime import date, datetime, timedelta
from zoneinfo import ZoneInfo

from bot.content.model import Library
from bot.core.config import Settings, TrackStep
from bot.core.errors import StudyError
from bot.core.messages import Actor, Audience, Cohort, Command, Reply, TimerKey
from bot.features.tracks.storage import AREA, STEP, Planned, Track, Tracks
from bot.kit.commands import Option, command
from bot.kit.context import Context
from bot.kit.feature import Feature, TimerSpec

START = "track-start"  # a cohort's sweep: its learners whose track has not started begin it
SWEEP_EVERY = timedelta(minutes=1)
IDLE_SWEEP = timedelta(days=1)  # a cohort that no longer has a track
START_WITHIN = timedelta(days=366)  # how far from today an instructor may set a track's day 0
_USER = re.compile(r"^<@!?([A-Za-z0-9]+)(?:\|[^>]*)?>$|^([A-Za-z0-9]+)$")  # <@U123>, <@!123>, <@U123|name>, U123
WHAT = {"quiz": "the quiz of", "review": "a review of"}  # a lesson's step, in a few words


async def learner_zone(ctx: Context, actor: Actor) -> ZoneInfo:
    """The time zone a learner's track is planned in when it starts: their own (/timezone), else their
    cohort's. Steps already planned keep their times when the learner moves."""
    return await ctx.learner_zone(actor)


def step_id(step: TrackStep) -> str:
    """A step's lasting name, from what it is: a step edited in the config is a new step."""
    return hashlib.sha256(f"{step.day}|{step.at:%H:%M}|{step.kind}|{step.what}".encode()).hexdigest()[:12]


def due(step: TrackStep, starts_on: date, zone: ZoneInfo) -> datetime:
    """When a step is due: its local time on day `step.day` after day 0."""
    return datetime.combine(starts_on + timedelta(days=step.day), step.at, zone)


def steps(ctx: Context, cohort: Cohort) -> tuple[TrackStep, ...]:
    """The cohort's steps, by day and time."""
    return tuple(sorted(ctx.settings.cohort(cohort).track, key=lambda s: (s.day, s.at)))


def planned(ctx: Context, actor: Actor, starts_on: date, zone: ZoneInfo) -> Planned:
    return [(step_id(step), due(step, starts_on, zone)) for step in steps(ctx, actor.in_cohort)]


def today(ctx: Context, zone: ZoneInfo) -> date:
    """The local date now in a learner's zone."""
    return ctx.clock.now().astimezone(zone).date()


def area(ctx: Context) -> Tracks:
    return ctx.store.area(AREA)


async def started(ctx: Context, actor: Actor) -> Track | None:
    """The learner's track, started today if it had not (their first use); None when the cohort has none."""
    if not steps(ctx, actor.in_cohort):
        return None
    if (track := await area(ctx).of(actor)) is None:
        zone = await learner_zone(ctx, actor)
        day = today(ctx, zone)
        await area(ctx).begin_now(actor, day, planned(ctx, actor, day, zone))
        track = await area(ctx).of(actor)
    return track


def describe(ctx: Context, step: TrackStep) -> str:
    """What a step asks for, in a few words, with the command that does it."""
    if step.kind == "message":
        return "a message"
    if step.kind == "teachback":
        return f"a teach-back ({step.what}, /teachback {step.what})"
    lesson = ctx.library.lessons.get(step.what)
    title = lesson.title if lesson else step.what
    return f"{WHAT[step.kind]} {title} (/{step.kind} {step.what})"


def step_text(ctx: Context, step: TrackStep) -> str:
    """The direct message a step sends."""
    head = f"Your track · day {step.day}: "
    if step.kind == "message":
        return head + step.what
    if step.kind == "teachback":
        prompt = ctx.library.prompts.get(step.what)
        asked = f" {prompt.prompt}" if prompt else ""
        return head + f"a teach-back.{asked}\nType /teachback {step.what} to explain it in your own words."
    lesson = ctx.library.lessons.get(step.what)
    title = lesson.title if lesson else step.what
    if step.kind == "quiz":
        return head + f"the quiz of {title}. Type /quiz {step.what} to take it."
    return head + f"review {title}. Type /review {step.what} to go through its cards."


def passed(ctx: Context, track: Track, step: TrackStep, zone: ZoneInfo) -> bool:
    """A step added or edited in the settings after it was due for this learner: it is never sent."""
    sid = step_id(step)
    return (sid not in track.delivered and sid not in track.waiting
            and due(step, track.starts_on, zone) <= ctx.clock.now())


def next_step(ctx: Context, track: Track, zone: ZoneInfo) -> tuple[TrackStep, datetime] | None:
    """The learner's first step not yet delivered (and still to be sent), and when it is due."""
    waiting = [(s, due(s, track.starts_on, zone)) for s in steps(ctx, track.actor.in_cohort)
               if step_id(s) not in track.delivered and not passed(ctx, track, s, zone)]
    return min(waiting, key=lambda pair: pair[1]) if waiting else None


def when(ctx: Context, moment: datetime, zone: ZoneInfo) -> str:
    local = moment.astimezone(zone)
    return "now" if moment <= ctx.clock.now() else f"{local:%a %d %b, %H:%M} {local.tzname()}"


async def next_step_line(ctx: Context, actor: Actor) -> str | None:
    """/progress's line on the learner's track; None when the cohort has none."""
    track = await started(ctx, actor)
    if track is None:
        return None
    zone = await learner_zone(ctx, actor)
    found = next_step(ctx, track, zone)
    if found is None:
        return "Track: every step reached you (/track)."
    step, at = found
    return f"Track, next: day {step.day}, {when(ctx, at, zone)}: {describe(ctx, step)} (/track)"


@command(summary="Your track's steps, or set when a learner's track starts (instructors)",
         options=(Option("start", "set a learner's day 0 (instructors)", choices={"start": "start"}),
                  Option("learner", "the learner (a mention or user id)"),
                  Option("date", "day 0, YYYY-MM-DD (default: today)")))
async def track(ctx: Context, cmd: Command) -> list[Reply]:
    """/track: your track's steps: those sent, and when each one to come is due.
    /track start <learner> [YYYY-MM-DD]: start that learner's track on that day, default today (instructors)."""
    words = cmd.args.split()
    if words[:1] == ["start"]:
        return await _start(ctx, cmd, words[1:])
    if words:
        raise StudyError("Use /track for your track, or /track start <learner> YYYY-MM-DD (instructors).")
    mine = await started(ctx, cmd.actor)
    if mine is None:
        return [Reply("This cohort has no track.")]
    zone = await learner_zone(ctx, mine.actor)
    lines = [f"Your track (day 0: {mine.starts_on:%a %d %b %Y}" + (", set by your instructor)" if mine.set_by else ")")]
    for step in steps(ctx, mine.actor.in_cohort):
        if step_id(step) in mine.delivered:
            mark, state = "✓", "sent"
        elif passed(ctx, mine, step, zone):
            mark, state = "–", "not sent (edited or added after it was due, or undeliverable)"
        else:
            mark, state = "•", when(ctx, due(step, mine.starts_on, zone), zone)
        lines.append(f"{mark} day {step.day}, {state}: {describe(ctx, step)}")
    return [Reply("\n".join(lines))]


async def _start(ctx: Context, cmd: Command, words: list[str]) -> list[Reply]:
    ctx.require_instructor(cmd.actor, "set when a learner's track starts")
    if not steps(ctx, cmd.actor.in_cohort):
        raise StudyError("This cohort has no track: list its steps under cohorts.<id>.track in the settings.")
    named = _USER.match(words[0]) if words else None
    if named is None or len(words) > 2:
        raise StudyError("Use /track start <learner> YYYY-MM-DD, naming the learner by mention or user id.")
    user_id = named.group(1) or named.group(2)
    learner = Actor(cmd.actor.platform, cmd.actor.cohort, user_id, "")
    zone = await learner_zone(ctx, learner)
    try:
        starts_on = date.fromisoformat(words[1]) if len(words) == 2 else today(ctx, zone)
    except ValueError:
        raise StudyError(f"'{words[1][:20]}' is not a date; write it as YYYY-MM-DD, like 2027-01-15.") from None
    if abs(starts_on - today(ctx, zone)) > START_WITHIN:
        raise StudyError(f"{starts_on.isoformat()} is not a day within a year of today; check the year.")
    done = await area(ctx).set_start(learner, starts_on, cmd.actor.user_id, planned(ctx, learner, starts_on, zone))
    after = f" ({len(done)} step(s) already sent stay sent)" if done else ""
    return [Reply(f"{user_id}'s track now starts on {starts_on:%a %d %b %Y}{after}.")]


async def on_sweep(ctx: Context, key: TimerKey) -> list[Reply]:
    """A cohort's learners whose track has not started begin it today, their local day."""
    cohort = key.cohort
    if steps(ctx, cohort):
        starts = []
        for newcomer in await area(ctx).newcomers(cohort):
            zone = await learner_zone(ctx, newcomer.actor)
            day = today(ctx, zone)
            starts.append((newcomer.learner_id, day, planned(ctx, newcomer.actor, day, zone)))
        await area(ctx).begin(starts)
    return []


def next_sweep(ctx: Context, key: TimerKey) -> datetime:
    return ctx.clock.now() + (SWEEP_EVERY if steps(ctx, key.cohort) else IDLE_SWEEP)


async def on_step(ctx: Context, key: TimerKey) -> list[Reply]:
    """A learner's step, by direct message, unless it reached them already or left the track."""
    learner_id, step = int(key.parts[0]), key.parts[1]
    mine = await area(ctx).get(learner_id)
    if mine is None or step in mine.delivered:
        return []
    found = next((s for s in steps(ctx, mine.actor.in_cohort) if step_id(s) == step), None)
    if found is None:
        return []
    return [Reply(step_text(ctx, found), Audience.DM, to=mine.actor, tag=str(key))]


async def on_delivered(ctx: Context, key: TimerKey) -> None:
    """The platform acknowledged a step: recorded, it is never sent again."""
    await area(ctx).delivered(int(key.parts[0]), key.parts[1])


async def arm_sweeps(ctx: Context) -> None:
    """At start-up: each cohort with a track has its sweep, and each started learner a timer for each
    step still ahead of them and not sent (a step added or edited in the settings since they started)."""
    now = ctx.clock.now()
    for cohort, chosen in ctx.settings.cohorts.items():
        if chosen.track:
            await ctx.store.timers.ensure(str(TimerKey.for_cohort(START, cohort)), now)
            ahead = []
            for started_track in await area(ctx).of_cohort(cohort):
                zone = await learner_zone(ctx, started_track.actor)
                plan = planned(ctx, started_track.actor, started_track.starts_on, zone)
                ahead.append((started_track.learner_id,
                              [(step, at) for step, at in plan if at > now and step not in started_track.delivered]))
            await area(ctx).arm(ahead)


def unknown_items(settings: Settings, library: Library) -> list[tuple[str, str]]:
    """(config key, message) for each track step naming a lesson or teach-back prompt the packs lack."""
    problems = []
    for cohort, chosen in settings.cohorts.items():
        for n, step in enumerate(chosen.track):
            key = f"cohorts.{cohort.id}.track[{n}].{step.kind}"
            if step.kind in ("quiz", "review") and step.what not in library.lessons:
                problems.append((key, f"there is no lesson {step.what!r}; write one of "
                                      f"{', '.join(sorted(library.lessons))[:200]}"))
            elif step.kind == "teachback" and step.what not in library.prompts:
                problems.append((key, f"there is no teach-back prompt {step.what!r}; write one of "
                                      f"{', '.join(sorted(library.prompts))[:200]}"))
    return problems


FEATURE = Feature(
    "tracks",
    commands=(track,),
    timers=(TimerSpec(START, on_sweep, repeat=next_sweep),
            TimerSpec(STEP, on_step, on_delivered=on_delivered)),
    on_start=arm_sweeps,
    check=unknown_items,
    storage=(AREA,),
)
