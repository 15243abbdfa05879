"""Rubric self-checks: a pure function that lists where a question's rubric disagrees with its examples or credits
a bare list of its accepted words (by commas or by connectives: keyword lists never pass), and warns where it would
credit an answer that says nothing (the prompt echoed, an empty answer) or where an accepted word is a typo away from
a word of the prompt."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from bot.grading.matching import Grade, grade
from bot.grading.reading import Synonyms, content_words
from bot.grading.rubric import Rubric
from bot.grading.verdict import Verdict
from bot.grading.words import derived, lemma, same_word

QUOTE_LENGTH = 60


@dataclass(frozen=True)
class RubricIssue:
    """One problem, at a path below the question such as ("examples", "correct", 2) or ("rubric",)."""

    where: tuple[str | int, ...]
    message: str
    warning: bool = False


def _quote(text: str) -> str:
    """The text on one line in quotes, cut at a word to about QUOTE_LENGTH characters."""
    text = " ".join(text.split())
    if len(text) > QUOTE_LENGTH:
        text = text[:QUOTE_LENGTH].rsplit(" ", 1)[0].rstrip(",;:.") + "…"
    return f'"{text}"'


def _ids(ids: tuple[str, ...]) -> str:
    return ", ".join(ids) or "none"


def _found(result: Grade) -> str:
    voided = f"; voided: {_ids(result.voided)}" if result.voided else ""
    return f"matched: {_ids(result.matched)}; missed: {_ids(result.missed)}{voided}"


def _examples(rubric: Rubric, prompt: str, correct: Sequence[str], wrong: Sequence[str],
              synonyms: Synonyms | None) -> list[RubricIssue]:
    issues = []
    for n, example in enumerate(correct):
        result = grade(rubric, example, synonyms=synonyms, prompt=prompt)
        if not result.correct:
            issues.append(RubricIssue(("examples", "correct", n),
                                      f"graded wrong but listed as correct: {_quote(example)} ({_found(result)})"))
    for n, example in enumerate(wrong):
        result = grade(rubric, example, synonyms=synonyms, prompt=prompt)
        if result.correct:
            issues.append(RubricIssue(("examples", "wrong", n), f"graded correct but listed as wrong: "
                                      f"{_quote(example)} (matched: {_ids(result.matched)})"))
    return issues


def bare_list(rubric: Rubric, synonyms: Synonyms | None = None, joiner: str = ", ") -> str:
    """Every content word of the accepted phrasings once, joined as a list (by commas, or by a connective such as
    " so ")."""
    words = dict.fromkeys(w for point in rubric.points for a in point.accept for w in content_words(a, synonyms))
    return joiner.join(words)


KEYWORD_LISTS = (", ", " so ")  # the accepted words as a list, by commas and by a connective


def _empty_answers(rubric: Rubric, prompt: str, synonyms: Synonyms | None) -> list[RubricIssue]:
    """Warnings for the prompt or an empty answer graded correct; an error for a keyword list graded correct (the
    accepted words listed, relating nothing: it states no key point whose phrasing is a relation)."""
    issues = []
    for where, label, text in ((("prompt",), "the question's own prompt", prompt),
                               (("rubric",), "an empty answer", "")):
        result = grade(rubric, text, synonyms=synonyms, prompt=prompt)
        if result.correct:
            said = f": {_quote(text)}" if where == ("rubric",) and text else ""
            issues.append(RubricIssue(where, f"{label} is graded correct{said} (matched: {_ids(result.matched)})",
                                      warning=True))
    for joiner in KEYWORD_LISTS:
        text = bare_list(rubric, synonyms, joiner)
        result = grade(rubric, text, synonyms=synonyms, prompt=prompt)
        if text and result.correct:
            issues.append(RubricIssue(("rubric",), f"a bare list of the accepted words is graded correct: "
                                      f"{_quote(text)} (matched: {_ids(result.matched)}); give those key points "
                                      "phrasings that relate two words or more"))
            break
    return issues


def _inflected(one: str, other: str) -> bool:
    """Whether two words are forms of each other that the lemmatizer may not know (GPU, GPUs), or of one family
    (local, locally: bot.grading.words.derived)."""
    short, long = sorted((one, other), key=len)
    suffixed = long.startswith(short) and long[len(short):] in ("s", "es", "d", "ed", "ing")
    return suffixed or derived(lemma(one), lemma(other))


def _typos_of_the_prompt(rubric: Rubric, prompt: str, synonyms: Synonyms | None) -> list[RubricIssue]:
    """One warning per accepted word that a prompt word would match as a typo, where it first occurs."""
    asked = dict.fromkeys(content_words(prompt, synonyms))
    issues, seen = [], set()
    for i, point in enumerate(rubric.points):
        for j, accepted in enumerate(point.accept):
            for word in dict.fromkeys(content_words(accepted, synonyms)):
                near = next((p for p in asked if lemma(p) != lemma(word) and not _inflected(p, word)
                             and same_word(p, word)), None)
                if near and word not in seen:
                    seen.add(word)
                    issues.append(RubricIssue(("rubric", "points", i, "accept", j),
                                              f'accepted word "{word}" is one typo away from "{near}" in the prompt',
                                              warning=True))
    return issues


def _partly_examples(rubric: Rubric, prompt: str, partly: Sequence[str], synonyms: Synonyms | None
                     ) -> list[RubricIssue]:
    """An error for each example listed as partly right that is graded otherwise."""
    issues = []
    for n, example in enumerate(partly):
        result = grade(rubric, example, synonyms=synonyms, prompt=prompt)
        if result.verdict is not Verdict.PARTLY:
            graded = "correct" if result.correct else "not yet right"
            issues.append(RubricIssue(("examples", "partly", n), f"graded {graded} but listed as partly right: "
                                      f"{_quote(example)} ({_found(result)})"))
    return issues


def audit_rubric(rubric: Rubric, prompt: str, correct_examples: Sequence[str] = (),
                 wrong_examples: Sequence[str] = (), synonyms: Synonyms | None = None,
                 partly_examples: Sequence[str] = ()) -> list[RubricIssue]:
    """The errors (every listed example graded otherwise than listed, a keyword list graded correct), then the
    warnings. A wrong example may grade partly right (it earns no point); a partly right one must."""
    issues = (_examples(rubric, prompt, correct_examples, wrong_examples, synonyms)
              + _partly_examples(rubric, prompt, partly_examples, synonyms)
              + _empty_answers(rubric, prompt, synonyms) + _typos_of_the_prompt(rubric, prompt, synonyms))
    return sorted(issues, key=lambda issue: issue.warning)
