"""A process that walks one multi-step scenario through the core and kills itself (SIGKILL) right
after its Nth database commit or its Nth delivery, for test_kill_steps.py.

    python steps_worker.py SCENARIO DB CLOCK commit|send N

It prints `ACK <what>` once a step was acknowledged to the learner (the reply came back) and
`SENT <tag>` once a platform took a delivery; the test checks those against the database after a
restart. Scenarios: round (start, post, three answers, reveal by the timer, the next post, Next,
summary), selfgrade (answer a short question, press "I got it right"), reminders (a due reminder
delivered by the hourly timer).
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from pathlib import Path

import bot.store.sqlite_engine as engine
from bot.core.clock import FixedClock
from bot.core.config import Settings
from bot.core.messages import Actor, Audience, ChoiceMade, Command, MessageRef, Place, Reply, TextSubmitted
from bot.runtime.app import StudyBot
from bot.runtime.scheduler import fire_due
from bot.store.model import QUESTION, AnswerMode

PACK = Path(__file__).resolve().parents[1] / "packs" / "core"
PLACE = Place("slack", "T1", "C1")


def kill_after(counter: str, n: int):
    """SIGKILL this process right after the nth event of `counter` (commit or send)."""
    counts = {"commit": 0, "send": 0}

    def tick(kind: str | None) -> dict[str, int]:
        if kind is None:
            return counts
        counts[kind] += 1
        if kind == counter and counts[kind] == n:
            sys.stdout.flush()
            os.kill(os.getpid(), signal.SIGKILL)
        return counts

    return tick


class Outbox:
    def __init__(self, tick) -> None:
        self.tick = tick
        self.sent = 0

    async def send(self, reply: Reply) -> MessageRef:
        self.sent += 1
        print("SENT", reply.tag or reply.text.split("\n", 1)[0], flush=True)
        self.tick("send")
        return MessageRef("slack", reply.place.channel_id if reply.place and reply.place.channel_id else "D1",
                          f"m{self.sent}")

    async def edit(self, ref: MessageRef, reply: Reply) -> None:
        print("SENT edit", ref.message_id, flush=True)
        self.tick("send")


def ack(what: str) -> None:
    print("ACK", what, flush=True)


async def round_scenario(bot: StudyBot, clock: FixedClock, outbox: Outbox) -> None:
    starter = Actor("slack", "T1", "U0", "starter")
    replies = await bot.handle(Command("quiz", "round 2", starter, PLACE))
    ack("round")
    [question] = [r for r in replies if r.audience is Audience.PUBLIC]
    await outbox.send(question)
    await bot.message_posted(question.tag or "", MessageRef("slack", "C1", "first"))
    for user in ("U1", "U2", "U3"):
        [feedback] = await bot.handle(ChoiceMade(question.choices[0].token, Actor("slack", "T1", user), PLACE))
        assert feedback.audience is Audience.PRIVATE
        ack(f"answer {user}")
    clock.advance(61)
    await fire_due(bot, {"slack": outbox})  # the reveal, and question 2 posted
    nxt = await bot.store.rounds.prompt_at(1, 1)
    assert nxt is not None
    await bot.handle(ChoiceMade(f"{nxt.id}.n", starter, PLACE))  # Next: reveal question 2 now
    ack("next")
    while await fire_due(bot, {"slack": outbox}):
        clock.advance(61)
    ack("done")


async def selfgrade_scenario(bot: StudyBot, clock: FixedClock, outbox: Outbox) -> None:
    who = Actor("slack", "T1", "U1", "learner")
    short = next(q for q in bot.library.questions.values() if q.kind == "short")
    prompt = await bot.store.prompts.new(QUESTION, PLACE, who, lesson_id=short.lesson_id, item_id=short.id,
                                         mode=AnswerMode.PRACTICE)
    [feedback] = await bot.handle(TextSubmitted(prompt.id, "It copies every weight onto each device for speed",
                                                who, PLACE))
    ack("answer")
    [right] = [c for c in feedback.choices if c.label == "I got it right"]
    print("TOKEN", right.token, flush=True)
    [done] = await bot.handle(ChoiceMade(right.token, who, PLACE))
    assert done.text.startswith("Recorded: self-graded"), done.text
    ack("selfgrade")


async def reminders_scenario(bot: StudyBot, clock: FixedClock, outbox: Outbox) -> None:
    for user in ("U1", "U2"):
        who = Actor("slack", "T1", user, user)
        [reply] = await bot.handle(Command("review", "", who, PLACE))
        wrong = next(c for c in reply.choices if not c.token.endswith(".1"))
        await bot.handle(ChoiceMade(wrong.token, who, PLACE))  # a wrong answer: the card is due soon
        await bot.handle(Command("review", "remind on", who, PLACE))
        ack(f"remind {user}")
    clock.advance(3 * 3600)  # past 09:00 in the cohort's time zone, and the cards are due
    await fire_due(bot, {"slack": outbox})
    ack("reminded")


SCENARIOS = {"round": round_scenario, "selfgrade": selfgrade_scenario, "reminders": reminders_scenario}


async def main(scenario: str, db: str, start: str, counter: str, n: int) -> None:
    tick = kill_after(counter, n)
    real = engine.SqliteEngine._commit_together

    def counting(self, c, writes):
        outcomes = real(self, c, writes)
        tick("commit")
        return outcomes

    engine.SqliteEngine._commit_together = counting
    clock = FixedClock(start)
    bot = await StudyBot.start(Settings(db_path=Path(db), content_dir=PACK, results_dir=Path(db).parent / "r"), clock)
    try:
        await SCENARIOS[scenario](bot, clock, Outbox(tick))
    finally:
        await bot.close()
    print("COUNTS", " ".join(f"{k}={v}" for k, v in tick(None).items()), "clock", clock.now().isoformat(), flush=True)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])))
