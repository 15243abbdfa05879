"""Which way round a question is shown: every learner (or a round's whole channel) sees a
question's items in one arrangement, the same each time it is asked, graded or revealed; a
review shows them afresh each time (stable within that review), so a card is passed by knowing
the answer, not by remembering where it stood."""

from __future__ import annotations

from bot.core.messages import Audience, Choice, Place, Reply
from bot.kit.context import Context
from bot.questions.base import Arrangement, Question, Tally
from bot.store.model import AnswerMode, Prompt


def audience_of(prompt: Prompt) -> str:
    """Who a prompt was shown to: a round's channel, or one learner."""
    if prompt.round_id is not None:
        return f"round {prompt.round_id}"
    return f"{prompt.platform} {prompt.cohort} {prompt.owner}"


def arrangement(question: Question, prompt: Prompt) -> Arrangement:
    review = f" review {prompt.id}" if prompt.mode is AnswerMode.REVIEW else ""  # one prompt per review
    return question.arrange(f"{audience_of(prompt)} {question.id}{review}")


def ask(ctx: Context, question: Question, prompt: Prompt, header: str, audience: Audience, *,
        extra: tuple[Choice, ...] = (), tag: str | None = None, place: Place | None = None) -> Reply:
    """The question as asked in its arrangement, with the buttons of the aids declared for it (a hint)."""
    aids = tuple(Choice(label, f"{prompt.id}.{aid.name}") for aid in ctx.declared.aids
                 if (label := aid.label(question)))
    return question.ask(prompt.id, header, audience, arrangement(question, prompt), extra=(*extra, *aids), tag=tag,
                        place=place)


def revealed(question: Question, prompt: Prompt, tally: Tally, header: str) -> str:
    """A public question's post once it has closed: the answer, how the audience answered, why."""
    return "\n".join([header, question.prompt, "", *question.reveal(tally, arrangement(question, prompt)),
                      f"{tally.answers} answered, {tally.correct} correct.", question.explanation])
