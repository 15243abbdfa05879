"""A simulated cohort for the insight tests: 36 learners of the core pack in New York, each acting at
one moment (some right at the edges of the local week and of the last seven local days), whose
every answer is chosen here and written down, so that a test can count what /insights must say
without asking the store. Everything goes through StudyBot.handle, as a platform would send it."""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import datetime
from zoneinfo import ZoneInfo

from support import CORE_PACK, answer, choice_for, record

from bot.core.clock import FixedClock
from bot.core.config import CohortSettings, Settings
from bot.core.messages import Actor, ChoiceMade, Cohort, Command, Place, TextSubmitted
from bot.runtime.app import StudyBot

ZONE = ZoneInfo("America/New_York")
NOW = "2026-12-02T15:00:00+00:00"  # Wednesday 10:00 in New York: week 2026-W49 began Monday 05:00 UTC
MOMENTS = (
    "2026-11-30T04:59:59+00:00",  # Sunday 23:59:59 in New York: last week (in UTC it is already Monday)
    "2026-11-30T05:00:00+00:00",  # Monday 00:00 in New York: this week
    "2026-11-26T04:59:59+00:00",  # Wednesday 25 Nov 23:59:59: more than seven local days ago, behind
    "2026-11-26T05:00:00+00:00",  # Thursday 26 Nov 00:00: the first of the last seven local days, not behind
    "2026-11-17T12:00:00+00:00",  # two weeks ago: behind
    "2026-12-02T14:00:00+00:00",  # an hour ago
)
MARK = "zebra"  # in every typed answer: no answer text may reach /insights, the report or the CSV
SHORT_TEXTS = {  # what a learner typed -> the key points it misses
    "both": ("It shards the parameters across GPUs and pays with extra communication ({mark}).", ()),
    "shards": ("It shards the parameters across GPUs ({mark}).", ("communication",)),
    "communication": ("It pays with extra communication ({mark}).", ("shards",)),
    "none": ("I think it mostly depends on the budget ({mark}).", ("shards", "communication")),
}
TEACHBACK_TEXTS = {
    "core-tb1": {
        "both": ("Data parallelism copies the model; tensor parallelism splits each layer ({mark}).", ()),
        "copies": ("Data parallelism copies the model to every GPU ({mark}).", ("splits-layer",)),
        "none": ("No idea at all, sorry ({mark}).", ("copies", "splits-layer")),
    },
    "core-tb2": {
        "ratio": ("MFU is observed throughput over peak ({mark}).", ()),
        "none": ("No idea at all, sorry ({mark}).", ("ratio",)),
    },
}
LOOKUPS = {"fsdp": ("FSDP", True), "DP": ("Data parallelism", True), "Model FLOPs utilization": ("MFU", True),
           "zero bubble": ("zero bubble", False), "fspd": ("FSDP", True), "RLHF!": ("rlhf", False)}


@dataclass
class Given:
    """A learner's first answer to a question, as given."""

    question_id: str
    correct: bool  # after any self-grade
    choice: int | None = None
    missed: tuple[str, ...] = ()
    self_graded: bool = False


@dataclass
class Simulated:
    actor: Actor
    moment: datetime
    first: list[Given] = field(default_factory=list)
    practice: list[str] = field(default_factory=list)  # questions answered again, after the first answer
    teachbacks: list[tuple[str, tuple[str, ...]]] = field(default_factory=list)  # (prompt, key points missed)
    lookups: list[tuple[str, bool]] = field(default_factory=list)  # (the term or normalised query, found)

    @property
    def started(self) -> bool:
        return bool(self.first or self.teachbacks)


def settings_for(tmp_path, database_url: str | None = None) -> Settings:
    return Settings(db_path=tmp_path / "studybot.db", database_url=database_url, content_dir=CORE_PACK,
                    results_dir=tmp_path / "results", cohorts={Cohort("slack", "T1"): CohortSettings(timezone=ZONE)})


async def start(tmp_path, database_url: str | None = None) -> tuple[StudyBot, FixedClock]:
    clock = FixedClock(NOW)
    return await StudyBot.start(settings_for(tmp_path, database_url), clock), clock


async def simulate(bot: StudyBot, clock: FixedClock, learners: int = 36, seed: int = 15,
                   cohort: str = "T1", prefix: str = "U") -> list[Simulated]:
    """Each learner answers the first `i % 5` questions of the lesson (with /quiz), some self-grade,
    some answer again for practice, some explain, some look terms up; the clock ends at NOW."""
    rng = random.Random(seed)
    lesson = next(iter(bot.library.lessons.values()))
    place = Place("slack", cohort, "C1")
    done = []
    for i in range(learners):
        moment = datetime.fromisoformat(MOMENTS[i % len(MOMENTS)])
        clock.set(moment)
        who = Actor("slack", cohort, f"{prefix}{i:02d}", f"Learner {prefix}{i:02d}")
        sim = Simulated(who, moment)
        await bot.handle(Command("progress", "", who, place))  # every learner is known, even one who never answers
        for question in lesson.questions[: i % 5]:
            [asked] = await bot.handle(Command("quiz", "", who, place))
            sim.first.append(await _answer(bot, rng, question, asked, who, place))
        if sim.first and i % 4 == 1:
            await record(bot, who, sim.first[0].question_id, correct=True, lesson_id=lesson.id)
            sim.practice.append(sim.first[0].question_id)
        for _ in range((1 + i % 2) if i % 3 == 0 else 0):
            [asked] = await bot.handle(Command("teachback", "", who, place))
            prompt = await bot.store.prompts.get(asked.form.token)
            variant = rng.choice(sorted(TEACHBACK_TEXTS[prompt.item_id]))
            text, missed = TEACHBACK_TEXTS[prompt.item_id][variant]
            await bot.handle(TextSubmitted(asked.form.token, text.format(mark=f"{MARK}{i}"), who, place))
            sim.teachbacks.append((prompt.item_id, missed))
        for query in rng.sample(sorted(LOOKUPS), i % 3):
            await bot.handle(Command("glossary", query, who, place))
            sim.lookups.append(LOOKUPS[query])
        done.append(sim)
    clock.set(NOW)
    return done


async def _answer(bot: StudyBot, rng: random.Random, question, asked, who: Actor, place: Place) -> Given:
    if question.kind == "mc":
        pick = rng.randrange(len(question.choices))
        await bot.handle(ChoiceMade(choice_for(asked, pick).token, who, place))
        return Given(question.id, pick == question.correct_index, choice=pick)
    if question.kind == "order":
        right = rng.random() < 0.5
        await bot.handle(answer(question, asked, who, place, right))
        return Given(question.id, right)
    variant = rng.choice(sorted(SHORT_TEXTS))
    text, missed = SHORT_TEXTS[variant]
    [feedback] = await bot.handle(TextSubmitted(asked.form.token, text.format(mark=f"{MARK}{who.user_id}"), who,
                                                place))
    given = Given(question.id, variant == "both", missed=missed)
    grades = {c.label: c for c in feedback.choices if c.label in ("I got it right", "I missed it")}
    if grades and rng.random() < 0.5:
        claim = rng.random() < 0.6
        press = grades["I got it right" if claim else "I missed it"]
        await bot.handle(ChoiceMade(press.token, who, place))
        given.correct, given.self_graded = claim, True
    return given
