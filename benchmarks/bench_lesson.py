"""The Meta lesson's grading on held-out learner answers: how often a wrong answer is accepted and a right one
rejected, graded with the lesson's own rubrics and synonyms as the bot grades them.

Data: benchmarks/meta_answers.yaml, chat-style answers to each short-answer question and teach-back prompt of
content/industry/meta, written blind to the rubrics and labelled correct or wrong by the lesson's text (its
header says how). It is kept aside for measuring: never tune a rubric to it, and do not read it answer by
answer while writing one. Beside it, two fresh adversarial batches written the same way (meta_fresh_a.yaml, on
which classes of error may be found and fixed as classes; meta_fresh_b.yaml, held out), each reported apart.
`python -m benchmarks.bench_lesson meta_fresh_a.yaml --errors` measures one set only.

Definitions:
- verdicts: correct (earns the point), partly right (no point yet: the learner is told the one point missing) or not
  yet (bot.grading.verdict); the share of each, and how many right and wrong answers are partly right.
- false-accept: wrong answers graded "correct" / wrong answers.
- false-reject: right answers graded "not yet" / right answers (a partly right one is told what is missing).

Prints figures per item, per kind (short answer, teach-back) and in total; asserts nothing. `--errors` also
lists each misgraded answer with the key points the grader found: that is for the rubric author only after a
release has been measured, since reading it turns the held-out set into a training set.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import yaml

from bot.content.loader import load_library
from bot.content.model import Library
from bot.grading.matching import grade
from bot.grading.rubric import Rubric
from bot.grading.verdict import Verdict

ANSWERS = Path(__file__).with_name("meta_answers.yaml")
# Every set measured, with what it is for: the fresh adversarial batches were written for issue 35 before the
# rubrics were read; rubric classes may be found on A, B stays held out.
ANSWER_SETS = {
    ANSWERS: "held out",
    ANSWERS.with_name("meta_fresh_a.yaml"): "fresh adversarial, batch A: for finding classes of error",
    ANSWERS.with_name("meta_fresh_b.yaml"): "fresh adversarial, batch B: held out",
}
CONTENT = Path(__file__).parents[1] / "content"
LABELS = ("correct", "wrong")
KINDS = {"short": "short answers", "teachback": "teach-backs"}  # kind: its name in the figures


@dataclass(frozen=True)
class Answer:
    text: str
    right: bool  # the instructor's label: True for `correct`


@dataclass(frozen=True)
class Item:
    id: str
    kind: str  # a key of KINDS
    answers: tuple[Answer, ...]


@dataclass(frozen=True)
class AnswerSet:
    lesson: str
    items: tuple[Item, ...]


@dataclass(frozen=True)
class Outcome:
    item: Item
    answer: Answer
    accepted: bool  # graded correct
    matched: tuple[str, ...]  # the key points the grader found
    verdict: Verdict = Verdict.NOT_YET

    @property
    def rejected(self) -> bool:
        return self.verdict is Verdict.NOT_YET

    @property
    def error(self) -> bool:
        return self.accepted != self.answer.right and (self.accepted or self.rejected)


def load_answers(path: Path = ANSWERS) -> AnswerSet:
    """Read the answer set, or raise ValueError naming what is malformed."""
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    if not isinstance(data, dict) or not isinstance(data.get("lesson"), str) or not isinstance(data.get("items"), list):
        raise ValueError(f"{path.name}: expected a mapping with 'lesson' and a list of 'items'")
    items = []
    for n, raw in enumerate(data["items"], 1):
        if not isinstance(raw, dict) or raw.get("kind") not in KINDS or not isinstance(raw.get("answers"), list):
            raise ValueError(f"{path.name}: item {n} needs an id, a kind ({' or '.join(KINDS)}) and answers")
        answers = []
        for m, a in enumerate(raw["answers"], 1):
            if not isinstance(a, dict) or a.get("label") not in LABELS or not isinstance(a.get("text"), str):
                raise ValueError(f"{path.name}: {raw.get('id')} answer {m} needs a text and a label "
                                 f"({' or '.join(LABELS)})")
            answers.append(Answer(a["text"], a["label"] == "correct"))
        items.append(Item(str(raw.get("id")), raw["kind"], tuple(answers)))
    return AnswerSet(data["lesson"], tuple(items))


def rubric_of(library: Library, item: Item) -> Rubric:
    """The rubric the bot grades this item with; ValueError if the pack has no such item."""
    if item.kind == "short":
        question = library.questions.get(item.id)
        rubric = getattr(question, "rubric", None)
        if question is None or question.kind != "short" or not isinstance(rubric, Rubric):
            raise ValueError(f"{item.id} is not a short-answer question of the content")
        return rubric
    prompt = library.prompts.get(item.id)
    if prompt is None:
        raise ValueError(f"{item.id} is not a teach-back prompt of the content")
    return prompt.rubric


def prompt_of(library: Library, item: Item) -> str:
    """The item's prompt, which the bot grades an answer beside (a half point never comes from its words)."""
    question = library.questions.get(item.id)
    if question is not None:
        return question.prompt
    prompt = library.prompts.get(item.id)
    return prompt.prompt if prompt is not None else ""


def measure(library: Library, answer_set: AnswerSet) -> list[Outcome]:
    """Grade every answer with its item's rubric, prompt and the lesson's synonyms, as the bot does."""
    lesson = library.lessons.get(answer_set.lesson)
    if lesson is None:
        raise ValueError(f"no lesson '{answer_set.lesson}' in the content")
    outcomes = []
    for item in answer_set.items:
        rubric = rubric_of(library, item)
        for answer in item.answers:
            result = grade(rubric, answer.text, synonyms=lesson.synonyms, prompt=prompt_of(library, item))
            outcomes.append(Outcome(item, answer, result.correct, tuple(result.matched), result.verdict))
    return outcomes


def _rate(count: int, total: int) -> str:
    share = f"{100 * count / total:5.1f}%" if total else "    –"
    return f"{share} ({count:>3}/{total:<3})"


def _row(name: str, outcomes: Sequence[Outcome]) -> str:
    wrong = [o for o in outcomes if not o.answer.right]
    right = [o for o in outcomes if o.answer.right]
    accepted = sum(o.accepted for o in wrong)
    rejected = sum(o.rejected for o in right)
    shares = "  ".join(f"{_share(sum(o.verdict is v for o in outcomes), len(outcomes))}" for v in Verdict)
    partly = [o for o in outcomes if o.verdict is Verdict.PARTLY]
    right_partly = sum(o.answer.right for o in partly)
    return (f"  {name:<14} {_rate(accepted, len(wrong))}   {_rate(rejected, len(right))}   {shares}"
            f"  ({right_partly:>2} right, {len(partly) - right_partly:>2} wrong)")


def _share(count: int, total: int) -> str:
    return f"{100 * count / total:5.1f}%" if total else "    –"


def report(outcomes: Sequence[Outcome], *, errors: bool = False, path: Path = ANSWERS) -> list[str]:
    """Figures per item, per kind and in total; with `errors`, each misgraded answer too."""
    items = list(dict.fromkeys(o.item for o in outcomes))
    lines = [f"lesson grading on {ANSWER_SETS.get(path, 'held-out')} answers ({path.name}: {len(outcomes)} answers, "
             f"{len(items)} items)",
             "  false-accept = wrong answers graded correct / wrong answers; "
             "false-reject = right answers graded not yet / right answers; then the share of each verdict, and how "
             "many right and wrong answers are partly right",
             f"  {'item':<14} {'false-accept':<17}   {'false-reject':<17}   correct  partly  not yet"]
    lines += [_row(item.id, [o for o in outcomes if o.item == item]) for item in items]
    for kind, name in KINDS.items():
        lines.append(_row(name, [o for o in outcomes if o.item.kind == kind]))
    lines.append(_row("total", outcomes))
    if errors:
        lines += ["misgraded answers (for the rubric author, only after a release was measured):",
                  *_errors(outcomes)]
    return lines


def _errors(outcomes: Iterable[Outcome]) -> list[str]:
    lines = []
    for o in outcomes:
        if o.error:
            kind = "false-accept" if o.accepted else "false-reject"
            found = ", ".join(o.matched) or "no key point"
            lines.append(f"  {o.item.id} {kind} [{found}]: {o.answer.text}")
    return lines


async def main(errors: bool = False, paths: Iterable[Path] = ANSWER_SETS) -> list[str]:
    lines: list[str] = []
    for path in paths:
        try:
            lines += report(measure(load_library(CONTENT), load_answers(path)), errors=errors, path=path)
        except (OSError, ValueError, yaml.YAMLError) as error:
            lines.append(f"lesson grading on {path.name}: could not run: {error} (fix {path.name} or the content)")
    return lines


if __name__ == "__main__":
    chosen = [ANSWERS.with_name(arg) for arg in sys.argv[1:] if arg.endswith(".yaml")] or list(ANSWER_SETS)
    print(*asyncio.run(main(errors="--errors" in sys.argv[1:], paths=chosen)), sep="\n")
