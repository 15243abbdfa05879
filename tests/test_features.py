"""A feature is one module and one entry in the feature list: a throwaway feature, written to a
temporary module, gets its command, its button and its timer served, through the real router,
store and scheduler, with nothing else changed. The router keeps no table of its own per feature."""

from __future__ import annotations

import importlib.util
import sys
from datetime import timedelta
from pathlib import Path
from types import ModuleType

import pytest
from support import RecordingOutbox, channel, learner

from bot.core.errors import DeliveryFailed
from bot.core.messages import ChoiceMade, Command, MessageRef, Reply, TimerFired, TimerKey
from bot.kit.feature import Feature
from bot.runtime import app
from bot.runtime.app import FEATURES, StudyBot
from bot.runtime.scheduler import fire_due

# A feature declares its own prompt kinds (those of its buttons and forms): this one's is "ping".
THROWAWAY = '''
from datetime import timedelta

from bot.core.messages import Audience, Choice, Place, Reply, TimerKey
from bot.kit.commands import command
from bot.kit.feature import Feature, TimerSpec
KIND = "ping"


@command(summary="Ping, then a pong in the channel a minute later")
async def ping(ctx, cmd):
    """/ping: a button now, a pong in this channel in a minute."""
    prompt = await ctx.store.prompts.new(KIND, cmd.place, cmd.actor)
    key = TimerKey.of(KIND, cmd.place.platform, cmd.place.cohort, cmd.place.channel_id)
    await ctx.store.timers.set(str(key), ctx.clock.now() + timedelta(minutes=1))
    return [Reply("Pinged.", choices=(Choice("Press", f"{prompt.id}.x"),))]


async def on_press(ctx, event, prompt, suffix):
    return [Reply(f"Pressed {suffix} by {event.actor.user_id}.")]


async def on_pong(ctx, key):
    platform, cohort, channel_id = key.parts
    return [Reply("Pong.", Audience.PUBLIC, place=Place(platform, cohort, channel_id))]


def every_hour(ctx, key):
    return ctx.clock.now() + timedelta(hours=1)


async def on_given_up(ctx, key, reason):
    platform, cohort, channel_id = key.parts
    return [Reply(f"No pong: {reason}", Audience.PUBLIC, place=Place(platform, cohort, channel_id))]


FEATURE = Feature("ping", commands=(ping,), choices={KIND: on_press},
                  timers=(TimerSpec(KIND, on_pong, repeat=every_hour, on_given_up=on_given_up, attempts=1),))
'''


@pytest.fixture
def throwaway(tmp_path: Path) -> ModuleType:
    path = tmp_path / "throwaway_feature.py"
    path.write_text(THROWAWAY)
    spec = importlib.util.spec_from_file_location("throwaway_feature", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    try:
        spec.loader.exec_module(module)
        yield module
    finally:
        del sys.modules[spec.name]


@pytest.fixture
async def pinging(throwaway, settings, clock):
    features = (*FEATURES, throwaway.FEATURE)
    bot = await StudyBot.start(settings, clock, features)
    yield bot
    await bot.close()


async def test_a_feature_in_a_module_of_its_own_gets_its_command_button_and_timer(pinging, clock) -> None:
    [pinged] = await pinging.handle(Command("ping", "", learner("U7"), channel()))
    assert pinged.text == "Pinged."
    [pressed] = await pinging.handle(ChoiceMade(pinged.choices[0].token, learner("U7"), channel()))
    assert pressed.text == "Pressed x by U7."
    help_ = "\n".join(r.text for r in await pinging.handle(Command("help", "", learner(), channel())))
    assert "• /ping: a button now, a pong in this channel in a minute." in help_.splitlines()

    outbox = RecordingOutbox()
    assert await fire_due(pinging, {"slack": outbox}) == 0  # not due yet
    clock.advance(61)
    assert await fire_due(pinging, {"slack": outbox}) == 1
    [pong] = outbox.sent
    assert pong.text == "Pong." and pong.place == channel()
    # its declared repeat re-armed it an hour on, rather than deleting it
    assert await pinging.store.timers.due(clock.now() + timedelta(minutes=59)) == []
    assert await pinging.store.timers.due(clock.now() + timedelta(hours=1)) == ["ping:slack:T1:C1"]


async def test_a_feature_s_give_up_rule_is_read_from_its_declaration(pinging, clock) -> None:
    await pinging.handle(Command("ping", "", learner(), channel()))
    clock.advance(61)

    class Broken(RecordingOutbox):
        async def send(self, reply: Reply) -> MessageRef:
            if reply.text == "Pong.":
                raise DeliveryFailed("channel C1 is archived")
            return await super().send(reply)

    outbox = Broken()
    await fire_due(pinging, {"slack": outbox})  # attempts=1: given up at the first failure
    [given_up] = await pinging.store.timers.given_up(clock.now() - timedelta(minutes=1))
    assert given_up.timer == "ping:slack:T1:C1" and given_up.reason == "channel C1 is archived"
    assert [r.text for r in outbox.sent] == ["No pong: channel C1 is archived"]  # its notice, delivered
    assert await pinging.store.timers.due(clock.now() + timedelta(hours=1)) == ["ping:slack:T1:C1"]  # it repeats


async def test_the_default_bot_does_not_know_the_throwaway_feature(bot) -> None:
    [reply] = await bot.handle(Command("ping", "", learner(), channel()))
    assert reply.text == "There is no command /ping. Type /help to see the commands."
    assert await bot.fire(TimerFired(TimerKey.parse("ping:slack:T1:C1"), bot.ctx.clock.now())) == []


def test_two_features_may_not_claim_one_command_or_timer(throwaway, settings) -> None:
    with pytest.raises(ValueError, match="two features declare the command ping"):
        StudyBot(None, (throwaway.FEATURE, Feature("again", commands=throwaway.FEATURE.commands)))  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="two features declare the timer ping"):
        StudyBot(None, (throwaway.FEATURE, Feature("again", timers=throwaway.FEATURE.timers)))  # type: ignore[arg-type]


def test_two_features_may_not_claim_one_prompt_kind(throwaway, settings) -> None:
    """A kind of prompt is its feature's: another feature's form of the same kind is refused too."""
    async def on_text(ctx, event, prompt):  # noqa: ANN001, ANN202
        return []

    with pytest.raises(ValueError, match="two features declare the prompt kind ping"):
        StudyBot(None, (throwaway.FEATURE, Feature("again", forms={"ping": on_text})))  # type: ignore[arg-type]


def test_the_router_has_no_table_per_feature() -> None:
    """app.py keeps the list of features and nothing that names one feature's parts."""
    tables = {name for name, value in vars(app).items()
              if name.isupper() and isinstance(value, dict | tuple | list | frozenset | set)}
    assert tables == {"FEATURES"}
    assert all(isinstance(feature, Feature) for feature in FEATURES)
    source = Path(app.__file__).read_text()
    assert "split(" not in source and "PromptKind." not in source and "AnswerMode." not in source


def test_a_timer_key_is_stored_as_before() -> None:
    """Keys keep the stored form `kind:part:part`, so existing databases need no migration."""
    for stored in ("round:12:3", "roundend:12:stale", "leaderboard:discord:300", "reminders",
                   'reminders:["slack", "T1", "U1", "2026-11-30"]', "daily:slack:T:with:colons"):
        assert str(TimerKey.parse(stored)) == stored
    assert TimerKey.parse("daily:slack:T:with:colons").cohort.id == "T:with:colons"
    assert TimerKey.parse("round:12:3") == TimerKey.of("round", 12, 3)
