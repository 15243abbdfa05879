"""What every question type provides. The rest of the core asks the type; it never tests a name.

A type is one module under `bot/questions/` with a `Question` subclass; the registry
(`bot/questions/__init__.py`) maps the YAML `type:` to it. The subclass owns:
- reading and checking its fields from YAML (`read`, with the keys it allows),
- asking (`ask`): choices to press, or a form to fill in,
- grading (`grade_choice`, `grade_text`) into a `Verdict`,
- the public reveal of a round's question (`reveal`),
- its blocks of `quiz.md` (`markdown_question`, `markdown_key`).
"""

from __future__ import annotations

import random
from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, Any, ClassVar

from bot.core.messages import Audience, Choice, Form, Place, Reply

if TYPE_CHECKING:
    from bot.core.yamlcheck import Checker, FieldPath
    from bot.grading.reading import Synonyms
    from bot.grading.selfcheck import RubricIssue
    from bot.grading.verdict import Verdict as GradeVerdict

OPEN_FORM = "f"  # a choice suffix: open the answer form of a text-answered question (rounds)
DONT_KNOW = "?"  # a choice suffix: "I don't know"
DONT_KNOW_LABEL = "I don't know"
DONT_KNOW_WORDS = frozenset({"i dont know", "i do not know", "dont know", "idk", "no idea", "i dunno"})


def dont_know_button(prompt_id: str) -> Choice:
    return Choice(DONT_KNOW_LABEL, f"{prompt_id}.{DONT_KNOW}")


def says_dont_know(text: str) -> bool:
    """Whether a typed answer is "I don't know" (in any of the usual ways of typing it)."""
    said = " ".join(text.lower().replace("'", "").replace("’", "").split()).strip(" .!?")
    return said in DONT_KNOW_WORDS or (not said and "?" in text)  # "idk?", "?", "??"


@dataclass(frozen=True)
class Verdict:
    """How one answer was graded: what to store and what to tell the learner.

    `choice` is the picked choice by identity (its index in the pack), for the answers table;
    `lines` is the type's own feedback, shown before the explanation; `self_gradable` offers the
    honor system's buttons; `disputable` says the learner may ask an instructor about it. A typed
    answer graded by a rubric also carries its three-valued `outcome` (bot.grading.verdict: only
    CORRECT earns a point, as `correct` says), and when it is partly right the key point `missing`
    (its id; the learner may add it in one follow-up, check it or dispute) and `reason`, one sentence
    saying what is missing or, for a list of terms, why it is not yet right."""

    correct: bool
    lines: tuple[str, ...]
    choice: int | None = None
    self_gradable: bool = False
    matched: tuple[str, ...] = ()  # the key points a typed answer stated
    missed: tuple[str, ...] = ()
    dont_know: bool = False  # the learner said so: wrong, no points, and the question comes back soon
    disputable: bool = False  # a judgement an instructor may overturn (a typed answer graded wrong)
    outcome: GradeVerdict | None = None  # a rubric's verdict: correct, partly, not_yet (None: no rubric)
    missing: str | None = None
    reason: str = ""


@dataclass(frozen=True)
class Tally:
    """The answers to one posted question: in all, correct, and per choice (by identity)."""

    answers: int = 0
    correct: int = 0
    by_choice: Mapping[int, int] = field(default_factory=dict)

    @classmethod
    def of(cls, counts: Iterable[tuple[int | None, bool, int]]) -> Tally:
        """The tally of the store's counts: (choice or None, correct, answers) per choice and grade."""
        answers = correct = 0
        by_choice: dict[int, int] = {}
        for choice, right, n in counts:
            answers += n
            correct += n if right else 0
            if choice is not None:
                by_choice[choice] = by_choice.get(choice, 0) + n
        return cls(answers, correct, by_choice)


@dataclass(frozen=True)
class Arrangement:
    """The order in which a question's items are shown: `shown[i]` is the pack index of the
    item shown in position i. The identity arrangement shows them in authoring order."""

    shown: tuple[int, ...]

    @classmethod
    def identity(cls, size: int) -> Arrangement:
        return cls(tuple(range(size)))

    @classmethod
    def shuffled(cls, size: int, seed: str, *, moved: bool = False) -> Arrangement:
        """A shuffle that is the same every time for the same seed (random's str seeding hashes
        with SHA-512, not Python's per-process hash); with `moved`, never the authoring order."""
        return cls(_shuffled(size, seed, moved))

    def position(self, index: int) -> int:
        """Where the item with pack index `index` is shown (0-based)."""
        return self.shown.index(index)


@dataclass(frozen=True, kw_only=True)
class Question(ABC):
    """The fields every question has; each type adds its own."""

    kind: ClassVar[str]  # the YAML `type:`
    label: ClassVar[str]  # how quiz.md names the type
    keys: ClassVar[frozenset[str]]  # the type's own YAML keys, beyond the common ones
    quick_is_easy: ClassVar[bool] = False  # a fast right answer rates the review card Easy

    id: str
    lesson_id: str
    goal: str
    prompt: str
    explanation: str
    sources: tuple[str, ...]
    hints: tuple[str, ...] = ()  # shown one at a time, in order, at the learner's asking (each costs points)

    @classmethod
    @abstractmethod
    def read(cls, c: Checker, data: Mapping[str, Any], path: FieldPath, common: dict[str, Any]) -> Question:
        """Build the question from its YAML mapping, reporting problems to `c`."""

    def items(self) -> Sequence[str]:
        """The items a learner arranges or picks from; none by default."""
        return ()

    def key_points(self) -> Mapping[str, str]:
        """The key points a typed answer is graded on, id -> plain-language point; none by default."""
        return {}

    def arrange(self, seed: str) -> Arrangement:
        """How the items are shown to the audience named by `seed` (the same seed, the same order);
        in authoring order unless the type says otherwise."""
        return Arrangement.identity(len(self.items()))

    @abstractmethod
    def ask(self, prompt_id: str, header: str, audience: Audience, arrangement: Arrangement, *,
            extra: tuple[Choice, ...] = (), tag: str | None = None, place: Place | None = None) -> Reply:
        """The question as a reply: choices to press, or a form (an Answer button in public, or beside
        `extra` buttons, which a form cannot carry)."""

    def audit(self, synonyms: Synonyms) -> list[RubricIssue]:
        """How the question's own checks fail (a rubric against its examples); none by default."""
        return []

    def grade_choice(self, suffix: str, arrangement: Arrangement) -> Verdict | None:
        """The verdict on a pressed choice; None when `suffix` is not one this question issued."""
        return None

    def grade_text(self, text: str, arrangement: Arrangement, synonyms: Synonyms | None) -> Verdict | None:
        """The verdict on a typed answer; None when the question is answered with buttons.

        Raises StudyError when the text cannot be read as an answer (nothing is recorded)."""
        return None

    @abstractmethod
    def answer_lines(self, arrangement: Arrangement) -> list[str]:
        """The right answer, as the learner who saw `arrangement` reads it."""

    def reveal(self, tally: Tally, arrangement: Arrangement) -> list[str]:
        """The lines that reveal the answer in public, with the tally (by default only the answer)."""
        return self.answer_lines(arrangement)

    @abstractmethod
    def markdown_question(self) -> list[str]:
        """The lines under the question's heading in quiz.md (may be empty)."""

    @abstractmethod
    def markdown_key(self) -> list[str]:
        """The question's answer-key lines in quiz.md."""


class TextAnswered(Question, ABC):
    """A question answered by typing: a form in private, an Answer button that opens it in public."""

    form_title: ClassVar[str] = "Your answer"
    public_hint: ClassVar[str] = "(press Answer to reply)"

    def question_text(self, arrangement: Arrangement) -> str:
        """The text of the question as asked (the prompt, and anything to answer from)."""
        return self.prompt

    def ask(self, prompt_id: str, header: str, audience: Audience, arrangement: Arrangement, *,
            extra: tuple[Choice, ...] = (), tag: str | None = None, place: Place | None = None) -> Reply:
        text = "\n".join(filter(None, (header, self.question_text(arrangement))))
        if audience is Audience.PUBLIC or extra:
            answer = Choice("Answer", f"{prompt_id}.{OPEN_FORM}")
            return Reply(f"{text}\n{self.public_hint}", audience, choices=(answer, dont_know_button(prompt_id), *extra),
                         tag=tag, place=place)
        return Reply(text, audience, form=self.answer_form(prompt_id, arrangement), tag=tag, place=place)

    def answer_form(self, prompt_id: str, arrangement: Arrangement) -> Form:
        return Form(prompt_id, self.form_title, self.question_text(arrangement),
                    label="Your answer (or: I don't know)")


@lru_cache(maxsize=4096)
def _shuffled(size: int, seed: str, moved: bool) -> tuple[int, ...]:
    """`Arrangement.shuffled`'s order, kept for the seeds in use: a round's every press asks for the same one."""
    rng = random.Random(seed)
    shown = list(range(size))
    rng.shuffle(shown)
    if moved and size > 1 and shown == sorted(shown):
        shown = shown[1:] + shown[:1]
    return tuple(shown)
