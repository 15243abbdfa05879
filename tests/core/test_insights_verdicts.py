"""/insights shows the rubric's verdict: per question answered in words and per teach-back prompt, how many
first answers (attempts) were partly right, in the reply, the report's tables and cohort_answers.csv; an
answer completed with the missing point counts as correct."""

from __future__ import annotations

import re

import pytest
from support import channel, learner
from test_insights_export import PLACE, TEACHER, export

from bot.core.messages import ChoiceMade, Command, Reply, TextSubmitted
from bot.reports.cohort_csv import COLUMNS
from bot.runtime.app import StudyBot
from bot.store.model import QUESTION, AnswerMode

pytestmark = pytest.mark.both_engines

PARTLY = "FSDP shards the parameters, which costs communication"  # one point, and half of the other
ADDED = "It pays for it with extra communication."
RIGHT = "FSDP shards the parameters across GPUs, and it needs more communication between them."
WRONG = "I think it mostly comes down to the hardware budget"
TB_PARTLY = "DDP copies the model on each GPU and tensor parallelism splits work across GPUs"


async def typed(bot: StudyBot, user: str, text: str) -> Reply:
    who = learner(user)
    prompt = await bot.store.prompts.new(QUESTION, channel(), who, lesson_id="core-basics", item_id="core-q2",
                                         mode=AnswerMode.PRACTICE)
    [feedback] = await bot.handle(TextSubmitted(prompt.id, text, who, channel()))
    return feedback


async def add(bot: StudyBot, user: str, feedback: Reply, text: str) -> Reply:
    [token] = [c.token for c in feedback.choices if c.label == "Add the missing point"]
    [form] = await bot.handle(ChoiceMade(token, learner(user), channel()))
    [done] = await bot.handle(TextSubmitted(form.form.token, text, learner(user), channel()))
    return done


async def explained(bot: StudyBot, user: str, text: str) -> Reply:
    [form] = await bot.handle(Command("teachback", "core-tb1", learner(user), channel()))
    [graded] = await bot.handle(TextSubmitted(form.form.token, text, learner(user), channel()))
    return graded


def cells(html: str, label: str) -> list[str]:
    """The cells of a column of the report's tables, in order."""
    return re.findall(rf'<td(?: class="n")? data-label="{label}">([^<]*)</td>', html)


async def test_partly_right_first_answers_are_counted_per_question_and_per_teachback(bot: StudyBot) -> None:
    await typed(bot, "U1", PARTLY)  # stays partly right
    assert "Graded correct" in (await add(bot, "U2", await typed(bot, "U2", PARTLY), ADDED)).text  # completed
    await typed(bot, "U3", WRONG)
    await typed(bot, "U4", RIGHT)
    assert (await explained(bot, "U1", TB_PARTLY)).text.startswith("◑ Partly right")
    assert "no point yet" not in (await explained(bot, "U2", "Data parallelism copies the model to every GPU.")).text

    [reply] = await bot.handle(Command("insights", "", TEACHER, PLACE))
    [q2] = [line for line in reply.text.splitlines() if line.startswith("• core-q2")]
    assert ": 4 answered, 50% correct, 0% self-graded, 1 partly right" in q2
    [tb1] = [line for line in reply.text.splitlines() if line.startswith("• core-tb1")]
    assert ": 2 attempts, 1 partly right" in tb1
    [tb2] = [line for line in reply.text.splitlines() if line.startswith("• core-tb2")]
    assert "partly right" not in tb2  # no attempts: nothing to say
    assert all("partly right" not in line for line in reply.text.splitlines() if "(mc)" in line)

    rows, html = await export(bot)
    assert COLUMNS[-3:] == ("prompt", "rubric_verdict", "hints")  # new columns last: the others keep their places
    head, *body = rows
    verdict = {row[0]: row[-2] for row in body if row[3] == "core-q2"}
    assert verdict == {"slack:U1": "partly-right", "slack:U2": "correct", "slack:U3": "not-yet",
                       "slack:U4": "correct"}
    assert {row[-2] for row in body if row[3] != "core-q2"} == {""}  # no typed answer, no rubric verdict
    questions, partly = cells(html, "question"), cells(html, "partly right")
    shown = dict(zip(questions, partly[: len(questions)], strict=True))
    assert [n for q, n in shown.items() if q.startswith("core-q2")] == ["1"]
    assert {n for q, n in shown.items() if not q.startswith("core-q2")} == {"–"}
    prompts = cells(html, "prompt")
    by_prompt = dict(zip(prompts, partly[len(questions):], strict=True))
    assert [n for p, n in by_prompt.items() if p.startswith("core-tb1")] == ["1"]
