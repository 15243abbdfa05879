"""How a question is put to learners: choices for multiple choice, a form for a short answer."""

from __future__ import annotations

from bot.content import Question
from bot.messages import Audience, Choice, Form, Place, Reply

LETTERS = "ABCDEFGHIJ"
OPEN_FORM = "f"  # a choice suffix: open the answer form of a short question (rounds)


def ask(question: Question, prompt_id: str, header: str, audience: Audience,
        extra: tuple[Choice, ...] = (), tag: str | None = None, place: Place | None = None) -> Reply:
    """A question as a reply: choices for multiple choice, a form for a short answer.

    In public (a round) a short question gets an Answer button that opens the form."""
    text = f"{header}\n{question.prompt}"
    if question.type == "mc":
        choices = tuple(
            Choice(f"{LETTERS[i]}. {option.text}", f"{prompt_id}.{i}") for i, option in enumerate(question.choices)
        )
        return Reply(text, audience, choices=choices + extra, tag=tag, place=place)
    if audience is Audience.PUBLIC:
        answer = Choice("Answer", f"{prompt_id}.{OPEN_FORM}")
        return Reply(text + "\n(short answer: press Answer)", audience, choices=(answer, *extra), tag=tag, place=place)
    return Reply(text, audience, form=answer_form(question, prompt_id), tag=tag, place=place)


def answer_form(question: Question, prompt_id: str) -> Form:
    return Form(prompt_id, "Short answer", question.prompt, label="Your answer")
