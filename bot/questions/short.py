"""Short answer (`type: short`): typed text matched against a rubric of key points, graded correct, partly right
(no point yet: the key point missing is named) or not yet; an answer not graded correct is shown the model answer,
and its learner may grade themselves (the honor system), unless it is a list of terms."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from bot.core.errors import TextRefused
from bot.core.yamlcheck import Checker, FieldPath
from bot.grading.honor import TOO_SHORT, too_short
from bot.grading.matching import Grade, grade
from bot.grading.reading import Synonyms
from bot.grading.rubric import Examples, Rubric
from bot.grading.selfcheck import RubricIssue, audit_rubric
from bot.grading.verdict import Verdict as GradeVerdict
from bot.questions.base import Arrangement, TextAnswered, Verdict

RUBRIC_KEYS = frozenset({"needed", "points"})


@dataclass(frozen=True, kw_only=True)
class ShortAnswer(TextAnswered):
    kind: ClassVar[str] = "short"
    label: ClassVar[str] = "short answer"
    keys: ClassVar[frozenset[str]] = frozenset({"model_answer", "rubric", "examples"})
    form_title: ClassVar[str] = "Short answer"
    public_hint: ClassVar[str] = "(short answer: press Answer)"

    model_answer: str
    rubric: Rubric
    examples: Examples = Examples()

    @classmethod
    def read(cls, c: Checker, data: Mapping[str, Any], path: FieldPath, common: dict[str, Any]) -> ShortAnswer:
        model_answer = c.text(data, "model_answer", path)
        if "rubric" not in data:
            c.fail(path, "missing required field 'rubric'")
            rubric = Rubric(1, ())
        elif (r := c.mapping(data["rubric"], path + ("rubric",), RUBRIC_KEYS)) is None:
            rubric = Rubric(1, ())
        else:
            rubric = c.rubric(r, "points", path + ("rubric",))
        return cls(model_answer=model_answer, rubric=rubric, examples=c.examples(data, path), **common)

    def key_points(self) -> Mapping[str, str]:
        return {p.id: p.point for p in self.rubric.points}

    def audit(self, synonyms: Synonyms) -> list[RubricIssue]:
        return audit_rubric(self.rubric, self.prompt, self.examples.correct, self.examples.wrong, synonyms,
                            partly_examples=self.examples.partly)

    def grade_text(self, text: str, arrangement: Arrangement, synonyms: Synonyms | None) -> Verdict:
        result = grade(self.rubric, text, synonyms=synonyms, prompt=self.prompt)
        if too_short(text, result.matched + result.voided, synonyms):
            raise TextRefused(TOO_SHORT)
        points = self.key_points()
        lines = [self._headline(result), *([result.reason] if result.reason else [])]
        if result.matched:
            lines += ["You covered:", *(f"✓ {points[k]}" for k in result.matched)]
        rest = [k for k in result.missed if k != result.missing]
        if rest:  # a correct answer needed none of them: they are not called missed
            lines += ["Also worth knowing:" if result.correct else "You missed:",
                      *(f"✗ {points[k]}" + (" (you stated it as a misconception)" if k in result.voided else "")
                        for k in rest)]
        if not result.correct:  # a right answer needs no model answer to compare with, nor a grade of its own
            lines.append(f"Model answer: {self.model_answer}")
        return Verdict(result.correct, tuple(lines), self_gradable=result.self_gradable, matched=result.matched,
                       missed=result.missed, outcome=result.verdict, missing=result.missing, reason=result.reason)

    def _headline(self, result: Grade) -> str:
        """The verdict's first line: what it earns, and how many key points the answer covered."""
        found, total, needed = len(result.matched), len(self.rubric.points), self.rubric.needed
        if result.verdict is GradeVerdict.CORRECT:
            return f"✅ Graded correct: {found} of {total} key points."
        if result.verdict is GradeVerdict.PARTLY:
            return f"◑ Partly right, no point yet: {found} of {total} key points ({needed} make it correct)."
        return f"❌ Not yet: {found} of {total} key points ({needed} make it correct)."

    def answer_lines(self, arrangement: Arrangement) -> list[str]:
        return [f"Model answer: {self.model_answer}"]

    def markdown_question(self) -> list[str]:
        return []

    def markdown_key(self) -> list[str]:
        return [f"**Model answer:** {self.model_answer}", "",
                f"Key points (correct with {self.rubric.needed} of {len(self.rubric.points)}):",
                *(f"- {p.point}" for p in self.rubric.points)]


TYPE = ShortAnswer
