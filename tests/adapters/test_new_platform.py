"""A new platform is translation only: the throwaway toy adapter (toy_platform.py) runs a quiz
with buttons and a form through the shared reply policy, and its learners are told when a post
could not be delivered."""

from __future__ import annotations

import itertools
from dataclasses import replace
from pathlib import Path

import pytest
from toy_platform import UNDELIVERABLE, ToyAdapter, ToyWire

from adapters.replies import NOT_TAKEN
from bot.core.config import Instructors
from bot.core.messages import Actor
from bot.runtime.app import StudyBot

TEACHER = "U0T"
ids = itertools.count(1)


@pytest.fixture
def toy(bot: StudyBot) -> ToyAdapter:
    bot.ctx.settings = replace(bot.settings, instructors=Instructors(everywhere={"toy": frozenset({TEACHER})}))
    return ToyAdapter(bot, ToyWire())


async def act(toy: ToyAdapter, kind: str, user: str = "U1", **fields: str) -> list[tuple[str, dict]]:
    """Send one payload; the wire calls it caused."""
    before = len(toy.wire.calls)
    await toy.receive({"id": next(ids), "type": kind, "team": "T1", "room": "R1", "user": user, **fields})
    return toy.wire.calls[before:]


def test_the_toy_adapter_is_small() -> None:
    assert len((Path(__file__).parent / "toy_platform.py").read_text().splitlines()) < 150


async def test_a_quiz_with_buttons_is_answered_then_recorded(toy: ToyAdapter, bot: StudyBot) -> None:
    [(method, question)] = await act(toy, "command", name="quiz")
    assert method == "respond" and len(question["buttons"]) >= 2
    right = next(iter(bot.library.lessons.values())).questions[0].correct_index
    button = next(b for b in question["buttons"] if b["value"].endswith(f".{right}"))
    calls = await act(toy, "click", value=button["value"])
    assert calls[0][0] == "respond" and "Correct" in calls[0][1]["text"]
    assert (await bot.store.boards.standing(Actor("toy", "T1", "U1"), None)).points == 1


async def test_a_form_opens_as_the_answer_and_its_text_is_graded(toy: ToyAdapter) -> None:
    [(method, modal)] = await act(toy, "command", name="teachback")
    assert method == "modal" and modal["title"] == "Teach-back"
    [(method, feedback)] = await act(toy, "form", form=modal["form"], text="FSDP shards the parameters across GPUs.")
    assert method == "respond" and feedback["text"]


async def test_a_post_refused_for_good_is_told_instead_of_posted(toy: ToyAdapter) -> None:
    toy.wire.refusing.add("R1")
    calls = await act(toy, "command", user=TEACHER, name="leaderboard", text="post")
    assert [m for m, _ in calls] == ["respond", "whisper"]
    assert calls[0][1]["text"] is None  # the answer waited: "Posted." would have been untrue
    assert calls[1][1]["text"] == UNDELIVERABLE[True]


async def test_a_platform_briefly_down_is_told_to_try_again(toy: ToyAdapter) -> None:
    toy.wire.down.add("R1")
    calls = await act(toy, "command", user=TEACHER, name="leaderboard", text="post")
    assert calls[-1][1]["text"] == NOT_TAKEN.format(platform="Toy", why="ToyDown")


async def test_a_delivered_post_is_confirmed_after_it(toy: ToyAdapter) -> None:
    calls = await act(toy, "command", user=TEACHER, name="leaderboard", text="post")
    assert [m for m, _ in calls] == ["respond", "post", "whisper"] and calls[-1][1]["text"] == "Posted."
