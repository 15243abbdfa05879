"""Streaks: days in a row with an answer or a review, in the learner's time zone, reckoned from the stored
answer times; across a daylight-saving change and a learner's change of time zone (a fixed clock), hidden
by the learner or for a cohort; shown in /progress and in the review reminder."""

import itertools

import pytest
from support import answer as answer_event
from support import channel, learner, record, with_cohort

from bot.core.messages import Command, MessageRef, TextSubmitted
from bot.runtime.scheduler import fire_due

pytestmark = pytest.mark.both_engines
IDS = itertools.count()  # a fresh question for each recorded answer


async def say(bot, name, args="", who=None):
    [reply] = await bot.handle(Command(name, args, who or learner(), channel()))
    return reply.text


async def answer_at(bot, clock, when, who=None):
    clock.set(when)
    await record(bot, who or learner(), f"q{next(IDS)}")


async def test_a_daylight_saving_change_keeps_the_local_days(bot, clock, settings) -> None:
    """Berlin leaves summer time on Sunday 25 October 2026: that Sunday lasts 25 hours. Days counted in UTC
    would put Sunday's two late answers on one day, and a fixed +02:00 would lose the Sunday."""
    bot.ctx.settings = with_cohort(settings, timezone="Europe/Berlin")
    await answer_at(bot, clock, "2026-10-24T21:30:00+00:00")  # Saturday 23:30 CEST
    await answer_at(bot, clock, "2026-10-25T22:30:00+00:00")  # Sunday 23:30 CET (after the change)
    await answer_at(bot, clock, "2026-10-25T23:30:00+00:00")  # Monday 00:30 CET
    assert "Streak: 3 days in a row, today included." in await say(bot, "streak")
    clock.set("2026-10-26T22:59:00+00:00")  # Monday 23:59 CET: still today
    assert "Streak: 3 days in a row, today included." in await say(bot, "streak")
    clock.set("2026-10-27T12:00:00+00:00")  # Tuesday: alive until the day ends
    assert "Streak: 3 days in a row; answer or review a question today to keep it." in await say(bot, "streak")
    clock.set("2026-10-27T23:00:00+00:00")  # Wednesday 00:00 CET: Tuesday passed without an answer
    assert "Streak: none yet." in await say(bot, "streak")


async def test_a_learners_own_time_zone_moves_their_days(bot, clock, settings) -> None:
    """Two answers two hours apart across UTC midnight: two days in UTC (the cohort's), one in Tokyo or Los
    Angeles, where both fall on one local day; /timezone off goes back to the cohort's."""
    bot.ctx.settings = with_cohort(settings, timezone="UTC")
    await answer_at(bot, clock, "2026-11-30T23:00:00+00:00")  # Monday in UTC, Tuesday 08:00 in Tokyo
    await answer_at(bot, clock, "2026-12-01T01:00:00+00:00")  # Tuesday in UTC, Tuesday 10:00 in Tokyo
    assert "Streak: 2 days in a row, today included." in await say(bot, "streak")
    assert "Asia/Tokyo" in await say(bot, "timezone", "asia/tokyo")  # any case
    assert "Streak: 1 day in a row, today included." in await say(bot, "streak")
    assert "in Asia/Tokyo" in await say(bot, "streak")
    await say(bot, "timezone", "America/Los_Angeles")  # Monday 15:00 and 17:00 there; now Monday 17:00
    assert "Streak: 1 day in a row, today included." in await say(bot, "streak")
    clock.set("2026-12-01T09:00:00+00:00")  # Tuesday 01:00 in Los Angeles: Monday counts, today not yet
    assert "Streak: 1 day in a row; answer or review" in await say(bot, "streak")
    assert "cohort's time zone, UTC" in await say(bot, "timezone", "off")
    assert "Streak: 2 days in a row, today included." in await say(bot, "streak")
    assert (await bot.ctx.learner_zone(learner())).key == "UTC"


async def test_an_unknown_time_zone_says_what_to_type(bot) -> None:
    text = await say(bot, "timezone", "Europe/Berln")
    assert "is not a time zone" in text and "Did you mean Europe/Berlin?" in text and "Europe/Berlin or" in text
    assert (await bot.store.learners.choices(learner())).timezone is None


async def test_progress_shows_the_streak_and_streak_off_hides_it(bot, clock) -> None:
    who = learner()
    [question] = await bot.handle(Command("quiz", "", who, channel()))
    q = next(q for q in next(iter(bot.library.lessons.values())).questions if q.prompt in question.text)
    await bot.handle(answer_event(q, question, who, channel()))  # an answer through the core, today
    assert "Streak: 1 day in a row, today included. (/streak off hides it)" in await say(bot, "progress")
    assert "hidden" in await say(bot, "streak", "off")
    assert "Streak" not in await say(bot, "progress")
    assert "hidden" in await say(bot, "streak")
    await say(bot, "streak", "on")
    assert "Streak: 1 day" in await say(bot, "progress")
    assert "Use /streak, /streak off or /streak on." in await say(bot, "streak", "sideways")


async def test_a_cohort_can_turn_streaks_off_for_everyone(bot, clock, settings) -> None:
    bot.ctx.settings = with_cohort(settings, streaks=False)
    await answer_at(bot, clock, "2026-11-30T10:00:00+00:00")
    assert "Streak" not in await say(bot, "progress")
    assert await say(bot, "streak") == "Streaks are turned off for this cohort."
    assert await say(bot, "streak", "on") == "Streaks are turned off for this cohort."


async def test_the_streak_counts_reviews_and_shows_in_the_reminder(bot, clock) -> None:
    who = learner()
    for day in ("2026-11-29T12:00:00+00:00", "2026-11-30T08:00:00+00:00"):  # Sunday, and a review on Monday
        clock.set(day)
        [card] = await bot.handle(Command("review", "", who, channel()))
        q = next(q for q in next(iter(bot.library.lessons.values())).questions if q.prompt in card.text)
        await bot.handle(answer_event(q, card, who, channel(), right=False))
    await bot.handle(Command("review", "remind on", who, channel()))

    class Outbox:
        sent: list = []

        async def send(self, reply):
            self.sent.append(reply)
            return MessageRef("slack", "D1", str(len(self.sent)))

    outbox = Outbox()
    clock.set("2026-11-30T10:00:00+00:00")
    await fire_due(bot, {"slack": outbox})
    [reminder] = outbox.sent
    assert reminder.text.splitlines()[1] == "Streak: 2 days in a row, today included."


async def test_the_streak_needs_one_probe_per_day_however_many_answers(bot, clock) -> None:
    """A learner with many answers a day: the streak is the run of days, not of answers."""
    for day in range(1, 6):
        for hour in (8, 12, 20):
            await answer_at(bot, clock, f"2026-11-{day:02d}T{hour:02d}:00:00+00:00")
    assert "Streak: 5 days in a row, today included." in await say(bot, "streak")
    assert "Streak: none yet." in await say(bot, "streak", who=learner("U2"))


async def test_the_reminder_follows_the_learners_own_time_zone(bot, clock) -> None:
    """09:00 in Tokyo is 00:00 UTC: a learner there is reminded then, not at the cohort's (UTC) 09:00."""
    who = learner()
    clock.set("2026-11-30T12:00:00+00:00")
    [card] = await bot.handle(Command("review", "", who, channel()))
    q = next(q for q in next(iter(bot.library.lessons.values())).questions if q.prompt in card.text)
    await bot.handle(answer_event(q, card, who, channel(), right=False))
    await bot.handle(Command("review", "remind on", who, channel()))
    await say(bot, "timezone", "Asia/Tokyo")

    class Outbox:
        sent: list = []

        async def send(self, reply):
            self.sent.append(reply)
            return MessageRef("slack", "D1", str(len(self.sent)))

    outbox = Outbox()
    clock.set("2026-11-30T23:30:00+00:00")  # Tuesday 08:30 in Tokyo: not yet
    await fire_due(bot, {"slack": outbox})
    assert outbox.sent == []
    clock.set("2026-12-01T00:40:00+00:00")  # Tuesday 09:40 in Tokyo (00:40 UTC, long before 09:00 UTC)
    await fire_due(bot, {"slack": outbox})
    [reminder] = outbox.sent
    assert reminder.text.splitlines()[1] == "Streak: 1 day in a row; answer or review a question today to keep it."


@pytest.mark.parametrize("typed", ["UTC+2", "GMT+2", "utc-05:00", "+02:00", "GMT +5:30"])
async def test_an_offset_is_not_taken_for_a_zone_nor_answered_with_a_wrong_one(bot, typed) -> None:
    """"UTC+2" once got "Did you mean UTC?" (two hours off); an offset is told apart and a place asked for."""
    text = await say(bot, "timezone", typed)
    assert "Did you mean" not in text and "is an offset" in text and "such as Europe/Berlin" in text
    assert (await bot.store.learners.choices(learner())).timezone is None


async def test_a_chosen_zone_is_confirmed_with_its_offset_and_time_now(bot, clock) -> None:
    """Etc/GMT-2 is two hours ahead of UTC (POSIX signs): the confirmation shows it, so nobody picks it by mistake."""
    clock.set("2026-12-01T09:00:00+00:00")
    assert await say(bot, "timezone", "Etc/GMT-2") == (
        "Your time zone is now Etc/GMT-2 (UTC+02:00; it is 11:00 there now): your days begin at midnight there.")
    assert "(UTC+02:00; it is 11:00 there now)" in await say(bot, "timezone")


@pytest.mark.parametrize("typed", ["localtime", "Factory"])
async def test_a_name_that_is_no_place_is_refused(bot, typed) -> None:
    """"localtime" is whatever zone the bot's server runs in, "Factory" no zone at all (its offset is "-00")."""
    assert "is not a time zone" in await say(bot, "timezone", typed)
    assert (await bot.store.learners.choices(learner())).timezone is None


async def test_a_teach_back_keeps_the_streak(bot, clock) -> None:
    """A day whose study was a teach-back (a track's step may be just that) is a day of the streak, as an answer is."""
    await answer_at(bot, clock, "2026-11-30T10:00:00+00:00")  # Monday: a question
    clock.set("2026-12-01T10:00:00+00:00")  # Tuesday: a teach-back only
    [form] = await bot.handle(Command("teachback", "", learner(), channel()))
    await bot.handle(TextSubmitted(form.form.token, "FSDP shards the parameters across GPUs.", learner(), channel()))
    assert "Streak: 2 days in a row, today included." in await say(bot, "streak")
