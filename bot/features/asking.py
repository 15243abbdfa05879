"""Which way round a question is shown: every learner (or a round's whole channel) sees a
question's items in one arrangement, the same each time it is asked, graded or revealed."""

from __future__ import annotations

from bot.questions.base import Arrangement, Question, Tally
from bot.store.model import Prompt


def audience_of(prompt: Prompt) -> str:
    """Who a prompt was shown to: a round's channel, or one learner."""
    if prompt.round_id is not None:
        return f"round {prompt.round_id}"
    return f"{prompt.platform} {prompt.cohort} {prompt.owner}"


def arrangement(question: Question, prompt: Prompt) -> Arrangement:
    return question.arrange(f"{audience_of(prompt)} {question.id}")


def revealed(question: Question, prompt: Prompt, tally: Tally, header: str) -> str:
    """A public question's post once it has closed: the answer, how the audience answered, why."""
    return "\n".join([header, question.prompt, "", *question.reveal(tally, arrangement(question, prompt)),
                      f"{tally.answers} answered, {tally.correct} correct.", question.explanation])
