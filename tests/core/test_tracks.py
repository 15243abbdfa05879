"""Tracks: each learner's steps by direct message, timed from their own start (first use, or a day an
instructor sets) at the local time; each step once, across a restart and a process killed after the
platform acknowledged it; /progress and /track show what comes next; the settings checked."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest
from support import with_cohort

from bot.content.loader import check_library
from bot.core.config import Settings
from bot.core.errors import ConfigError
from bot.core.messages import Actor, Audience, ChoiceMade, Command, MessageRef, Place
from bot.features import tracks
from bot.runtime.app import StudyBot, settings_problems
from bot.runtime.delivery import deliver
from bot.runtime.scheduler import fire_due

pytestmark = pytest.mark.both_engines

STEPS = [{"day": 0, "time": "09:00", "quiz": "core-basics"},
         {"day": 2, "time": "18:30", "teachback": "core-tb1"},
         {"day": 1, "time": "09:00", "message": "Halfway there: keep going."}]
PLACE = Place("slack", "T1", "C1")


def learner(user: str, teacher: bool = False) -> Actor:
    return Actor("slack", "T1", user, user.lower(), teacher)


class Outbox:
    """Records each direct message with the moment it went out."""

    def __init__(self, clock) -> None:
        self.clock = clock
        self.sent: list[tuple[datetime, object]] = []

    async def send(self, reply):
        self.sent.append((self.clock.now(), reply))
        return MessageRef("slack", "D" + reply.to.user_id, f"m{len(self.sent)}")

    async def edit(self, ref, reply):
        raise AssertionError("a track step is never edited")

    def to(self, user: str) -> list[str]:
        return [r.text for _, r in self.sent if r.to.user_id == user]


@pytest.fixture
async def started(settings, clock):
    opened: list[StudyBot] = []

    async def start(**section) -> StudyBot:
        bot = await StudyBot.start(with_cohort(settings, timezone="Europe/Berlin", track=STEPS, **section), clock)
        opened.append(bot)
        return bot

    yield start
    for bot in opened:
        await bot.close()


async def command(bot: StudyBot, user: str, name: str, args: str = "", teacher: bool = False) -> str:
    [reply] = await bot.handle(Command(name, args, learner(user, teacher), PLACE))
    return reply.text


async def run_until(bot, clock, outbox, until: str, step: timedelta = timedelta(minutes=30)) -> None:
    end = datetime.fromisoformat(until)
    while clock.now() < end:
        clock.set(min(clock.now() + step, end))
        await fire_due(bot, {"slack": outbox})


async def test_each_step_reaches_the_learner_once_at_the_local_time_from_their_first_use(started, clock) -> None:
    clock.set("2026-11-30T06:00:00+00:00")  # Monday, 07:00 in Berlin
    bot = await started()
    outbox = Outbox(clock)
    progress = await command(bot, "U1", "progress")  # U1's first use: day 0 is today
    assert "Track, next: day 0, Mon 30 Nov, 09:00 CET: the quiz of " in progress
    clock.set("2026-12-01T20:00:00+00:00")  # U2 starts a day later, on Tuesday evening
    await command(bot, "U2", "quiz")
    await fire_due(bot, {"slack": outbox})  # the sweep finds U2; U1's first two steps are due
    clock.set("2026-11-30T06:00:00+00:00")
    bot2 = await started()  # a restart: nothing armed is lost, nothing sent twice
    await run_until(bot2, clock, outbox, "2026-12-06T00:00:00+00:00")
    assert outbox.to("U1") == [
        "Your track · day 0: the quiz of Core basics. Type /quiz core-basics to take it.",
        "Your track · day 1: Halfway there: keep going.",
        outbox.to("U1")[2]]
    assert outbox.to("U1")[2].startswith("Your track · day 2: a teach-back. ")
    assert outbox.to("U1")[2].endswith("\nType /teachback core-tb1 to explain it in your own words.")
    times = {(r.to.user_id, r.text.split(":")[0]): at for at, r in outbox.sent}
    # U1's steps at their local times; U2's day 0 step (09:00, past when they started) at once
    assert times[("U1", "Your track · day 2")] >= datetime.fromisoformat("2026-12-02T17:30:00+00:00")
    assert all(r.audience is Audience.DM for _, r in outbox.sent)
    assert len(outbox.to("U2")) == 3 and len(outbox.sent) == 6
    assert (await command(bot2, "U1", "progress")).splitlines()[-1] == "Track: every step reached you (/track)."
    listing = await command(bot2, "U2", "track")
    assert listing.splitlines()[0] == "Your track (day 0: Tue 01 Dec 2026)"
    assert listing.count("✓ day") == 3


async def test_a_step_acknowledged_before_a_kill_is_not_sent_again(started, clock, settings) -> None:
    clock.set("2026-11-30T08:00:00+00:00")
    bot = await started()
    outbox = Outbox(clock)
    await command(bot, "U1", "track")
    lease = timedelta(seconds=bot.settings.timer_lease)
    [event] = [e for e in await bot.due_timers() if e.key.kind == tracks.STEP]  # claimed (committed), not settled
    [reply] = await bot.fire(event)
    await deliver(bot, outbox, reply)  # acknowledged, then the process is killed before it settles
    [claimed] = [e for e in await bot.due_timers() if e.key.kind == tracks.STEP] or [None]
    assert claimed is None  # held by the killed process until its lease ends
    clock.advance(lease.total_seconds() + 1)
    other = await started()
    assert await fire_due(other, {"slack": outbox}) >= 1  # taken over: fired, settled, nothing sent
    assert len(outbox.to("U1")) == 1 and await other.store.count("timers") >= 1
    keys = [r["key"] for r in await other.store.engine.read("SELECT key FROM timers")]
    assert not any(k.startswith(tracks.STEP + ":") and k == str(event.key) for k in keys)


async def test_a_step_claimed_by_a_killed_process_is_sent_by_another_after_its_lease(started, clock) -> None:
    clock.set("2026-11-30T08:00:00+00:00")
    bot = await started()
    outbox = Outbox(clock)
    await command(bot, "U1", "track")
    [event] = [e for e in await bot.due_timers() if e.key.kind == tracks.STEP]  # claimed, then killed: never sent
    clock.advance(bot.settings.timer_lease - 1)
    await fire_due(bot, {"slack": outbox})
    assert outbox.sent == []  # still held
    clock.advance(2)
    await fire_due(bot, {"slack": outbox})
    assert outbox.to("U1") == ["Your track · day 0: the quiz of Core basics. Type /quiz core-basics to take it."]
    assert event.claim == 1


async def test_an_instructor_sets_the_day_a_track_starts(started, clock) -> None:
    clock.set("2026-11-30T06:00:00+00:00")
    bot = await started(instructors=["UTEACH"])
    outbox = Outbox(clock)
    assert (await command(bot, "U1", "track", "start U2 2026-12-10")).startswith("Only instructors can set")
    said = await command(bot, "UTEACH", "track", "start <@U2|ann> 2026-12-10", teacher=True)
    assert said == "U2's track now starts on Thu 10 Dec 2026."
    assert "not a date" in await command(bot, "UTEACH", "track", "start U2 10/12/2026", teacher=True)
    for far in ("9999-12-31", "0001-01-01"):  # a typo in the year: a plain reply, not a bug
        said = await command(bot, "UTEACH", "track", f"start U2 {far}", teacher=True)
        assert "is not a day within a year of today" in said and "reference" not in said
    assert "Use /track start <learner>" in await command(bot, "UTEACH", "track", "start", teacher=True)
    assert "Track, next: day 0, Thu 10 Dec, 09:00 CET" in await command(bot, "U2", "progress")
    await run_until(bot, clock, outbox, "2026-12-10T07:00:00+00:00")
    assert outbox.to("U2") == []  # the sweep leaves a track an instructor set as it is
    await run_until(bot, clock, outbox, "2026-12-10T09:00:00+00:00")
    assert len(outbox.to("U2")) == 1
    said = await command(bot, "UTEACH", "track", "start U2 2026-12-20", teacher=True)
    assert said == "U2's track now starts on Sun 20 Dec 2026 (1 step(s) already sent stay sent)."
    await run_until(bot, clock, outbox, "2026-12-24T00:00:00+00:00")
    assert [t.split(":")[0] for t in outbox.to("U2")] == [
        "Your track · day 0", "Your track · day 1", "Your track · day 2"]
    assert "(day 0: Sun 20 Dec 2026, set by your instructor)" in await command(bot, "U2", "track")


async def test_a_forgotten_learners_steps_never_reach_whoever_comes_next(started, clock) -> None:
    """/forget deletes the learner's row; on SQLite the next learner may get the same row id, and
    must get their own steps at their own times, not the forgotten learner's still waiting."""
    clock.set("2026-11-30T06:00:00+00:00")  # Monday, 07:00 in Berlin
    bot = await started()
    outbox = Outbox(clock)
    await command(bot, "U1", "track")
    [confirm] = await bot.handle(Command("forget", "me", learner("U1"), PLACE))
    await bot.handle(ChoiceMade(next(c.token for c in confirm.choices if c.label.startswith("Yes")),
                                learner("U1"), PLACE))
    clock.set("2026-12-01T06:00:00+00:00")  # Tuesday: U2's day 0
    await command(bot, "U2", "track")
    await run_until(bot, clock, outbox, "2026-12-01T12:00:00+00:00")
    assert outbox.to("U1") == []
    assert outbox.to("U2") == ["Your track · day 0: the quiz of Core basics. Type /quiz core-basics to take it."]
    await run_until(bot, clock, outbox, "2026-12-04T00:00:00+00:00")
    assert [t.split(":")[0] for t in outbox.to("U2")] == [
        "Your track · day 0", "Your track · day 1", "Your track · day 2"]


async def test_a_step_edited_or_added_in_the_settings_reaches_learners_whose_track_reaches_it_later(
        settings, clock) -> None:
    """As the README says: a step edited counts as a new step, sent to the learners whose track reaches
    it after the edit; so is a step added. One not yet reached is not lost."""
    clock.set("2026-11-30T06:00:00+00:00")  # Monday, 07:00 in Berlin
    before = await StudyBot.start(with_cohort(settings, timezone="Europe/Berlin", track=STEPS), clock)
    outbox = Outbox(clock)
    try:
        await command(before, "U1", "track")
        await run_until(before, clock, outbox, "2026-11-30T12:00:00+00:00")
    finally:
        await before.close()
    edited = [STEPS[0], {**STEPS[1], "time": "20:00"}, STEPS[2], {"day": 3, "time": "09:00", "message": "Day 3."}]
    after = await StudyBot.start(with_cohort(settings, timezone="Europe/Berlin", track=edited), clock)
    try:
        await run_until(after, clock, outbox, "2026-12-04T00:00:00+00:00")
    finally:
        await after.close()
    assert [t.split(":")[0] for t in outbox.to("U1")] == [
        "Your track · day 0", "Your track · day 1", "Your track · day 2", "Your track · day 3"]
    times = {r.text.split(":")[0]: at for at, r in outbox.sent}
    assert times["Your track · day 2"] >= datetime.fromisoformat("2026-12-02T19:00:00+00:00")  # 20:00 in Berlin


async def test_a_step_edited_after_the_learner_passed_it_is_not_shown_as_coming(settings, clock) -> None:
    """The edited day-0 step is a new step a learner on day 1 has passed: it is not sent to them, so
    /progress must not announce it as their next step, due "now", for ever."""
    clock.set("2026-11-30T06:00:00+00:00")
    before = await StudyBot.start(with_cohort(settings, timezone="Europe/Berlin", track=STEPS), clock)
    outbox = Outbox(clock)
    try:
        await command(before, "U1", "track")
        await run_until(before, clock, outbox, "2026-12-01T09:00:00+00:00")  # day 0 and day 1 sent
    finally:
        await before.close()
    edited = [{**STEPS[0], "time": "10:00"}, *STEPS[1:]]
    after = await StudyBot.start(with_cohort(settings, timezone="Europe/Berlin", track=edited), clock)
    try:
        await run_until(after, clock, outbox, "2026-12-01T12:00:00+00:00")
        assert len(outbox.to("U1")) == 2
        assert "Track, next: day 2, Wed 02 Dec, 18:30 CET" in await command(after, "U1", "progress")
        listing = (await command(after, "U1", "track")).splitlines()
        assert listing[1].startswith("– day 0, not sent (edited or added after it was due, or undeliverable): the quiz")
    finally:
        await after.close()


async def test_a_cohort_without_a_track_says_so(bot) -> None:
    assert await command(bot, "U1", "track") == "This cohort has no track."
    assert "Track" not in await command(bot, "U1", "progress")


def test_the_steps_are_checked_as_the_settings_are(settings: Settings) -> None:
    def refused(step: object) -> str:
        with pytest.raises(ConfigError) as caught:
            with_cohort(settings, track=[step])
        return str(caught.value)

    assert "track[0]: needs exactly one of quiz, teachback, review, message, not quiz and message" in refused(
        {"day": 0, "time": "09:00", "quiz": "a", "message": "b"})
    assert "track[0].day: must be a whole number of days" in refused({"day": -1, "quiz": "core-basics"})
    assert 'track[0].time: YAML reads an unquoted 9:00 as the number 540' in refused({"day": 0, "time": 540,
                                                                                    "quiz": "x"})
    assert ("track[0].lesson: unknown key; the keys under cohorts.T1.track[0] are day, time, quiz, teachback,"
            " review, message") in refused({"day": 0, "lesson": "core-basics"})
    with pytest.raises(ConfigError, match="track: must be a list of steps"):
        with_cohort(settings, track={"day": 0})
    # a message longer than one chat message would reach the learner cut, "the full text is in the lesson pack"
    assert "track[0].message: 3000 characters are more than one message holds (1800); shorten it" in refused(
        {"day": 0, "message": "x" * 3000})
    chosen = with_cohort(settings, track=[{"day": 0, "quiz": "nope"}, {"day": 1, "teachback": "core-tb9"},
                                          {"day": 1, "review": "core-basics"}])
    problems = settings_problems(chosen, check_library(settings.content_dir).library)
    assert [key for key, _ in problems] == ["cohorts.T1.track[0].quiz", "cohorts.T1.track[1].teachback"]
    assert "there is no teach-back prompt 'core-tb9'; write one of core-tb1, core-tb2" in problems[1][1]
