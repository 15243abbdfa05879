"""One graded answer, in every mode alike: rate its card, record it (one transaction), then the
feedback with the offers that apply. What differs per mode (practice, a round, review, the question
of the day, any later one) is read from the mode the answer's prompt was asked in (`Mode`); the
buttons under a verdict come from the offers the features declare (`Offer`), and what a learner took
under the open question (hints, an `Aid`) is counted in the answer's transaction and scored."""

from __future__ import annotations

from fsrs import Rating

from bot.answering.cards import card_review, rating_for
from bot.core.errors import StoreBusy
from bot.core.messages import CUT_NOTE, MAX_TEXT, Audience, Choice, ChoiceMade, Reply, TextSubmitted, fit
from bot.kit.context import Answered, Context, Mode, Offered
from bot.questions.base import Question, Verdict
from bot.store.engine import Conn
from bot.store.model import Disputed, HintsTaken, Outcome, Prompt, PromptKind, Recorded, Typed

NEXT = "next"  # the prompt kind of "Next question" under a verdict
NO_POINTS_NOTE = "(No points this time: only your first answer to a question scores.)"  # every mode alike


async def answer(ctx: Context, event: ChoiceMade | TextSubmitted, prompt: Prompt, question: Question,
                 verdict: Verdict) -> list[Reply]:
    """Record a graded answer (and rate its card) in one transaction, then give feedback."""
    mode = ctx.declared.mode(prompt.mode)
    if mode.rate is not None:
        rating = mode.rate(verdict)
    else:
        rating = rating_for(verdict.correct, question.quick_is_easy, ctx.clock.now() - prompt.created_at)
    recorded = await _record(ctx, event, prompt, question, verdict, mode, rating)
    if recorded.outcome is not Outcome.RECORDED:
        return [_not_recorded(recorded.outcome)]
    if not mode.feedback:
        return [await feedback(ctx, event, prompt, "Answer recorded.")]
    lines = [*verdict.lines, question.explanation]
    if verdict.dont_know:
        lines.insert(0, await _dont_know_note(ctx, event, question, mode, recorded.scored))
    if mode.scores and not recorded.scored:
        lines.append(NO_POINTS_NOTE)
    answered = Answered(
        event, Disputed.ANSWER, recorded.answer_id or 0, question.lesson_id, question.id, verdict.correct,
        disputable=verdict.disputable and not verdict.dont_know and isinstance(event, TextSubmitted),
        self_gradable=verdict.self_gradable and not verdict.dont_know, mode=mode.name, question=question,
        verdict=verdict, card_before=recorded.card_before, follow_ups=mode.follow_ups, rating=rating)
    offered = await offers(ctx, answered)
    return [await feedback(ctx, event, prompt, _within_limit(lines, question.explanation, offered.lines),
                           offered.choices)]


def _within_limit(lines: list[str], explanation: str, offered: tuple[str, ...]) -> str:
    """The feedback's text in one chat message: where it is too long, the explanation (the lesson pack has
    it) is cut, never the verdict or the lines the offers add under it (a second opinion, "How sure…")."""
    over = len("\n".join([*lines, *offered])) - MAX_TEXT
    if over > 0:
        at = lines.index(explanation)
        lines = [*lines[:at], fit(explanation, max(len(explanation) - over, 0), CUT_NOTE.lstrip("\n")), *lines[at + 1:]]
    return "\n".join([*lines, *offered])


async def _record(ctx: Context, event: ChoiceMade | TextSubmitted, prompt: Prompt, question: Question,
                  verdict: Verdict, mode: Mode, rating: Rating) -> Recorded:
    typed = (Typed(event.text, verdict.matched, verdict.missed, str(verdict.outcome) if verdict.outcome else None)
             if isinstance(event, TextSubmitted) else None)
    return await ctx.store.answers.record(
        prompt.id, event.actor, lesson_id=question.lesson_id, question_id=question.id, mode=mode.name,
        correct=verdict.correct, week=ctx.week(event.actor.in_cohort), choice=verdict.choice,
        rate=card_review(ctx, event.actor, question, rating, due_now=verdict.dont_know),
        typed=None if verdict.dont_know else typed, scores=mode.scores, hints=_hints_taken(ctx, prompt, question),
    )


def _hints_taken(ctx: Context, prompt: Prompt, question: Question) -> HintsTaken | None:
    """What the aids a learner took under the question (hints) count, read in the answer's transaction;
    None (nothing to read) when the question offers none."""
    aids = [aid for aid in ctx.declared.aids if aid.label(question)]
    if not aids:
        return None

    def taken(c: Conn, learner: int) -> int:
        return sum(aid.taken(c, learner, prompt.id) for aid in aids)

    return taken


async def _dont_know_note(ctx: Context, event: ChoiceMade | TextSubmitted, question: Question, mode: Mode,
                          first_answer: bool) -> str:
    """What "I don't know" did: it scores only as a first answer, and its card is due at once
    (`cards.card_review`); the mode may say when it comes back."""
    said = "🤷 Fair enough: that counts as your first answer, with no points." if first_answer else "🤷 Fair enough."
    if mode.dont_know is not None:
        return f"{said} {await mode.dont_know(ctx, event.actor, question)}"
    return f"{said} This question comes back soon in /review."


async def offers(ctx: Context, answered: Answered) -> Offered:
    """What every offer that applies adds under a verdict, in the order the features are listed."""
    lines: list[str] = []
    choices: list[Choice] = []
    for offer in ctx.declared.offers:
        if offer.applies(answered):
            made = await offer.make(ctx, answered)
            lines += made.lines
            choices += made.choices
    return Offered(tuple(lines), tuple(choices))


async def feedback(ctx: Context, event: ChoiceMade | TextSubmitted, prompt: Prompt, text: str,
                   choices: tuple[Choice, ...] = ()) -> Reply:
    """Private feedback; where the mode has a next question (practice, review), its button too."""
    if ctx.declared.mode(prompt.mode).next is not None:
        next_id = await follow_up(ctx, NEXT, event, lesson_id=prompt.lesson_id, mode=prompt.mode)
        choices += (Choice("Next question", f"{next_id}.0"),) if next_id else ()
    return Reply(text, Audience.PRIVATE, choices=choices)


async def follow_up(ctx: Context, kind: PromptKind, event: ChoiceMade | TextSubmitted, *, lesson_id: str | None,
                    item_id: str | None = None, mode: str | None = None,
                    data: dict[str, object] | None = None) -> str | None:
    """A prompt for a follow-up button, or None when the store is busy: the answer is already
    saved, so the feedback goes out without that button rather than as "nothing was recorded"."""
    try:
        prompt = await ctx.store.prompts.new(kind, event.place, event.actor, lesson_id=lesson_id, item_id=item_id,
                                             mode=mode, data=data)
    except StoreBusy:
        return None
    return prompt.id


def _not_recorded(outcome: Outcome) -> Reply:
    if outcome is Outcome.ALREADY:
        return Reply("You already answered this question; your first answer stands.")
    return Reply("That question has ended, so the answer was not recorded. Use /quiz for a fresh one.")

