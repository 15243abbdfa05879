"""The scheduler: each timer on its own, so one broken channel never stops or delays the others;
a failing delivery is retried with backoff, then given up with its reason, and a round's starter told."""

from __future__ import annotations

import asyncio

import pytest

from bot.core.errors import DeliveryFailed
from bot.core.messages import Actor, Audience, ChoiceMade, Command, MessageRef, Place, Reply
from bot.kit.feature import MAX_ATTEMPTS, retry_at
from bot.runtime.app import StudyBot
from bot.runtime.scheduler import Scheduler, fire_due
from bot.store.model import RoundState

pytestmark = pytest.mark.both_engines


class Outbox:
    """A platform's Outbox that records what it delivered; channels in `broken` fail, `hanging` never answer."""

    def __init__(self, platform: str, broken: frozenset[str] = frozenset(), permanent: bool = False,
                 hanging: frozenset[str] = frozenset()) -> None:
        self.platform, self.broken, self.permanent, self.hanging = platform, broken, permanent, hanging
        self.sent: list[Reply] = []
        self.edits: list[tuple[MessageRef, Reply]] = []
        self.release = asyncio.Event()

    async def _channel(self, channel: str | None) -> None:
        if channel in self.hanging:
            await self.release.wait()
        if channel in self.broken:
            raise DeliveryFailed(f"channel {channel} is archived", permanent=self.permanent)

    async def send(self, reply: Reply) -> MessageRef:
        await self._channel(reply.place.channel_id if reply.place and reply.audience is Audience.PUBLIC else None)
        self.sent.append(reply)
        return MessageRef(self.platform, (reply.place.channel_id if reply.place else None) or "dm", str(len(self.sent)))

    async def edit(self, ref: MessageRef, reply: Reply) -> None:
        await self._channel(ref.channel_id)
        self.edits.append((ref, reply))


COHORTS = (("slack", "T1", "C1"), ("slack", "T2", "C-BAD"), ("discord", "300", "400"))


async def start_rounds(bot: StudyBot) -> None:
    """A round in each cohort, each question posted as if its platform had delivered it."""
    for platform, cohort, channel in COHORTS:
        starter = Actor(platform, cohort, f"starter-{cohort}")
        replies = await bot.handle(Command("quiz", "round", starter, Place(platform, cohort, channel)))
        [question] = [r for r in replies if r.audience is Audience.PUBLIC]
        await bot.message_posted(question.tag, MessageRef(platform, channel, f"{cohort}-q1"))


async def answer_open_questions(bot: StudyBot, outboxes: tuple[Outbox, ...]) -> None:
    """Someone answers every round question open now, so that no round pauses for silence."""
    rows = await bot.store.engine.read("SELECT p.id, r.platform, r.cohort, r.channel_id FROM prompts p"
                                       " JOIN rounds r ON r.id = p.round_id WHERE p.closed_at IS NULL")
    for r in rows:
        await bot.handle(ChoiceMade(f"{r['id']}.?", Actor(r["platform"], r["cohort"], "answerer"),
                                    Place(r["platform"], r["cohort"], r["channel_id"])))


def reveals(outbox: Outbox, channel: str) -> int:
    return sum(1 for ref, _ in outbox.edits if ref.channel_id == channel)


async def test_one_channel_failing_for_good_stops_neither_other_cohort(bot, clock, settings) -> None:
    await start_rounds(bot)
    slack, discord = Outbox("slack", broken=frozenset({"C-BAD"})), Outbox("discord")
    outboxes = {"slack": slack, "discord": discord}
    questions = len(next(iter(bot.library.lessons.values())).questions)
    for step in range(1, questions + 1):  # the broken channel's retries come and go meanwhile
        await answer_open_questions(bot, (slack, discord))
        clock.advance(settings.round_seconds + 1)
        await fire_due(bot, outboxes)
        assert (reveals(slack, "C1"), reveals(discord, "400")) == (step, step)  # on time, every question
    assert any("Round over" in r.text for r in slack.sent) and any("Round over" in r.text for r in discord.sent)
    for _ in range(MAX_ATTEMPTS):  # the broken channel's timer keeps failing until it is given up
        clock.advance(600)
        await fire_due(bot, outboxes)
    bad = next(r for r in await bot.store.engine.read("SELECT id FROM rounds WHERE channel_id = 'C-BAD'"))
    assert (await bot.store.rounds.get(bad["id"])).state is RoundState.DONE  # closed, not left open
    [given_up] = await bot.store.timers.given_up(clock.now().replace(year=2000))
    assert given_up.timer.startswith(f"round:{bad['id']}:") and "archived" in given_up.reason
    [notice] = [r for r in slack.sent if r.audience is Audience.DM]
    assert notice.to.user_id == "starter-T2" and "was stopped" in notice.text and "archived" in notice.text
    assert await bot.store.count("timers") == 0  # nothing left to fire for any round
    assert reveals(slack, "C-BAD") == 0


async def test_a_permanent_failure_is_given_up_at_once(bot, clock, settings) -> None:
    await start_rounds(bot)
    outboxes = {"slack": Outbox("slack", broken=frozenset({"C-BAD"}), permanent=True), "discord": Outbox("discord")}
    clock.advance(settings.round_seconds + 1)
    await fire_due(bot, outboxes)
    [given_up] = await bot.store.timers.given_up(clock.now().replace(year=2000))
    assert "archived" in given_up.reason


async def test_a_hanging_channel_does_not_delay_the_others(bot, clock, settings) -> None:
    await start_rounds(bot)
    slack, discord = Outbox("slack", hanging=frozenset({"C-BAD"})), Outbox("discord")
    scheduler = Scheduler(bot, {"slack": slack, "discord": discord})
    clock.advance(settings.round_seconds + 1)
    tasks = await scheduler.tick()
    assert len(tasks) == 3
    for _ in range(500):
        if reveals(slack, "C1") and reveals(discord, "400") and len(scheduler.in_flight) == 1:
            break  # both delivered and recorded as done
        await asyncio.sleep(0.01)
    assert (reveals(slack, "C1"), reveals(discord, "400"), reveals(slack, "C-BAD")) == (1, 1, 0)
    assert len(scheduler.in_flight) == 1 and await scheduler.tick() == []  # the hung one is not fired twice
    slack.release.set()
    await asyncio.gather(*tasks)
    assert reveals(slack, "C-BAD") == 1


def test_retries_back_off_then_give_up(clock) -> None:
    now = clock.now()
    delays = [(retry_at(now, n) - now).total_seconds() for n in range(1, MAX_ATTEMPTS)]
    assert delays == sorted(delays) and delays[0] == 10 and delays[-1] <= 300
    assert retry_at(now, MAX_ATTEMPTS) is None


@pytest.mark.parametrize("missing", ["discord"])
async def test_a_post_for_a_platform_not_running_is_given_up_and_recorded(bot, clock, settings, missing) -> None:
    await start_rounds(bot)
    clock.advance(settings.round_seconds + 1)
    await fire_due(bot, {"slack": Outbox("slack")})  # no discord connection
    [given_up] = await bot.store.timers.given_up(clock.now().replace(year=2000))
    assert given_up.reason == f"no {missing} connection serves this post"


async def test_a_question_whose_post_failed_is_posted_again_then_given_up(bot, clock, settings) -> None:
    """The first question never reached the channel: its reveal posts it instead (learners see it), and
    while that keeps failing, the round is given up after MAX_ATTEMPTS and its starter told."""
    starter = Actor("slack", "T2", "starter-T2")
    await bot.handle(Command("quiz", "round", starter, Place("slack", "T2", "C-BAD")))  # the post is lost
    slack = Outbox("slack", broken=frozenset({"C-BAD"}))
    for _ in range(MAX_ATTEMPTS):
        clock.advance(settings.round_seconds + 1)
        assert await fire_due(bot, {"slack": slack}) == 1
    [given_up] = await bot.store.timers.given_up(clock.now().replace(year=2000))
    assert "archived" in given_up.reason and await bot.store.count("timers") == 0
    assert [r.to.user_id for r in slack.sent if r.audience is Audience.DM] == ["starter-T2"]

    ok = Outbox("slack")
    await bot.handle(Command("quiz", "round", starter, Place("slack", "T2", "C-OK")))  # lost once, then fine
    clock.advance(settings.round_seconds + 1)
    await fire_due(bot, {"slack": ok})
    assert [r.text.split("\n", 1)[0] for r in ok.sent] == ["Round · question 1 of 4 · 60 s"]  # posted again
    clock.advance(settings.round_seconds + 1)
    await fire_due(bot, {"slack": ok})
    assert len(ok.edits) == 1 and "question 2 of 4" in ok.sent[-1].text  # then revealed, and on it goes
