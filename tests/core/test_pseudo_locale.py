"""No string escapes the catalogue, in the area wrapped so far: /help, /language, /glossary,
/leaderboard (a view, a post, the weekly post) and the router's shared errors, run under the
pseudo-locale, show no product text outside ⟦…⟧ (lesson content and what was typed aside).
The whole-session version comes when every feature is wrapped."""

from __future__ import annotations

import re
from dataclasses import replace
from datetime import time

import pytest
from support import channel, learner

from bot.core.config import CohortSettings, LeaderboardSchedule
from bot.core.messages import Audience, Cohort, Command, TimerKey
from bot.features import leaderboard

MARKED = re.compile(r"⟦[^⟦⟧]*⟧")
PSEUDO = replace(learner(), locale="qps")
TEACHER = replace(learner("U9", teacher=True), locale="qps")


def unmarked(text: str, *allowed: str) -> str:
    """What is left of a text once every marked string (nested ones too) and `allowed` are taken out."""
    while MARKED.search(text):
        text = MARKED.sub("", text)
    for word in allowed:
        text = text.replace(word, "")
    return re.sub(r"[\s•:.,;()·'?/\-\d]", "", text)


@pytest.mark.parametrize(("actor", "words"), [
    (PSEUDO, "help"), (PSEUDO, "language"), (PSEUDO, "language xx"), (PSEUDO, "glossary"),
    (PSEUDO, "glossary xyzzy"), (PSEUDO, "glossary gpuz"), (PSEUDO, "leaderboard"), (PSEUDO, "leaderboard all"),
    (PSEUDO, "leaderboard week nonsense"), (PSEUDO, "leaderboard post"), (TEACHER, "leaderboard post"),
    (PSEUDO, "quizz"),
])
async def test_the_wrapped_area_shows_only_catalogue_text(bot, actor, words: str) -> None:
    name, _, args = words.partition(" ")
    replies = await bot.handle(Command(name, args, actor, channel()))
    terms = [t.term for t in bot.ctx.glossary.terms]
    for reply in replies:
        if reply.audience is Audience.PUBLIC:  # the board posted: in the cohort's language (English here)
            assert reply.text.startswith("Leaderboard · week ")
            continue
        assert unmarked(reply.text, *terms, args, "quizz", "quiz", "UTC") == "", reply.text


async def test_a_looked_up_term_marks_its_labels_around_the_lesson_text(bot) -> None:
    [reply] = await bot.handle(Command("glossary", "fdsp", PSEUDO, channel()))
    note, _term, _definition, *labels = reply.text.splitlines()  # the term and its definition are the lesson's
    assert unmarked(note, "fdsp", "FSDP") == "" and "⟦thé çlösést térm⟧" in note
    assert labels and all(line.startswith("⟦") for line in labels)


async def test_the_weekly_post_is_in_the_cohorts_language(bot) -> None:
    cohort = Cohort("slack", "T1")
    plan = LeaderboardSchedule(channel="C1", weekday=0, at=time(9))
    bot.ctx.settings = replace(bot.ctx.settings, cohorts={cohort: CohortSettings(leaderboard=plan, language="qps")})
    [post] = await leaderboard.on_schedule(bot.ctx, TimerKey.for_cohort(leaderboard.SCHEDULE, cohort))
    assert unmarked(post.text, "UTC") == "" and post.text.startswith("⟦Léådérböård")
