"""The buttons and forms of a question's prompt, in every mode: a choice or "I don't know", a typed
answer, "Next question", and two offers under a typed answer: a partly right one may be completed
once ("Add the missing point"), and one graded wrong may be graded by its learner (the honor
system). A mode's own buttons (a round's Next) are handed to the mode that declared them, and an
aid's (a hint) to the feature that declared it."""

from __future__ import annotations

from fsrs import Rating

from bot.answering.asking import arrangement
from bot.answering.cards import card_review
from bot.answering.pipeline import NEXT, answer, feedback, follow_up
from bot.core.errors import StudyError
from bot.core.messages import Audience, Choice, ChoiceMade, Form, Reply, TextSubmitted
from bot.grading.honor import real_attempt
from bot.grading.verdict import Verdict as GradeVerdict
from bot.kit.context import Answered, Context, Offer, Offered
from bot.kit.feature import Feature
from bot.questions.base import DONT_KNOW, OPEN_FORM, Question, Verdict, says_dont_know
from bot.store.model import QUESTION, Outcome, Prompt, Typed

SELF_GRADE = "selfgrade"  # the prompt kind of the honor system's buttons
COMPLETE = "complete"  # the prompt kind of a partly right answer's one follow-up ("Add the missing point")
SELF_GRADES = {  # choice suffix: (label, rating for the review schedule)
    "1": ("I got it right", Rating.Good),
    "h": ("Right, but it was hard", Rating.Hard),
    "0": ("I missed it", Rating.Again),
}


async def on_choice(ctx: Context, event: ChoiceMade, prompt: Prompt, suffix: str) -> list[Reply]:
    if own := ctx.declared.mode(prompt.mode).button(suffix):  # a round's Next, even past a removed question
        return await own(ctx, event, prompt, suffix)
    if aid := ctx.declared.aid(suffix):  # a hint, while the question is open
        return await aid.press(ctx, event, prompt, suffix)
    question = ctx.question(prompt.item_id)
    if suffix == OPEN_FORM:
        if prompt.closed or await ctx.store.prompts.is_closed(prompt.id):  # maybe by another process
            raise StudyError("That question has ended. Watch for the next one.")
        return [question.ask(prompt.id, "", Audience.PRIVATE, arrangement(question, prompt))]
    if suffix == DONT_KNOW:
        return await answer(ctx, event, prompt, question, _dont_know(question, prompt))
    verdict = question.grade_choice(suffix, arrangement(question, prompt))
    if verdict is None:
        raise StudyError("That button is no longer valid. Use /quiz for a fresh question.")
    return await answer(ctx, event, prompt, question, verdict)


async def on_text(ctx: Context, event: TextSubmitted, prompt: Prompt) -> list[Reply]:
    question = ctx.question(prompt.item_id)
    if says_dont_know(event.text):
        return await answer(ctx, event, prompt, question, _dont_know(question, prompt))
    verdict = question.grade_text(event.text, arrangement(question, prompt), ctx.synonyms(question.lesson_id))
    if verdict is None:
        raise StudyError("That question takes a button, not text. Use /quiz for a fresh one.")
    return await answer(ctx, event, prompt, question, verdict)


def _dont_know(question: Question, prompt: Prompt) -> Verdict:
    return Verdict(False, tuple(question.answer_lines(arrangement(question, prompt))), dont_know=True)


async def on_next(ctx: Context, event: ChoiceMade, prompt: Prompt, suffix: str) -> list[Reply]:
    """"Next question": what the mode the answer was given in asks next."""
    ask_next = ctx.declared.mode(prompt.mode).next
    if ask_next is None:
        raise StudyError("That button is no longer valid. Use /quiz for a fresh question.")
    return await ask_next(ctx, event.actor, event.place, ctx.lesson(prompt.lesson_id))


# ------------------------------------------------------------ the honor system

def _may_self_grade(answered: Answered) -> bool:
    return answered.self_gradable and isinstance(answered.event, TextSubmitted)


async def _offer_self_grade(ctx: Context, answered: Answered) -> Offered:
    """The honor system's buttons, once the answer says enough to claim it was right."""
    question, event = answered.question, answered.event
    assert question is not None and answered.verdict is not None and isinstance(event, TextSubmitted)
    if not real_attempt(event.text, question.prompt, answered.verdict.matched, ctx.synonyms(question.lesson_id)):
        return Offered(("Write your answer in a sentence or two to grade yourself: "
                        "this one says too little to claim it was right.",))
    grade_id = await follow_up(ctx, SELF_GRADE, event, lesson_id=answered.lesson_id, item_id=answered.item_id,
                               mode=answered.mode, data={"answer": answered.source_id, "card": answered.card_before})
    buttons = tuple(Choice(label, f"{grade_id}.{key}") for key, (label, _) in SELF_GRADES.items()) if grade_id else ()
    return Offered(("Honor system: compare with the model answer and grade yourself.",), buttons)


async def on_self_grade(ctx: Context, event: ChoiceMade, prompt: Prompt, suffix: str) -> list[Reply]:
    """The learner's own grade replaces the rubric's: its points and its review rating, at once."""
    if suffix not in SELF_GRADES:
        raise StudyError("That button is no longer valid.")
    question = ctx.question(prompt.item_id)
    rating = SELF_GRADES[suffix][1]
    outcome = await ctx.store.answers.self_grade(
        int(prompt.data["answer"]), suffix != "0", prompt_id=prompt.id, actor=event.actor, question_id=question.id,
        lesson_id=question.lesson_id, rate=card_review(ctx, event.actor, question, rating),
        card_before=prompt.data.get("card"),
    )
    if refused := _not_applied(outcome, "You already graded yourself on this answer.",
                               "You asked your instructor about this answer, so their grade stands, not your own."):
        return refused
    verdict = "correct" if suffix != "0" else "not correct"
    return [await feedback(ctx, event, prompt, f"Recorded: self-graded {verdict}. Your results file shows it "
                                               "as self-graded.")]


# ------------------------------------------------------------ partly right: one follow-up

def _may_complete(answered: Answered) -> bool:
    return (answered.follow_ups and answered.verdict is not None and answered.verdict.outcome is GradeVerdict.PARTLY
            and isinstance(answered.event, TextSubmitted))


async def _offer_completion(ctx: Context, answered: Answered) -> Offered:
    """"Add the missing point": the answer is kept, and what the learner adds is read with it, once."""
    event = answered.event
    assert isinstance(event, TextSubmitted)
    prompt_id = await follow_up(ctx, COMPLETE, event, lesson_id=answered.lesson_id, item_id=answered.item_id,
                                mode=answered.mode, data={"answer": answered.source_id, "text": event.text,
                                                          "card": answered.card_before})
    return Offered(choices=(Choice("Add the missing point", f"{prompt_id}.{OPEN_FORM}"),) if prompt_id else ())


async def on_complete_choice(ctx: Context, event: ChoiceMade, prompt: Prompt, suffix: str) -> list[Reply]:
    """The form for the one follow-up, with the answer so far."""
    question = ctx.question(prompt.item_id)
    if suffix != OPEN_FORM or prompt.closed or await ctx.store.prompts.is_closed(prompt.id):
        raise StudyError("That answer can no longer be added to.")
    return [Reply("Add what is missing; it is read together with your answer.", Audience.PRIVATE,
                  form=Form(prompt.id, "Add the missing point",
                            f"{question.prompt}\n\nYour answer: {prompt.data['text']}", label="What you add"))]


async def on_complete(ctx: Context, event: TextSubmitted, prompt: Prompt) -> list[Reply]:
    """The follow-up read with the answer: graded again, the answer's grade and points replaced, once."""
    question = ctx.question(prompt.item_id)
    text = f"{prompt.data['text']}\n{event.text}"
    verdict = question.grade_text(text, arrangement(question, prompt), ctx.synonyms(question.lesson_id))
    if verdict is None:
        raise StudyError("That question takes a button, not text.")
    outcome = await ctx.store.answers.complete(
        int(prompt.data["answer"]), Typed(text, verdict.matched, verdict.missed,
                                          str(verdict.outcome) if verdict.outcome else None),
        verdict.correct, prompt_id=prompt.id, actor=event.actor, question_id=question.id,
        lesson_id=question.lesson_id, card_before=prompt.data.get("card"),
        rate=card_review(ctx, event.actor, question, Rating.Hard if verdict.correct else Rating.Again))
    if refused := _not_applied(outcome, "You already added to this answer once; your instructor can still look at it.",
                               "This answer was graded since (by you or your instructor), so it stays as it is."):
        return refused
    said = ("With what you added, that is the point." if verdict.correct
            else "With what you added, it is still not the point; \"Ask my instructor\" under your answer remains.")
    return [await feedback(ctx, event, prompt, "\n".join([*verdict.lines, said]))]


def _not_applied(outcome: Outcome, already: str, settled: str) -> list[Reply]:
    """What to say when a learner's change to a stored answer was not made (none when it was)."""
    if outcome is Outcome.ALREADY:
        return [Reply(already)]
    if outcome is Outcome.SETTLED:
        return [Reply(settled)]
    if outcome is not Outcome.RECORDED:
        raise StudyError("That answer is no longer stored.")
    return []


SELF_GRADE_OFFER = Offer("self-grade", applies=_may_self_grade, make=_offer_self_grade)
COMPLETION_OFFER = Offer("add the missing point", applies=_may_complete, make=_offer_completion)

FEATURE = Feature(
    "answering",
    choices={QUESTION: on_choice, NEXT: on_next, SELF_GRADE: on_self_grade, COMPLETE: on_complete_choice},
    forms={QUESTION: on_text, COMPLETE: on_complete},
    offers=(COMPLETION_OFFER, SELF_GRADE_OFFER),
)
