"""/audit: an instructor's view of the honor system: this week's self-graded answers in the cohort,
each with what the learner wrote, the rubric's own verdict and the key points it found.

The one place where answer texts are shown; it is private to the instructor who asks."""

from __future__ import annotations

import re

from bot.core.messages import Command, Reply
from bot.features import disputes
from bot.kit.commands import Option, command
from bot.kit.context import Context
from bot.kit.feature import Feature
from bot.store.model import SelfGradedAnswer

QUOTED = 200  # characters of an answer shown
_MENTION = re.compile(r"^<[@#]!?&?([A-Za-z0-9]+)(?:\|[^>]*)?>$")  # <@U123>, <@!123>, <@U123|name>


def learner_named(words: str) -> str | None:
    """The learner an instructor named: a user id, a platform mention of one, or a display name."""
    words = words.strip()
    if not words:
        return None
    mention = _MENTION.match(words)
    return mention.group(1) if mention else words


def _line(ctx: Context, answer: SelfGradedAnswer) -> str:
    question = ctx.library.questions.get(answer.question_id)
    names = question.key_points() if question else {}
    said = " ".join(answer.text.split())
    said = said if len(said) <= QUOTED else said[:QUOTED].rstrip() + "…"
    matched = ", ".join(names.get(k, k) for k in answer.matched) or "none"
    return (f"• {answer.display_name or answer.user_id} · {answer.question_id} · self-graded "
            f"{'right' if answer.correct else 'wrong'} · rubric: {'right' if answer.rubric_correct else 'wrong'}"
            f" (matched: {matched})\n  “{said}”")


@command(summary="This week's self-graded answers, or the open disputes to settle (instructors)",
         options=(Option("view", "self-graded answers (default) or the open disputes",
                         choices={"self-graded": "", "disputes": "disputes"}),
                  Option("learner", "a learner's name or user id (leave empty for the whole cohort)")))
async def audit(ctx: Context, cmd: Command) -> list[Reply]:
    """/audit [learner]: this week's self-graded answers, each with the rubric's verdict (instructors).
    /audit disputes: the cohort's open disputes, each settled with one press: accept or reject (instructors)."""
    if cmd.args.strip().lower() == "disputes":
        return await disputes.listing(ctx, cmd)
    ctx.require_instructor(cmd.actor, "audit self-graded answers")
    cohort = cmd.actor.in_cohort
    week = ctx.week(cohort)
    who = learner_named(cmd.args)
    answers = await ctx.store.answers.self_graded(cohort, week, who)
    scope = f" by {who}" if who else ""
    if not answers:
        return [Reply(f"No self-graded answers{scope} this week ({week}).")]
    overruled = sum(1 for a in answers if a.correct and not a.rubric_correct)
    head = (f"Self-graded answers{scope} this week ({week}): {len(answers)}, "
            f"{overruled} graded right against the rubric's verdict.")
    return [Reply("\n".join([head, *(_line(ctx, a) for a in answers)]))]


FEATURE = Feature("audit", commands=(audit,))
