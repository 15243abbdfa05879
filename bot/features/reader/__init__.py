"""The second reader: an optional language model (any OpenAI-compatible endpoint) that advises on a
"partly right" or "not yet" short answer or teach-back, and never sets points.

After the verdict is recorded (its transaction committed), the reader is given the question, the key
points and the answer (redacted, fenced) and names the key points it finds, each with the answer's own
words; each span is checked verbatim and dropped otherwise. The learner sees what it finds beyond the
rubric under the verdict, beside "Ask my instructor"; instructors see it beside the dispute.

It is an offer under the verdict, so the reply waits for it, at most STUDYBOT_READER_TIMEOUT seconds:
then it goes out without it. Off unless STUDYBOT_READER_URL is set; never in a round, never in a cohort
whose `reader` is off, never past a learner's or a cohort's daily cap."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from bot.core.config import ReaderSettings
from bot.core.errors import StoreBusy
from bot.core.messages import TextSubmitted
from bot.features.reader import metrics
from bot.features.reader.consult import consult
from bot.features.reader.reading import Claim
from bot.features.reader.storage import AREA, Reading
from bot.grading.verdict import Verdict as GradeVerdict
from bot.kit.context import Answered, Context, Offer, Offered
from bot.kit.feature import Feature
from bot.store.model import AnswerMode, Disputed

ADVISES = "It only advises: your points stay as graded. If you think it is right, ask your instructor."
NOTHING_MORE = "🔎 A second reader finds no key point beyond the ones above."
QUIET = "🔎 The second reader could not look at this answer just now; nothing is lost: your verdict is as graded."
CAPPED = "🔎 The second reader has read its share of answers today (it is back tomorrow); your verdict is as graded."
FORM_BOUND = {"discord": 2.0}  # seconds the reader may take where the platform bounds a form's answer


def bounded(settings: ReaderSettings, platform: str) -> ReaderSettings:
    """The settings with the timeout the platform allows: a Discord form is answered within 3 s of its
    submission, so there the reader gets at most FORM_BOUND seconds, whatever STUDYBOT_READER_TIMEOUT says."""
    bound = FORM_BOUND.get(platform)
    return replace(settings, timeout=bound) if bound is not None and settings.timeout > bound else settings


def _reads(answered: Answered) -> bool:
    """A typed answer graded partly right or not yet, outside a round."""
    verdict = answered.verdict
    return (verdict is not None and verdict.outcome in (GradeVerdict.PARTLY, GradeVerdict.NOT_YET)
            and not verdict.dont_know and isinstance(answered.event, TextSubmitted)
            and answered.mode != AnswerMode.ROUND)


def _item(ctx: Context, answered: Answered) -> tuple[str, Mapping[str, str]]:
    """The question (or teach-back prompt) and its key points, id -> point."""
    if answered.of is Disputed.ANSWER:
        question = answered.question or ctx.question(answered.item_id)
        return question.prompt, question.key_points()
    item = ctx.library.prompts[answered.item_id]
    return item.prompt, {k.id: k.point for k in item.key_points}


def _shown(claims: list[Claim], points: Mapping[str, str]) -> str:
    found = "; ".join(f"“{points[c.point]}”, in your words '{c.words}'" for c in claims)
    return f"🔎 A second reader also finds: {found}. {ADVISES}"


async def second_opinion(ctx: Context, answered: Answered) -> Offered:
    """The second reader's opinion under a verdict; no line when it is off here."""
    settings, event, verdict = ctx.settings.reader, answered.event, answered.verdict
    cohort = event.actor.in_cohort
    if settings is None or not ctx.settings.cohort(cohort).reader or verdict is None:
        return Offered()
    assert isinstance(event, TextSubmitted)
    question, points = _item(ctx, answered)
    if not points:
        return Offered()
    day = ctx.clock.now().astimezone(ctx.zone(cohort)).date().isoformat()
    try:
        if not await ctx.store.area(AREA).take_call(event.actor, day, per_learner=settings.per_learner,
                                                    per_cohort=settings.per_cohort):
            metrics.SKIPPED.inc()
            return Offered((CAPPED,))
    except StoreBusy:
        return Offered((QUIET,))
    consulted = await consult(bounded(settings, event.actor.platform), question, points, event.text)
    if consulted.failure is not None:
        return Offered((QUIET,))
    try:
        await ctx.store.area(AREA).keep(event.actor, answered.of, answered.source_id,
                                        Reading(tuple((c.point, c.words) for c in consulted.claims)))
    except StoreBusy:
        pass  # the learner still sees it; the instructors' listing will not
    new = [c for c in consulted.claims if c.point not in verdict.matched]
    return Offered((_shown(new, points) if new else NOTHING_MORE,))


OFFER = Offer("second reader", applies=_reads, make=second_opinion)

FEATURE = Feature("reader", offers=(OFFER,), storage=(AREA,))
