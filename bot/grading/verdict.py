"""The three verdicts on a typed answer (a short answer or a teach-back), and what the learner is told of each.

- correct: the answer states enough key points; it earns the point.
- partly: no point yet. The answer is one point short and says half of a further point in that point's own words
  (three quarters of one of its phrasings, where the rubric needs one point and nothing else is stated),
  or it states enough but the grader is unsure of one point for a reason it can name (`Doubt`; a point stated in
  one clause and its misconception in another is in doubt too: which does the learner mean?), or it states enough
  beside a misconception about another point (a wrong claim is not a point left out). The grade names
  the key points there and the one missing or in doubt, so the learner can add it in one follow-up, check it
  against the key points, or ask the instructor.
- not_yet: fewer points than that, or a bare list of terms (`LIST_REASON`), or a misconception stated.
"""

from __future__ import annotations

from enum import StrEnum


class Verdict(StrEnum):
    """What a typed answer is graded: only CORRECT earns a point."""

    CORRECT = "correct"
    PARTLY = "partly"
    NOT_YET = "not_yet"


class Doubt(StrEnum):
    """Why an answer is partly right: what keeps one key point from counting."""

    HALF = "half"  # one point short, and half of a further point said in that point's own words
    DENIED = "denied"  # a point stated and also denied ("it splits the model ... it does not split the model")
    MISCONCEPTION = "misconception"  # a misconception's words said beside the points, not as the misconception
    TYPO = "typo"  # a point stated only through a real word one letter from the word it needs ("casual", "causal")


LIST_REASON = "A list of terms relates none of them: say how they connect."


def reason(doubt: Doubt, point: str, said: tuple[str, ...] = ()) -> str:
    """The sentence that tells the learner what keeps the answer from the point: `point` is the key point in
    question (its plain-language text), `said` the answer's words it turns on."""
    words = ", ".join(f"'{w}'" for w in said)
    if doubt is Doubt.HALF:
        return f'Part of "{point}" is there (you wrote {words}): say the rest of it to earn the point.'
    if doubt is Doubt.DENIED:
        return f'You both say and deny "{point}": say which you mean.'
    if doubt is Doubt.MISCONCEPTION:
        return f'Beside "{point}" your answer reads close to a common mistake ({words}): say how they relate.'
    return f'"{point}" rests on {words}, which reads like another word: check the spelling.'
