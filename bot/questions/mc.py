"""Multiple choice (`type: mc`): one correct choice, a button per choice, graded exactly."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from bot.core.messages import MAX_CHOICES, Audience, Choice, Place, Reply
from bot.core.yamlcheck import Checker, FieldPath
from bot.questions.base import Arrangement, Question, Tally, Verdict, dont_know_button

LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
MAX_OPTIONS = 10  # every platform shows them with room left for Next and "I don't know"
CHOICE_KEYS = frozenset({"text", "correct", "why_wrong"})


@dataclass(frozen=True)
class AnswerOption:
    text: str
    correct: bool
    why_wrong: str = ""


@dataclass(frozen=True, kw_only=True)
class MultipleChoice(Question):
    kind: ClassVar[str] = "mc"
    label: ClassVar[str] = "multiple choice"
    keys: ClassVar[frozenset[str]] = frozenset({"choices"})
    quick_is_easy: ClassVar[bool] = True

    choices: tuple[AnswerOption, ...]

    @classmethod
    def read(cls, c: Checker, data: Mapping[str, Any], path: FieldPath, common: dict[str, Any]) -> MultipleChoice:
        options = []
        for o_path, o in c.items(data, "choices", path, CHOICE_KEYS):
            correct = c.flag(o, "correct", o_path)
            why_wrong = c.text(o, "why_wrong", o_path, required=not correct)
            options.append(AnswerOption(c.text(o, "text", o_path), correct, why_wrong))
        if options and sum(o.correct for o in options) != 1:
            c.fail(path + ("choices",), "exactly one choice must have correct: true")
        if len(options) > MAX_OPTIONS:
            c.fail(path + ("choices",), f"has {len(options)} choices; at most {MAX_OPTIONS} fit on every platform")
        return cls(choices=tuple(options), **common)

    @property
    def correct_index(self) -> int:
        return next(i for i, option in enumerate(self.choices) if option.correct)

    def items(self) -> Sequence[str]:
        return [option.text for option in self.choices]

    def arrange(self, seed: str) -> Arrangement:
        """Choices in an order of their own for each audience, so that position teaches nothing."""
        return Arrangement.shuffled(len(self.choices), seed)

    def ask(self, prompt_id: str, header: str, audience: Audience, arrangement: Arrangement, *,
            extra: tuple[Choice, ...] = (), tag: str | None = None, place: Place | None = None) -> Reply:
        buttons = tuple(Choice(f"{LETTERS[n]}. {self.choices[i].text}", f"{prompt_id}.{i}")
                        for n, i in enumerate(arrangement.shown)) + (dont_know_button(prompt_id),)
        text = "\n".join(filter(None, (header, self.prompt)))
        return Reply(text, audience, choices=(buttons + extra)[:MAX_CHOICES], tag=tag, place=place)

    def grade_choice(self, suffix: str, arrangement: Arrangement) -> Verdict | None:
        if suffix not in [str(i) for i in range(len(self.choices))]:  # only the indexes we issued
            return None
        index = int(suffix)
        if index == self.correct_index:
            return Verdict(True, ("✅ Correct.",), choice=index)
        right = self.correct_index
        return Verdict(False, (
            f"❌ Not quite. You chose {self._letter(index, arrangement)}: {self.choices[index].why_wrong}",
            f"The answer is {self._letter(right, arrangement)}. {self.choices[right].text}",
        ), choice=index)

    def answer_lines(self, arrangement: Arrangement) -> list[str]:
        right = self.correct_index
        return [f"Answer: {self._letter(right, arrangement)}. {self.choices[right].text}"]

    def reveal(self, tally: Tally, arrangement: Arrangement) -> list[str]:
        right = self.correct_index
        counts = " · ".join(
            f"{LETTERS[n]}: {tally.by_choice.get(i, 0)}" + (" ✓" if i == right else "")
            for n, i in enumerate(arrangement.shown)
        )
        return [*self.answer_lines(arrangement), counts]

    def markdown_question(self) -> list[str]:
        return [f"- {LETTERS[i]}. {option.text}" for i, option in enumerate(self.choices)]

    def markdown_key(self) -> list[str]:
        right = self.correct_index
        return [f"**Answer: {LETTERS[right]}.** {self.choices[right].text}", "",
                *(f"- {LETTERS[i]} is wrong: {o.why_wrong}" for i, o in enumerate(self.choices) if not o.correct)]

    @staticmethod
    def _letter(index: int, arrangement: Arrangement) -> str:
        return LETTERS[arrangement.position(index)]


TYPE = MultipleChoice
