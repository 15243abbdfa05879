"""Disputes: a learner sends a short answer's or a teach-back's verdict to the cohort's instructors
("Ask my instructor", a button beside the verdict); `/audit disputes` lists the cohort's open ones,
each settled with one press. Settling is one transaction: the dispute's state, and for an accepted
one the answer's new grade, the points scoring gives a correct one (`bot.grading.scoring`) and the
instructor-graded marks; it also arms the timer that tells the learner by direct message, so the
message survives a restart and is retried until delivered."""

from __future__ import annotations

from collections.abc import Mapping

from bot.core.errors import StoreBusy, StudyError
from bot.core.messages import (
    Audience,
    Choice,
    ChoiceMade,
    Command,
    Form,
    Place,
    Reply,
    TextSubmitted,
    TimerKey,
    counted,
)
from bot.features.disputes.storage import AREA, Dispute, DisputeState
from bot.features.reader.storage import AREA as READER
from bot.features.reader.storage import Reading, read_as
from bot.kit.context import Answered, Context, Offer, Offered
from bot.kit.feature import Feature, TimerSpec
from bot.store.model import Disputed, Prompt

MOST_OPEN = 3  # open disputes one learner may have at once, per cohort
LISTED = 10  # disputes one listing shows: two buttons each, within a message's 25
QUOTED = 300  # characters of a disputed answer shown
ASK = "Ask my instructor"
ACCEPT, REJECT, WORD = "a", "r", "w"  # a settle button's suffixes: accept, reject, add a word
TELL = "dispute"  # the timer that tells the learner how their dispute was settled
DISPUTE, SETTLE = "dispute", "settle"  # prompt kinds: "Ask my instructor"; an instructor's accept or reject

_KINDS = {Disputed.ANSWER: "short answer", Disputed.TEACHBACK: "teach-back"}


async def ask_choice(ctx: Context, answered: Answered) -> Offered:
    """The "Ask my instructor" button under a verdict the grade says may be disputed; none when the
    store is busy (the answer is saved already, so its feedback goes out without the button rather
    than as a failure)."""
    try:
        prompt = await ctx.store.prompts.new(DISPUTE, answered.event.place, answered.event.actor,
                                             lesson_id=answered.lesson_id, item_id=answered.item_id,
                                             data={"of": str(answered.of), "id": answered.source_id})
    except StoreBusy:
        return Offered()
    return Offered(choices=(Choice(ASK, f"{prompt.id}.0"),))


async def on_ask(ctx: Context, event: ChoiceMade, prompt: Prompt, suffix: str) -> list[Reply]:
    """Open a dispute of the verdict under which the button was pressed."""
    opened = await ctx.store.area(AREA).open(event.actor, Disputed(prompt.data["of"]), int(prompt.data["id"]),
                                           most=MOST_OPEN)
    if opened.already:
        return [Reply("You already asked your instructor about this answer; you will hear back by direct message "
                      "once they have looked at it.")]
    if opened.dispute is None and opened.open:
        raise StudyError(f"You have {counted(opened.open, 'question')} waiting for your instructor, the most at "
                         "once. You can ask about this answer once one of them is settled.")
    if opened.dispute is None:
        raise StudyError("That answer is no longer stored, so it cannot be sent to your instructor.")
    return [Reply("Sent to your instructor, with your answer and the rubric's verdict. You will hear back by "
                  "direct message once they have looked at it.")]


def _item_name(ctx: Context, dispute: Dispute) -> str:
    if dispute.of is Disputed.ANSWER:
        question = ctx.library.questions.get(dispute.item_id)
        return question.prompt if question else dispute.item_id
    item = ctx.library.prompts.get(dispute.item_id)
    return item.prompt if item else dispute.item_id


def _point_names(ctx: Context, dispute: Dispute) -> Mapping[str, str]:
    if dispute.of is Disputed.ANSWER:
        question = ctx.library.questions.get(dispute.item_id)
        return question.key_points() if question else {}
    item = ctx.library.prompts.get(dispute.item_id)
    return {k.id: k.point for k in item.key_points} if item else {}


def _line(ctx: Context, dispute: Dispute, reading: Reading | None = None) -> str:
    names = _point_names(ctx, dispute)
    said = " ".join(dispute.text.split())
    said = said if len(said) <= QUOTED else said[:QUOTED].rstrip() + "…"
    matched = ", ".join(names.get(k, k) for k in dispute.matched) or "none"
    missed = ", ".join(names.get(k, k) for k in dispute.missed) or "none"
    verdict = "right" if dispute.rubric_correct else "partly right" if dispute.verdict == "partly" else "wrong"
    return (f"#{dispute.id} · {dispute.display_name or dispute.user_id} · {dispute.item_id} ({_KINDS[dispute.of]}) · "
            f"rubric: {verdict} (matched: {matched}; missed: {missed})\n  “{said}”"
            + (f"\n  {read_as(reading, names)}" if reading is not None else ""))


async def listing(ctx: Context, cmd: Command) -> list[Reply]:
    """/audit disputes: the cohort's open disputes, oldest first, each with Accept and Reject."""
    ctx.require_instructor(cmd.actor, "settle disputes")
    disputes, total = await ctx.store.area(AREA).open_in(cmd.actor.in_cohort, LISTED)
    if not disputes:
        return [Reply("No open disputes in this cohort.")]
    choices: list[Choice] = []
    for dispute in disputes:
        settle = await ctx.store.prompts.new(SETTLE, cmd.place, lesson_id=dispute.lesson_id,
                                             item_id=dispute.item_id, data={"dispute": dispute.id})
        choices += [Choice(f"Accept #{dispute.id}", f"{settle.id}.{ACCEPT}"),
                    Choice(f"Reject #{dispute.id}", f"{settle.id}.{REJECT}")]
    more = f" (the {len(disputes)} oldest shown)" if total > len(disputes) else ""
    head = (f"Open disputes: {total}{more}. Accept gives the learner the points a correct answer would have "
            "earned, marked instructor-graded; either way they hear by direct message.")
    readings = ([await ctx.store.area(READER).of(d.of, d.source_id) for d in disputes]
                if ctx.settings.reader is not None else [None] * len(disputes))
    lines = [_line(ctx, d, r) for d, r in zip(disputes, readings, strict=True)]
    return [Reply("\n".join([head, *lines]), choices=tuple(choices))]


async def on_settle(ctx: Context, event: ChoiceMade, prompt: Prompt, suffix: str) -> list[Reply]:
    """Accept or reject one dispute: one press, one transaction. The reply offers a word for the learner."""
    ctx.require_instructor(event.actor, "settle disputes")
    if suffix == WORD:
        return [Reply(f"Your word for the learner on dispute #{prompt.data['dispute']}.",
                      form=Form(prompt.id, "A word for the learner",
                                "What should the learner hear from you about this answer? It is sent to them by "
                                "direct message.", label="Your word"))]
    if suffix not in (ACCEPT, REJECT):
        raise StudyError("That button is no longer valid. Use /audit disputes for a fresh list.")
    dispute_id = int(prompt.data["dispute"])
    dispute, settled = await ctx.store.area(AREA).settle(dispute_id, suffix == ACCEPT, event.actor,
                                                       tell=str(TimerKey.of(TELL, dispute_id)))
    if dispute is None:
        raise StudyError("That dispute is no longer stored (its learner may have asked to be forgotten).")
    who = dispute.display_name or dispute.user_id
    if not settled:
        return [Reply(f"Dispute #{dispute.id} was already {dispute.state}"
                      + (f" (by {dispute.settled_by})." if dispute.settled_by else "."))]
    word = (Choice(f"Add a word for {who}", f"{prompt.id}.{WORD}"),)
    if dispute.state is DisputeState.ACCEPTED:
        gain = (f"{counted(dispute.points, 'point')}, instructor-graded" if dispute.points
                else "no points (not the answer that scores), but the verdict is now correct")
        return [Reply(f"Accepted dispute #{dispute.id}: {who} gets {gain}. They are told by direct message.",
                      choices=word)]
    return [Reply(f"Rejected dispute #{dispute.id}: the rubric's verdict stands. {who} is told by direct message.",
                  choices=word)]


async def on_word(ctx: Context, event: TextSubmitted, prompt: Prompt) -> list[Reply]:
    """The instructor's optional word for the learner, after settling: stored, and sent by direct message."""
    ctx.require_instructor(event.actor, "settle disputes")
    dispute_id = int(prompt.data["dispute"])
    if not await ctx.store.area(AREA).add_note(dispute_id, event.actor, event.text.strip(),
                                             tell=str(TimerKey.of(TELL, dispute_id, WORD))):
        raise StudyError(f"Dispute #{dispute_id} has a word for its learner already, or is not settled yet.")
    return [Reply(f"Your word on dispute #{dispute_id} is sent to the learner by direct message.")]


async def tell_learner(ctx: Context, key: TimerKey) -> list[Reply]:
    """The direct message that tells a learner how their dispute was settled."""
    dispute = await ctx.store.area(AREA).get(int(key.parts[0]))
    if dispute is None or dispute.state is DisputeState.OPEN:
        return []  # forgotten meanwhile
    what = f"your {_KINDS[dispute.of]} to “{_item_name(ctx, dispute)[:200]}”"
    if key.parts[1:] == (WORD,):
        text = f"A word from your instructor on {what}:\n{dispute.note or ''}"
    elif dispute.state is DisputeState.ACCEPTED:
        gain = (f"You get {counted(dispute.points, 'point')}, marked instructor-graded."
                if dispute.points else "It is now graded correct (it was not the answer that scores, so no points).")
        text = f"Your instructor accepted {what}. {gain}"
    else:
        text = f"Your instructor looked at {what} and agrees with the rubric's verdict."
    learner = dispute.learner
    return [Reply(text, Audience.DM, to=learner, place=Place(learner.platform, learner.cohort))]


OFFER = Offer("dispute", applies=lambda answered: answered.disputable, make=ask_choice)

FEATURE = Feature(
    "disputes",
    storage=(AREA,),
    offers=(OFFER,), choices={DISPUTE: on_ask, SETTLE: on_settle},
    forms={SETTLE: on_word},
    timers=(TimerSpec(TELL, tell_learner),),
)
