"""Short-answer grading against human graders, beside a word-overlap baseline run in the same process.

Data: the UNT computer science short-answer dataset (assignments 1-6), read at run time from the folder
named by STUDYBOT_UNT_DATA (`make bench` sets it when the shared copy exists) and never copied into this
repository. Questions whose line in docs/files starts with "#" are not short-answer questions and are left
out. Each student answer is graded with its question's rubric in each of two rubric sets, unt_rubrics.yaml and
unt_rubrics_second.yaml, written by two authors; each file also holds the synonyms table it is graded with.
The two sets show how much of the figures is the matcher's and how much one author's choices.

Definitions (printed in the header too):
- human correct: the average of the two graders' 0-5 scores is >= 3; clearly right: >= 4; clearly wrong: <= 2.5.
- verdicts: correct (earns the point), partly right (no point yet: the learner is told the one point missing) or
  not yet (bot.grading.verdict); the share of each, and how many human-correct and human-wrong answers are partly
  right.
- accuracy: over all answers, the share whose correct (the "correct" verdict) / not matches human correct.
- false-accept: the share of clearly wrong answers graded "correct".
- false-reject: the share of clearly right answers graded "not yet" (a partly right one is told what is missing).
- r: Pearson correlation of a grader's fraction with the human average; studybot's fraction is the grade's
  score (bot.grading.matching: the credit of the best `needed` key points and of all of them, with partial credit for
  a key point whose words are said apart), the baseline's is its cosine.
- r of the product's score: Pearson of the points a first answer so graded earns (bot.grading.scoring: 1 or 0,
  what leaderboards rank by) with the human average, beside that of the plain fraction of key points matched.
- against each single grader (data/scores/x.y/other, the TA, and .../me): Cohen's kappa of the correct/wrong
  verdicts (that grader's score >= 3 is correct), false-accept of that grader's clearly wrong answers (<= 2.5) and
  false-reject of its clearly right ones (>= 4); the other grader measured the same way is the bar to meet.
- baseline: cosine of word-count vectors (lower case, punctuation stripped) of the student and instructor
  answers, graded correct at or above the threshold that maximises its accuracy on this same data.

How the figures are kept honest:
1. Each rubric set was written from the questions and instructor answers alone, by an author who had read no
   student answer or grade. The first set was revised once before any answer was read (one commit, titled
   as a blind revision); the second was written later by an author who saw neither the answers, nor the
   grades, nor the first set, to the authoring guide in content/README.md. After that a set changes only to
   fix a YAML error, never to fit the answers.
2. The matcher changes only by general rules, never for a question or an answer. Rules are developed on
   assignments 1-3; assignments 4-6 are looked at only as figures (`--halves`), never answer by answer, and
   a rule that helps 1-3 but hurts 4-6 is dropped. The headline figure is all of 1-6.
3. The baseline runs in the same process on the same answers.

Prints figures; asserts nothing. Flags: `--halves` adds the figures for assignments 1-3 and 4-6, `--errors`
the errors by category (what the matcher saw), `--detail` a line per question and the rubric self-check
issues (for development).
"""

from __future__ import annotations

import asyncio
import html
import math
import os
import re
import statistics
import sys
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import yaml

from bot.grading.matching import NEGATED, Grade, find, grade
from bot.grading.reading import Answer, Phrase, Synonyms, phrase, read
from bot.grading.rubric import KeyPoint, Rubric
from bot.grading.scoring import answer_points
from bot.grading.selfcheck import audit_rubric
from bot.grading.verdict import Verdict

ENV = "STUDYBOT_UNT_DATA"
RUBRICS = Path(__file__).with_name("unt_rubrics.yaml")
# Two rubric sets, each written blind by its own author: how much the figures owe to one author's choices.
RUBRIC_SETS = {"first rubric set": RUBRICS, "second rubric set": Path(__file__).with_name("unt_rubrics_second.yaml")}
HUMAN_CORRECT, CLEARLY_RIGHT, CLEARLY_WRONG = 3.0, 4.0, 2.5
# The two graders' own scores, in data/scores/x.y: the class's TA, and a second grader.
GRADERS = (("other", "grader 1 (the TA)"), ("me", "grader 2"))
HALVES = (("1-3", {"1", "2", "3"}), ("4-6", {"4", "5", "6"}))  # development half, held-out half
_BR = re.compile(r"<br\s*/?>", re.IGNORECASE)
_WORD = re.compile(r"[^\W_]+")


@dataclass(frozen=True)
class Question:
    id: str
    prompt: str
    instructor: str
    answers: tuple[tuple[str, float], ...]  # (student answer, human average)
    graders: tuple[tuple[float, float], ...] = ()  # per answer, each single grader's score (GRADERS), when known


@dataclass(frozen=True)
class Scored:
    question: str
    human: float
    correct: bool
    fraction: float
    matched_share: float = 0.0  # key points matched / key points: the plain fraction, for comparison
    points: int = 0  # what the product gives a first answer so graded (bot.grading.scoring): leaderboards rank by it
    graders: tuple[float, float] | None = None  # each single grader's score
    verdict: str = ""  # bot.grading.verdict.Verdict; "" for a grader with two verdicts (correct or not)

    @property
    def not_yet(self) -> bool:
        return self.verdict == Verdict.NOT_YET if self.verdict else not self.correct

    @property
    def partly(self) -> bool:
        return self.verdict == Verdict.PARTLY


@dataclass(frozen=True)
class Figures:
    n: int
    accuracy: float
    false_accepts: int
    clearly_wrong: int
    false_rejects: int
    clearly_right: int
    r: float
    correct: int = 0  # answers graded correct, partly right; of the partly right, how many are human correct
    partly: int = 0
    partly_right: int = 0

    @property
    def false_accept(self) -> float:
        return self.false_accepts / self.clearly_wrong if self.clearly_wrong else math.nan

    @property
    def false_reject(self) -> float:
        return self.false_rejects / self.clearly_right if self.clearly_right else math.nan


# ---------------------------------------------------------------- reading the data


def _numbered(path: Path) -> dict[str, str]:
    """`x.y text` lines as {x.y: text}."""
    lines = (line.split(maxsplit=1) for line in path.read_text(encoding="utf-8", errors="replace").splitlines())
    return {parts[0]: parts[1].strip() if len(parts) > 1 else "" for parts in lines if parts}


def _student_answer(line: str, question_id: str) -> str:
    """One line of raw/x.y: the leading question id and any <br> markup removed, HTML entities decoded."""
    line = line.strip()
    if line.split(maxsplit=1)[:1] == [question_id]:
        line = line[len(question_id) :]
    return " ".join(html.unescape(_BR.sub(" ", line)).split())


def question_ids(root: Path) -> list[str]:
    """The short-answer question ids in docs/files (lines starting with # are not short-answer questions)."""
    lines = (line.strip() for line in (root / "docs" / "files").read_text().splitlines())
    return [line for line in lines if line and not line.startswith("#")]


def load_dataset(root: Path) -> list[Question]:
    prompts, instructor = _numbered(root / "raw" / "questions"), _numbered(root / "raw" / "answers")
    questions = []
    for qid in question_ids(root):
        texts = (root / "raw" / qid).read_text(encoding="utf-8", errors="replace").splitlines()
        scores = (root / "scores" / qid / "ave").read_text().split()
        if len(texts) != len(scores):
            raise ValueError(f"{qid}: {len(texts)} answers but {len(scores)} scores")
        answers = tuple((_student_answer(t, qid), float(s)) for t, s in zip(texts, scores, strict=True))
        questions.append(Question(qid, prompts.get(qid, ""), instructor.get(qid, ""), answers,
                                  _single_grades(root / "scores" / qid, len(answers))))
    return questions


def _single_grades(folder: Path, n: int) -> tuple[tuple[float, float], ...]:
    """Each answer's score by each grader of GRADERS, or () when the folder does not hold them both."""
    files = [folder / name for name, _ in GRADERS]
    if not all(f.is_file() for f in files):
        return ()
    columns = [[float(s) for s in f.read_text().split()] for f in files]
    if any(len(column) != n for column in columns):
        raise ValueError(f"{folder.name}: {n} answers but {'/'.join(str(len(c)) for c in columns)} single grades")
    return tuple(zip(*columns, strict=True))


def load_rubrics(path: Path = RUBRICS) -> tuple[dict[str, Rubric], Synonyms]:
    """The rubrics by question id, and the synonyms table they are graded with."""
    data = yaml.safe_load(path.read_text()) or {}
    synonyms = Synonyms({str(k): str(v) for k, v in (data.pop("synonyms", None) or {}).items()})
    rubrics = {
        str(qid): Rubric(int(r["needed"]), tuple(
            KeyPoint(str(p["id"]), str(p["point"]), tuple(map(str, p["accept"])),
                     tuple(map(str, p.get("misconceptions") or ())))
            for p in r["points"]))
        for qid, r in data.items()
    }
    return rubrics, synonyms


# ---------------------------------------------------------------- scoring


def figures(scored: Sequence[Scored]) -> Figures:
    wrong = [s for s in scored if s.human <= CLEARLY_WRONG]
    right = [s for s in scored if s.human >= CLEARLY_RIGHT]
    agree = sum(s.correct == (s.human >= HUMAN_CORRECT) for s in scored)
    partly = [s for s in scored if s.partly]
    return Figures(len(scored), agree / len(scored) if scored else math.nan,
                   sum(s.correct for s in wrong), len(wrong), sum(s.not_yet for s in right), len(right),
                   pearson([s.fraction for s in scored], [s.human for s in scored]), sum(s.correct for s in scored),
                   len(partly), sum(s.human >= HUMAN_CORRECT for s in partly))


def pearson(xs: Sequence[float], ys: Sequence[float]) -> float:
    try:
        return statistics.correlation(xs, ys)
    except statistics.StatisticsError:  # fewer than two points, or a constant series
        return math.nan


def grade_all(questions: Sequence[Question], rubrics: dict[str, Rubric], synonyms: Synonyms) -> list[Scored]:
    scored = []
    for q in questions:
        rubric = rubrics[q.id]
        for n, (text, human) in enumerate(q.answers):
            result = grade(rubric, text, synonyms=synonyms, prompt=q.prompt)
            scored.append(Scored(q.id, human, result.correct, result.score, len(result.matched) / len(rubric.points),
                                 answer_points(result.correct, first_answer=True),
                                 q.graders[n] if q.graders else None, result.verdict))
    return scored


def kappa(a: Sequence[bool], b: Sequence[bool]) -> float:
    """Cohen's kappa of two graders' correct/wrong verdicts on the same answers."""
    n = len(a)
    if not n:
        return math.nan
    observed = sum(x == y for x, y in zip(a, b, strict=True)) / n
    pa, pb = sum(a) / n, sum(b) / n
    expected = pa * pb + (1 - pa) * (1 - pb)
    return (observed - expected) / (1 - expected) if expected < 1 else math.nan


@dataclass(frozen=True)
class Agreement:
    """A grader's verdicts against one reference grader: kappa on correct (>= HUMAN_CORRECT), false-accept of the
    reference's clearly wrong answers and false-reject of its clearly right ones."""

    kappa: float
    false_accepts: int
    clearly_wrong: int
    false_rejects: int
    clearly_right: int


def agreement(verdicts: Sequence[bool], reference: Sequence[float]) -> Agreement:
    wrong = [v for v, h in zip(verdicts, reference, strict=True) if h <= CLEARLY_WRONG]
    right = [v for v, h in zip(verdicts, reference, strict=True) if h >= CLEARLY_RIGHT]
    return Agreement(kappa(verdicts, [h >= HUMAN_CORRECT for h in reference]),
                     sum(wrong), len(wrong), len(right) - sum(right), len(right))


def _agreement_lines(scored: Sequence[Scored]) -> list[str]:
    """Studybot against each single grader, beside the other grader against that one."""
    known = [s for s in scored if s.graders is not None]
    if not known:
        return []
    lines = []
    for k, (_, name) in enumerate(GRADERS):
        reference = [s.graders[k] for s in known if s.graders]
        ours = agreement([s.correct for s in known], reference)
        theirs = agreement([s.graders[1 - k] >= HUMAN_CORRECT for s in known if s.graders], reference)
        lines.append(f"    against {name} alone: studybot kappa {ours.kappa:.3f}, false-accept "
                     f"{_percent(ours.false_accepts, ours.clearly_wrong)}, false-reject "
                     f"{_percent(ours.false_rejects, ours.clearly_right)} | {GRADERS[1 - k][1]}: kappa "
                     f"{theirs.kappa:.3f}, false-accept {_percent(theirs.false_accepts, theirs.clearly_wrong)}, "
                     f"false-reject {_percent(theirs.false_rejects, theirs.clearly_right)}")
    return lines


def cosine(a: str, b: str) -> float:
    """Cosine of the word-count vectors of two texts (lower case, punctuation stripped)."""
    ca, cb = Counter(_WORD.findall(a.lower())), Counter(_WORD.findall(b.lower()))
    dot = sum(n * cb[w] for w, n in ca.items())
    norm = math.sqrt(sum(n * n for n in ca.values()) * sum(n * n for n in cb.values()))
    return dot / norm if norm else 0.0


def fit_threshold(pairs: Sequence[tuple[float, float]]) -> float:
    """The cosine threshold (correct at or above it) with the best accuracy on (cosine, human) pairs."""
    candidates = sorted({c for c, _ in pairs} | {math.inf})
    return max(candidates, key=lambda t: sum((c >= t) == (h >= HUMAN_CORRECT) for c, h in pairs))


def baseline(questions: Sequence[Question]) -> tuple[list[Scored], float]:
    sims = [(q.id, cosine(text, q.instructor), human) for q in questions for text, human in q.answers]
    threshold = fit_threshold([(c, h) for _, c, h in sims])
    return [Scored(qid, h, c >= threshold, c) for qid, c, h in sims], threshold


# ---------------------------------------------------------------- what the errors are


def _why_rejected(rubric: Rubric, text: str, result: Grade, synonyms: Synonyms) -> str:
    """The category of a false reject, from what the matcher saw."""
    if result.voided:
        return "voided by a misconception"
    if result.matched:
        return "fewer key points than needed"
    answer = read(text, synonyms)
    if any(find(answer, phrase(a, synonyms)) == NEGATED for p in rubric.points for a in p.accept):
        return "a phrasing stated only under a negation"
    if any(_in_one_clause(answer, phrase(a, synonyms)) for p in rubric.points for a in p.accept):
        return "a phrasing's words all in one clause, out of order or too far apart"
    return "said in words the rubric does not list"


def _in_one_clause(answer: Answer, wanted: Phrase) -> bool:
    """Whether every word of the phrase stands somewhere in one clause of the answer."""
    places = [{answer.words[n].clause for n in answer.positions(*w)} for w in wanted.words]
    return bool(places) and bool(set.intersection(*places))


def _why_accepted(rubric: Rubric, text: str, result: Grade, synonyms: Synonyms) -> str:
    """The category of a false accept: whether the answer says enough accepted phrasings word for word (so any
    reading of the rubric accepts it), and whether one-word phrasings carried it."""
    answer = read(text, synonyms)
    said = [w.lemma for w in answer.words]
    literal = [p for p in rubric.points if p.id in result.matched
               and any(_contains(said, [lemma for _, lemma in phrase(a, synonyms).words]) for a in p.accept)]
    if len(literal) < rubric.needed:
        return "needing the matcher's latitude (typos, inserted words, word order, half a point)"
    longer = [p for p in literal if any(
        _contains(said, [lemma for _, lemma in phrase(a, synonyms).words]) and phrase(a, synonyms).content > 1
        for a in p.accept)]
    if len(longer) >= rubric.needed:
        return "accepted phrasings said word for word, of several words"
    return "accepted phrasings said word for word, carried by one-word phrasings"


def _contains(said: list[str], wanted: list[str]) -> bool:
    """Whether the lemmas `wanted` stand together, in order, in `said`."""
    return bool(wanted) and any(said[i : i + len(wanted)] == wanted for i in range(len(said) - len(wanted) + 1))


def error_categories(questions: Sequence[Question], rubrics: dict[str, Rubric], synonyms: Synonyms) -> Counter[str]:
    """How many false rejects and false accepts fall in each category."""
    found: Counter[str] = Counter()
    for q in questions:
        rubric = rubrics[q.id]
        for text, human in q.answers:
            result = grade(rubric, text, synonyms=synonyms, prompt=q.prompt)
            if human >= CLEARLY_RIGHT and result.verdict is Verdict.NOT_YET:
                found["false reject: " + _why_rejected(rubric, text, result, synonyms)] += 1
            elif human <= CLEARLY_WRONG and result.correct:
                found["false accept: " + _why_accepted(rubric, text, result, synonyms)] += 1
    return found


# ---------------------------------------------------------------- the report


def _percent(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f}% ({part}/{whole})" if whole else "n/a (0/0)"


def _line(name: str, f: Figures) -> str:
    line = (f"  {name}: accuracy {f.accuracy:.3f}, false-accept {_percent(f.false_accepts, f.clearly_wrong)}, "
            f"false-reject {_percent(f.false_rejects, f.clearly_right)}, r {f.r:.3f}")
    if not f.partly and not f.correct:
        return line
    not_yet = f.n - f.correct - f.partly
    return (f"{line}; verdicts: correct {_share(f.correct, f.n)}, partly right {_share(f.partly, f.n)} "
            f"({f.partly_right} human-correct, {f.partly - f.partly_right} human-wrong), "
            f"not yet {_share(not_yet, f.n)}")


def _share(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f}%" if whole else "n/a"


def _detail(questions: Sequence[Question], ours: list[Scored], base: list[Scored],
            rubrics: dict[str, Rubric], synonyms: Synonyms) -> list[str]:
    lines = ["  per question (studybot | baseline): n, false-accept, false-reject, r"]
    for q in questions:
        mine = figures([s for s in ours if s.question == q.id])
        theirs = figures([s for s in base if s.question == q.id])
        lines.append(f"    {q.id}: n {mine.n}; FA {mine.false_accepts}/{mine.clearly_wrong}, "
                     f"FR {mine.false_rejects}/{mine.clearly_right}, r {mine.r:.2f} | FA {theirs.false_accepts}/"
                     f"{theirs.clearly_wrong}, FR {theirs.false_rejects}/{theirs.clearly_right}, r {theirs.r:.2f}")
        for issue in audit_rubric(rubrics[q.id], q.prompt, [q.instructor], [], synonyms):
            kind = "warning" if issue.warning else "error"
            lines.append(f"      {kind} at {'/'.join(map(str, issue.where))}: {issue.message}")
    return lines


def report(root: Path, rubric_sets: Mapping[str, Path] = RUBRIC_SETS, detail: bool = False, halves: bool = False,
           errors: bool = False) -> list[str]:
    """The figures of each rubric set, beside the baseline, for every short-answer question of the dataset at
    root that the first set has a rubric for."""
    dataset = load_dataset(root)
    sets = {name: load_rubrics(path) for name, path in rubric_sets.items()}
    first = next(iter(sets.values()))[0]
    questions = [q for q in dataset if q.id in first]
    unrubricked = [q.id for q in dataset if q.id not in first]
    base, threshold = baseline(questions)
    lines = [
        f"grading vs human graders, UNT CS short answers: {sum(len(q.answers) for q in questions):,} answers to "
        f"{len(questions)} questions" + (f" (no rubric, left out: {', '.join(unrubricked)})" if unrubricked else ""),
        f"  human correct = average of the two graders >= {HUMAN_CORRECT:g} of 5 (for accuracy, over all answers);"
        f" clearly right >= {CLEARLY_RIGHT:g}, clearly wrong <= {CLEARLY_WRONG:g}",
        "  false-accept = share of clearly wrong answers graded correct; false-reject = share of clearly right"
        " answers graded not yet (partly right is neither);"
        " r = Pearson of the grade's score (key points matched, with partial credit;"
        " baseline: cosine) with the human average",
        "  goals: false-accept <= 8% and false-reject <= 8%, at most 10% partly right, r >= 0.76 with the product's"
        " score; against each single grader, kappa at least the other grader's",
        _line(f"baseline word-overlap cosine >= {threshold:.3f} (threshold fitted on this data)", figures(base)),
    ]
    for name, (rubrics, synonyms) in sets.items():
        asked = [q for q in questions if q.id in rubrics]
        started = time.perf_counter()
        ours = grade_all(asked, rubrics, synonyms)
        per_answer = (time.perf_counter() - started) / max(len(ours), 1)
        humans = [s.human for s in ours]
        lines += [
            _line(f"studybot, {name}", figures(ours)),
            f"    r of the product's score (the points a first answer earns, as leaderboards count them): "
            f"{pearson([s.points for s in ours], humans):.3f}; of the plain fraction of key points matched: "
            f"{pearson([s.matched_share for s in ours], humans):.3f}; {per_answer * 1e6:.0f} µs per answer",
            *_agreement_lines(ours),
        ]
        if halves:
            for part, assignments in HALVES:
                ids = {q.id for q in asked if q.id.split(".")[0] in assignments}
                mine, theirs = [s for s in ours if s.question in ids], [s for s in base if s.question in ids]
                points_r = pearson([s.points for s in mine], [s.human for s in mine])
                lines += [_line(f"  assignments {part} ({len(ids)} questions), r of the product's score "
                                f"{points_r:.3f}", figures(mine)),
                          _line("    baseline", figures(theirs))]
        if errors:
            everything = {q.id.split(".")[0] for q in asked}
            for part, assignments in (("1-6", everything), *HALVES):
                chosen = [q for q in asked if q.id.split(".")[0] in assignments]
                lines.append(f"    errors by category, assignments {part}:")
                found = error_categories(chosen, rubrics, synonyms)
                lines += [f"      {kind}: {n}" for kind, n in sorted(found.items())]
        if detail:
            lines += _detail(asked, ours, base, rubrics, synonyms)
    return lines


def skip_reason(environ: dict[str, str] | os._Environ[str] = os.environ) -> str | None:
    """Why the benchmark cannot run here, or None when the data is there."""
    value = environ.get(ENV, "")
    if not value:
        return f"{ENV} is not set (the folder of the UNT short-answer dataset, assignments 1-6)"
    root = Path(value)
    if not (root / "docs" / "files").is_file():
        return f"{ENV}={value} holds no UNT short-answer dataset (no docs/files)"
    return None


async def main(detail: bool = False, halves: bool = False, errors: bool = False) -> list[str]:
    reason = skip_reason()
    if reason:
        return [f"grading vs human graders: skipped: {reason}"]
    try:
        return report(Path(os.environ[ENV]), detail=detail, halves=halves, errors=errors)
    except (OSError, ValueError, KeyError) as error:
        return [f"grading vs human graders: skipped: the dataset could not be read ({error})"]


if __name__ == "__main__":
    flags = sys.argv[1:]
    print(*asyncio.run(main(detail="--detail" in flags, halves="--halves" in flags, errors="--errors" in flags)),
          sep="\n")
