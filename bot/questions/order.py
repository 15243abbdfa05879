"""Put in order (`type: order`): steps written in their right order, shown shuffled and
answered with the shown numbers in the right order (`3 1 4 2`), on every platform alike.

Partial answers are shown as such ("3 of 4 in the right place"), but only a fully right
order is graded correct.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from bot.core.errors import TextRefused
from bot.core.yamlcheck import Checker, FieldPath
from bot.grading.reading import Synonyms
from bot.questions.base import Arrangement, TextAnswered, Verdict

MIN_STEPS, MAX_STEPS = 3, 9  # one digit each, so "3142" reads as well as "3 1 4 2"
_NUMBER = re.compile(r"(?:(?<![\d\w])-)?\d+")  # "-1" is minus one, "1-2-3" three steps


@dataclass(frozen=True, kw_only=True)
class Ordering(TextAnswered):
    kind: ClassVar[str] = "order"
    label: ClassVar[str] = "put in order"
    keys: ClassVar[frozenset[str]] = frozenset({"steps"})
    form_title: ClassVar[str] = "Put in order"
    public_hint: ClassVar[str] = "(put in order: press Answer)"

    steps: tuple[str, ...]  # in their right order

    @classmethod
    def read(cls, c: Checker, data: Mapping[str, Any], path: FieldPath, common: dict[str, Any]) -> Ordering:
        steps = c.texts(data, "steps", path, required=True)
        if steps and not MIN_STEPS <= len(steps) <= MAX_STEPS:
            c.fail(path + ("steps",), f"has {len(steps)} steps; give {MIN_STEPS} to {MAX_STEPS}")
        if len(set(steps)) != len(steps):
            c.fail(path + ("steps",), "lists a step twice; every step must be different")
        return cls(steps=steps, **common)

    def items(self) -> Sequence[str]:
        return self.steps

    def arrange(self, seed: str) -> Arrangement:
        return Arrangement.shuffled(len(self.steps), seed, moved=True)

    def question_text(self, arrangement: Arrangement) -> str:
        listed = "\n".join(f"{n}. {self.steps[i]}" for n, i in enumerate(arrangement.shown, start=1))
        example = " ".join(str(n) for n in range(len(self.steps), 0, -1))
        return f"{self.prompt}\n{listed}\nReply with the numbers in the right order, such as `{example}`."

    def grade_text(self, text: str, arrangement: Arrangement, synonyms: Synonyms | None) -> Verdict:
        picked = self.parse(text)
        in_place = sum(1 for step, shown in enumerate(picked) if arrangement.shown[shown - 1] == step)
        total = len(self.steps)
        first = "✅ Right order." if in_place == total else f"❌ {in_place} of {total} in the right place."
        return Verdict(in_place == total, (first, *self.answer_lines(arrangement)))

    def parse(self, text: str) -> list[int]:
        """The shown numbers a learner gave, in their order; StudyError unless each is given once."""
        size = len(self.steps)
        numbers = _NUMBER.findall(text)
        if len(numbers) == 1 and len(numbers[0]) == size:
            numbers = list(numbers[0])  # "3142"
        picked = [int(n) for n in numbers]
        if sorted(picked) != list(range(1, size + 1)):
            example = " ".join(str(n) for n in range(size, 0, -1))
            raise TextRefused(f"Give each number from 1 to {size} once, in the order you think is right, "
                             f"such as `{example}`. Nothing was recorded.")
        return picked

    def answer_lines(self, arrangement: Arrangement) -> list[str]:
        return [f"The right order: {self._key(arrangement)}", *self._listed(arrangement)]

    def markdown_question(self) -> list[str]:
        return [f"{n}. {self.steps[i]}" for n, i in enumerate(self.book_arrangement().shown, start=1)]

    def markdown_key(self) -> list[str]:
        book = self.book_arrangement()
        return [f"**Answer: {self._key(book)}.**", "", *(f"- {line}" for line in self._listed(book))]

    def book_arrangement(self) -> Arrangement:
        """The shuffled order quiz.md prints (stable, so the file only changes with the pack)."""
        return self.arrange(self.id)

    def _key(self, arrangement: Arrangement) -> str:
        return " ".join(str(arrangement.position(step) + 1) for step in range(len(self.steps)))

    def _listed(self, arrangement: Arrangement) -> list[str]:
        """The steps in their right order, each with the number it was shown with: "(4) Train the model".
        Not "4. Train the model": Markdown and Discord would renumber such a list 4, 5, 6."""
        return [f"({arrangement.position(step) + 1}) {text}" for step, text in enumerate(self.steps)]


TYPE = Ordering
