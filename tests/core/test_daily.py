"""The question of the day: posted once a day at the cohort's local time (daylight saving included),
exactly once across restarts (a crash may repeat a post, never drop it), answered like a round's
question, revealed with its tally, and never repeated before the lesson's questions run out."""

from __future__ import annotations

from datetime import datetime, time, timedelta
from zoneinfo import ZoneInfo

import pytest
from fsrs import Scheduler
from support import channel, choice_for, dont_know, learner, with_cohort

from bot.core.messages import Audience, ChoiceMade, Command, MessageRef
from bot.runtime.app import StudyBot
from bot.runtime.scheduler import fire_due

pytestmark = pytest.mark.both_engines

BERLIN = ZoneInfo("Europe/Berlin")
CHANNEL = "CDAY"


class Outbox:
    """Records each post and edit with the moment it went out."""

    def __init__(self, clock) -> None:
        self.clock = clock
        self.posts: list[tuple[datetime, object]] = []
        self.edits: list[tuple[datetime, MessageRef, object]] = []

    async def send(self, reply):
        self.posts.append((self.clock.now(), reply))
        return MessageRef("slack", reply.place.channel_id, f"m{len(self.posts)}")

    async def edit(self, ref, reply):
        self.edits.append((self.clock.now(), ref, reply))

    def replies(self):
        return [reply for _, reply in self.posts]


class Bots:
    """The bot under test, on one database: started, restarted, and closed at the end."""

    def __init__(self, settings, clock) -> None:
        self.settings, self.clock, self.bot = settings, clock, None
        self.daily = {"channel": CHANNEL, "time": "09:00", "lesson": "core-basics"}

    async def start(self, at: str | None = None, **daily) -> StudyBot:
        """Start the bot (closing the one before: a restart), at `at`, with `daily` settings added."""
        if at is not None:
            self.clock.set(at)
        self.daily.update(daily)
        if self.bot is not None:
            await self.bot.close()
        self.bot = await StudyBot.start(with_cohort(self.settings, timezone="Europe/Berlin", daily=self.daily),
                                        self.clock)
        self.bot.ctx.fsrs = Scheduler(enable_fuzzing=False)
        return self.bot


@pytest.fixture
async def bots(settings, clock):
    opened = Bots(settings, clock)
    yield opened
    if opened.bot is not None:
        await opened.bot.close()


async def run_until(bot, clock, outbox, until: str, step: timedelta = timedelta(minutes=30)) -> None:
    """Let the time pass step by step, firing what is due at each step."""
    end = datetime.fromisoformat(until)
    while clock.now() < end:
        clock.set(min(clock.now() + step, end))
        await fire_due(bot, {"slack": outbox})


def question_in(bot, reply):
    return next(q for q in bot.library.lesson("core-basics").questions if q.prompt in reply.text)


async def test_posted_once_a_day_at_the_local_time(bots, clock) -> None:
    bot = await bots.start("2026-11-30T05:00:00+00:00")  # 06:00 in Berlin
    outbox = Outbox(clock)
    await run_until(bot, clock, outbox, "2026-12-03T05:00:00+00:00")
    times = [at.astimezone(BERLIN) for at, _ in outbox.posts]
    assert [t.isoformat() for t in times] == ["2026-11-30T09:00:00+01:00", "2026-12-01T09:00:00+01:00",
                                              "2026-12-02T09:00:00+01:00"]
    first = outbox.replies()[0]
    assert first.audience is Audience.PUBLIC and first.place.channel_id == CHANNEL
    assert first.text.startswith("Question of the day · Mon 30 Nov")


@pytest.mark.parametrize(("start", "utc_hours"), [
    ("2026-03-27T05:00:00+00:00", [8, 8, 7, 7]),  # summer time starts on Sunday 29 March
    ("2026-10-23T05:00:00+00:00", [7, 7, 8, 8]),  # and ends on Sunday 25 October
])
async def test_posted_at_the_local_time_across_a_daylight_saving_change(bots, clock, start, utc_hours) -> None:
    bot = await bots.start(start)
    outbox = Outbox(clock)
    await run_until(bot, clock, outbox, (datetime.fromisoformat(start) + timedelta(days=4)).isoformat())
    assert [at.astimezone(BERLIN).time() for at, _ in outbox.posts] == [time(9, 0)] * 4
    assert [at.hour for at, _ in outbox.posts] == utc_hours
    assert len({at.astimezone(BERLIN).date() for at, _ in outbox.posts}) == 4


async def test_a_restart_the_same_day_after_the_post_posts_nothing_more(bots, clock) -> None:
    bot = await bots.start("2026-11-30T07:00:00+00:00")
    outbox = Outbox(clock)
    await run_until(bot, clock, outbox, "2026-11-30T10:00:00+00:00")
    assert len(outbox.posts) == 1
    bot = await bots.start()  # the same day, after the post
    await run_until(bot, clock, outbox, "2026-12-01T07:30:00+00:00")
    assert len(outbox.posts) == 1
    bot = await bots.start()  # the next day, before its post
    await run_until(bot, clock, outbox, "2026-12-01T12:00:00+00:00")
    assert [at.isoformat() for at, _ in outbox.posts][1:] == ["2026-12-01T08:00:00+00:00"]


@pytest.mark.parametrize("sent", [True, False], ids=["sent-then-crashed", "crashed-before-sending"])
async def test_a_crash_between_sending_and_recording_repeats_the_post_once_never_drops_it(bots, clock,
                                                                                          sent) -> None:
    bot = await bots.start("2026-11-30T07:30:00+00:00")
    outbox = Outbox(clock)
    clock.set("2026-11-30T08:00:00+00:00")
    [event] = await bot.due_timers()
    [post] = await bot.fire(event)  # the day's question, stored with its prompt...
    if sent:
        outbox.posts.append((clock.now(), post))  # ...and sent; then the process dies before recording it
    bot = await bots.start("2026-11-30T08:05:00+00:00")
    await run_until(bot, clock, outbox, "2026-12-01T07:30:00+00:00")
    today = outbox.replies()
    assert len(today) == (2 if sent else 1)
    assert {r.choices[0].token for r in today} == {post.choices[0].token}  # the same question, the same prompt
    await run_until(bot, clock, outbox, "2026-12-01T09:00:00+00:00")
    assert len(outbox.posts) == len(today) + 1  # and the next day's post comes as usual


async def test_answered_like_a_round_question_once_per_learner_privately_scored_once(bots, clock) -> None:
    bot = await bots.start("2026-11-30T07:30:00+00:00")
    outbox = Outbox(clock)
    await run_until(bot, clock, outbox, "2026-11-30T08:00:00+00:00")
    [post] = outbox.replies()
    q = question_in(bot, post)
    right, wrong = choice_for(post, q.correct_index), choice_for(post, (q.correct_index + 1) % len(q.choices))
    [feedback] = await bot.handle(ChoiceMade(right.token, learner("U1"), channel(channel_id=CHANNEL)))
    assert feedback.audience is Audience.PRIVATE and "Correct" in feedback.text and q.explanation in feedback.text
    assert not feedback.choices  # nothing to go on with, as in a round
    [again] = await bot.handle(ChoiceMade(wrong.token, learner("U1"), channel(channel_id=CHANNEL)))
    assert again.text == "You already answered this question; your first answer stands."
    [other] = await bot.handle(ChoiceMade(wrong.token, learner("U2"), channel(channel_id=CHANNEL)))
    assert other.audience is Audience.PRIVATE and "Not quite" in other.text
    assert await bot.store.count("answers") == 2
    assert (await bot.store.boards.standing(learner("U1"), None)).points == 1
    [practice] = await bot.handle(Command("quiz", "", learner("U1"), channel()))
    assert "question 2 of 4" in practice.text  # the day's answer counts as the learner's answer to it


async def answer_the_day(bot, post, rights: int, wrongs: int) -> None:
    q = question_in(bot, post)
    picks = [q.correct_index] * rights + [(q.correct_index + 1) % len(q.choices)] * wrongs
    for n, index in enumerate(picks):
        await bot.handle(ChoiceMade(choice_for(post, index).token, learner(f"U{n}"), channel(channel_id=CHANNEL)))


async def test_revealed_with_its_tally_at_the_next_days_post(bots, clock) -> None:
    bot = await bots.start("2026-11-30T07:30:00+00:00")
    outbox = Outbox(clock)
    await run_until(bot, clock, outbox, "2026-11-30T08:00:00+00:00")
    [first] = outbox.replies()
    await answer_the_day(bot, first, rights=2, wrongs=1)
    await run_until(bot, clock, outbox, "2026-12-01T07:00:00+00:00")
    assert outbox.edits == []  # not before the next post
    await run_until(bot, clock, outbox, "2026-12-01T08:00:00+00:00")
    [(at, ref, reveal)] = outbox.edits
    assert at.isoformat() == "2026-12-01T08:00:00+00:00" and ref == MessageRef("slack", CHANNEL, "m1")
    assert reveal.text.startswith("Question of the day · Mon 30 Nov")
    assert "3 answered, 2 correct." in reveal.text and question_in(bot, first).explanation in reveal.text
    second = outbox.replies()[1]
    assert second.text.startswith("Question of the day · Tue 01 Dec")
    [late] = await bot.handle(ChoiceMade(first.choices[0].token, learner("U9"), channel(channel_id=CHANNEL)))
    assert "has ended" in late.text
    await bot.handle(ChoiceMade(dont_know(second).token, learner("U1"), channel(channel_id=CHANNEL)))
    await run_until(bot, clock, outbox, "2026-12-02T08:00:00+00:00")
    assert [(ref.message_id, "1 answered, 0 correct." in r.text) for _, ref, r in outbox.edits[1:]] == [("m2", True)]


async def test_revealed_with_its_tally_at_the_configured_reveal_time(bots, clock) -> None:
    bot = await bots.start("2026-11-30T07:30:00+00:00", reveal="18:00")
    outbox = Outbox(clock)
    await run_until(bot, clock, outbox, "2026-11-30T08:00:00+00:00")
    [first] = outbox.replies()
    await answer_the_day(bot, first, rights=1, wrongs=2)
    await run_until(bot, clock, outbox, "2026-11-30T20:00:00+00:00")
    [(at, ref, reveal)] = outbox.edits
    assert at.astimezone(BERLIN).time() == time(18, 0) and ref.message_id == "m1"
    assert "3 answered, 1 correct." in reveal.text
    [late] = await bot.handle(ChoiceMade(first.choices[0].token, learner("U9"), channel(channel_id=CHANNEL)))
    assert "has ended" in late.text
    assert len(outbox.posts) == 1


async def test_no_question_comes_again_before_the_lesson_runs_out(bots, clock) -> None:
    bot = await bots.start("2026-11-30T07:30:00+00:00")
    outbox = Outbox(clock)
    await run_until(bot, clock, outbox, "2026-12-05T12:00:00+00:00")  # six posts, four questions
    asked = [question_in(bot, r).id for r in outbox.replies()]
    lesson = [q.id for q in bot.library.lesson("core-basics").questions]
    assert len(asked) == 6 and sorted(asked[:4]) == sorted(lesson) and asked[4:] == lesson[:2]
