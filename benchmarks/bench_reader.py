"""The second reader against human verdicts: on the answers the matcher grades partly right or not yet (the
ones a learner would see its opinion under), how often it finds a key point the matcher missed in an answer the
human graders call right, and how often it "finds" one in an answer they call wrong, with its time and tokens.

Runs only against an endpoint: STUDYBOT_READER_URL (and STUDYBOT_READER_MODEL, STUDYBOT_READER_KEY,
STUDYBOT_READER_TIMEOUT as the bot reads them); without one it says so and skips. Data: the UNT short-answer
dataset (STUDYBOT_UNT_DATA, graded with the first rubric set) and the Meta lesson's held-out answers
(benchmarks/meta_answers.yaml), each answer sent as the bot sends it (redacted, fenced), each span checked.

Definitions:
- human right: UNT, the graders' average >= 3; Meta, labelled correct. Human wrong: UNT <= 2.5; Meta, wrong.
  UNT answers between the two count in "read" only.
- finds: the reader claims, with verified words, a key point the matcher did not match.
- recall: human-right answers it finds something in / human-right answers read (the matcher's misses it catches).
- precision: human-right answers among those it finds something in (a find in a human-wrong answer is a key point
  the graders say is absent, or not enough).
- completes: matched and found key points reach the rubric's `needed`: would it have made the answer right?

Prints figures; asserts nothing. `--limit N` reads at most N answers per set, spread evenly (a slow endpoint).
"""

from __future__ import annotations

import asyncio
import os
import statistics
import sys
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from benchmarks import bench_grading, bench_lesson
from bot.content.loader import load_library
from bot.core.config import ReaderSettings, reader_settings
from bot.core.errors import ConfigError
from bot.features.reader.consult import Consulted, consult
from bot.grading.matching import grade
from bot.grading.reading import Synonyms
from bot.grading.rubric import Rubric
from bot.grading.verdict import Verdict

AT_ONCE = 4  # requests in flight


@dataclass(frozen=True)
class Case:
    """One answer the reader would be asked about."""

    question: str
    points: Mapping[str, str]
    needed: int
    matched: frozenset[str]
    text: str
    human: bool | None  # right, wrong, or between (UNT)


def _case(rubric: Rubric, prompt: str, text: str, synonyms: Synonyms, human: bool | None) -> Case | None:
    result = grade(rubric, text, synonyms=synonyms, prompt=prompt)
    if result.verdict is Verdict.CORRECT:
        return None
    return Case(prompt, {p.id: p.point for p in rubric.points}, rubric.needed, frozenset(result.matched), text,
                human)


def unt_cases(root: Path) -> list[Case]:
    rubrics, synonyms = bench_grading.load_rubrics()
    cases = []
    for q in bench_grading.load_dataset(root):
        for text, average in q.answers:
            human = (True if average >= bench_grading.HUMAN_CORRECT
                     else False if average <= bench_grading.CLEARLY_WRONG else None)
            if case := _case(rubrics[q.id], q.prompt, text, synonyms, human):
                cases.append(case)
    return cases


def meta_cases() -> list[Case]:
    answer_set = bench_lesson.load_answers()
    library = load_library(bench_lesson.CONTENT)
    synonyms = library.lessons[answer_set.lesson].synonyms
    return [case for item in answer_set.items for a in item.answers
            if (case := _case(bench_lesson.rubric_of(library, item), bench_lesson.prompt_of(library, item), a.text,
                              synonyms, a.right))]


def spread(cases: Sequence[Case], limit: int | None) -> list[Case]:
    if limit is None or len(cases) <= limit:
        return list(cases)
    return [cases[i * len(cases) // limit] for i in range(limit)]


async def read_all(settings: ReaderSettings, cases: Sequence[Case]) -> list[Consulted]:
    gate = asyncio.Semaphore(AT_ONCE)

    async def one(case: Case) -> Consulted:
        async with gate:
            return await consult(settings, case.question, case.points, case.text)

    return await asyncio.gather(*(one(c) for c in cases))


def _share(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f}% ({part}/{whole})" if whole else "– (0/0)"


def figures(name: str, cases: Sequence[Case], read: Sequence[Consulted]) -> list[str]:
    right = [(c, r) for c, r in zip(cases, read, strict=True) if c.human is True and r.failure is None]
    wrong = [(c, r) for c, r in zip(cases, read, strict=True) if c.human is False and r.failure is None]

    def finds(case: Case, got: Consulted) -> bool:
        return any(claim.point not in case.matched for claim in got.claims)

    def completes(case: Case, got: Consulted) -> bool:
        return len(case.matched | {claim.point for claim in got.claims}) >= case.needed

    failures = Counter(r.failure for r in read if r.failure)
    times = sorted(r.seconds for r in read)
    lines = [f"  {name}: {len(cases)} answers read ({sum(c.human is True for c in cases)} human-right, "
             f"{sum(c.human is False for c in cases)} human-wrong); no reading: "
             + (", ".join(f"{k} {v}" for k, v in sorted(failures.items())) or "none")]
    for label, test in (("finds a key point the matcher missed", finds), ("completes the answer", completes)):
        hit_right = sum(test(c, r) for c, r in right)
        hit_wrong = sum(test(c, r) for c, r in wrong)
        lines.append(f"    {label}: recall {_share(hit_right, len(right))}, in human-wrong answers "
                     f"{_share(hit_wrong, len(wrong))}, precision {_share(hit_right, hit_right + hit_wrong)}")
    claims = sum(len(r.claims) + r.dropped for r in read)
    dropped = _share(sum(r.dropped for r in read), claims)
    lines.append("    spans dropped (not whole words of the answer, only the question's, speaking to the grader,"
                 f" or one span for two points): {dropped}")
    if times:
        p95 = times[min(len(times) - 1, int(0.95 * len(times)))]
        lines.append(f"    per answer: {statistics.mean(times):.2f} s mean, {p95:.2f} s p95, "
                     f"{statistics.mean(r.tokens for r in read):.0f} tokens")
    return lines


async def main(limit: int | None = None, environ: Mapping[str, str] = os.environ) -> list[str]:
    try:
        settings = reader_settings(lambda name: environ.get(name, "").strip() or None)
    except ConfigError as exc:
        return [f"second reader: skipped: {exc}"]
    if settings is None:
        return ["second reader: skipped: STUDYBOT_READER_URL is not set (an OpenAI-compatible /v1 endpoint); "
                "its quality is unmeasured"]
    lines = [f"second reader ({settings.model}, timeout {settings.timeout:g} s) vs human verdicts, on the answers "
             "the matcher grades partly right or not yet:"]
    sets: list[tuple[str, list[Case]]] = []
    unt = bench_grading.skip_reason(dict(environ))
    if unt is None:
        sets.append(("UNT, first rubric set", unt_cases(Path(environ[bench_grading.ENV]))))
    else:
        lines.append(f"  UNT: skipped: {unt}")
    sets.append(("Meta lesson, held-out answers", meta_cases()))
    for name, cases in sets:
        chosen = spread(cases, limit)
        lines += figures(name, chosen, await read_all(settings, chosen))
    return lines


if __name__ == "__main__":
    flags = sys.argv[1:]
    count = int(flags[flags.index("--limit") + 1]) if "--limit" in flags else None
    print(*asyncio.run(main(count)), sep="\n")
