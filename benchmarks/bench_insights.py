"""/insights and /insights export for a cohort of 1,000 learners and 100,000 answers, beside a bare
SQL baseline computing the same per-question figures (first answers: answered, correct, self-graded,
wrong choices, missed key points, partly right) in the same process. Prints figures; asserts nothing."""

from __future__ import annotations

import asyncio
import json
import random
import sqlite3
import statistics
import tempfile
import time
from datetime import UTC, timedelta
from pathlib import Path

from benchmarks import goal
from bot.content.loader import load_library
from bot.content.render import render_quiz
from bot.core.clock import FixedClock, iso_week
from bot.core.config import Settings
from bot.core.messages import Actor, Command, Place
from bot.runtime.app import StudyBot
from bot.store.engine import iso

LESSONS, MC, SHORT, PROMPTS = 2, 40, 10, 5  # per lesson: 100 questions, 10 teach-back prompts in all
LEARNERS, ANSWERS, ATTEMPTS, WEEKS = 1_000, 100_000, 5_000, 8
STALL_LEARNERS = 10_000  # 1,000,000 answers for the export's stall of the event loop
POINTS = ("first", "second", "third")
BASELINE = (
    "SELECT a.question_id, a.choice, a.correct, a.self_graded, COUNT(*) FROM answers a"
    " JOIN learners l ON l.id = a.learner_id WHERE a.scored = 1 AND l.platform = 'slack' AND l.cohort = 'T1'"
    " GROUP BY a.question_id, a.choice, a.correct, a.self_graded",
    "SELECT a.question_id, m.value, COUNT(*) FROM answers a JOIN learners l ON l.id = a.learner_id,"
    " json_each(a.missed) m WHERE a.scored = 1 AND a.missed IS NOT NULL AND l.platform = 'slack'"
    " AND l.cohort = 'T1' GROUP BY a.question_id, m.value",
    "SELECT a.question_id, COUNT(*) FROM answers a JOIN learners l ON l.id = a.learner_id WHERE a.scored = 1"
    " AND a.verdict = 'partly' AND l.platform = 'slack' AND l.cohort = 'T1' GROUP BY a.question_id",
)


def write_library(root: Path) -> None:
    for n in range(LESSONS):
        folder = root / f"lesson{n}"
        folder.mkdir(parents=True)
        (folder / "lesson.yaml").write_text(f'id: "l{n}"\ntitle: "Lesson {n}"\nsummary: "Generated."\n'
                                            'goals:\n  - id: "g"\n    text: "A goal"\n')
        points = "".join(f'        - id: "{p}"\n          point: "The {p} idea of the question"\n'
                         f'          accept: ["{p} idea"]\n' for p in POINTS)
        questions = [
            f'  - id: "l{n}-mc{q}"\n    type: mc\n    goal: "g"\n    prompt: "Which statement {q} is right?"\n'
            '    choices:\n      - text: "The right one"\n        correct: true\n'
            '      - text: "A wrong one"\n        why_wrong: "No."\n      - text: "Another wrong one"\n'
            '        why_wrong: "No."\n    explanation: "Because."\n    sources: [S1]\n' for q in range(MC)]
        questions += [
            f'  - id: "l{n}-sa{q}"\n    type: short\n    goal: "g"\n    prompt: "Explain idea {q}."\n'
            '    model_answer: "The first idea, the second idea and the third idea."\n'
            f'    rubric:\n      needed: 2\n      points:\n{points}    explanation: "Because."\n    sources: [S1]\n'
            for q in range(SHORT)]
        (folder / "quiz.yaml").write_text("questions:\n" + "".join(questions))
        prompts = [f'  - id: "l{n}-tb{p}"\n    goal: "g"\n    prompt: "Explain topic {p}."\n    key_points:\n'
                   + points.replace("        ", "      ") for p in range(PROMPTS)]
        (folder / "teachback.yaml").write_text("prompts:\n" + "".join(prompts))
        (folder / "notes.md").write_text("# Reading log\n\n## S1 — A source\n")
    for lesson in load_library(root).lessons.values():  # as `studybot render` would, so the packs load without warnings
        (lesson.path / "quiz.md").write_text(render_quiz(lesson), encoding="utf-8")


def fill(path: Path, clock: FixedClock, questions: list[tuple[str, str, str]], prompts: list[tuple[str, str]],
         learners: int = LEARNERS) -> None:
    """1,000 learners (or `learners`), 100 answers each (a first answer to 90 questions, 10 practice answers),
    5,000 teach-back attempts and some glossary lookups, over eight weeks."""
    rng = random.Random(11)
    now = clock.now()
    zone = UTC
    with sqlite3.connect(path) as c:
        c.execute("PRAGMA synchronous = OFF")
        c.executemany("INSERT INTO learners (id, platform, cohort, user_id, display_name, last_seen)"
                      " VALUES (?, 'slack', 'T1', ?, ?, ?)",
                      ((i + 1, f"U{i:05d}", f"Learner, number {i}", iso(now)) for i in range(learners)))
        rows = []
        per_learner = ANSWERS // LEARNERS
        for i in range(learners):
            firsts = rng.sample(questions, per_learner - 10)
            for k, (lesson, question, kind) in enumerate(firsts + rng.sample(firsts, 10)):
                at = now - timedelta(days=rng.uniform(0, WEEKS * 7))
                correct = rng.random() < 0.6
                missed = rng.sample(POINTS, 0 if correct else rng.randint(1, 3))
                choice = (0 if correct else rng.randint(1, 2)) if kind == "mc" else None
                scored = int(k < len(firsts))
                verdict = ("correct" if correct else "partly" if len(missed) == 1 else "not_yet") \
                    if kind == "short" else None
                rows.append((i + 1, f"p{i}-{k}", lesson, question, "practice", choice, int(correct), scored,
                             int(correct and scored), int(kind == "short" and rng.random() < 0.3),
                             iso_week(at, zone), iso(at), json.dumps(missed) if kind == "short" else None, verdict))
        c.executemany("INSERT INTO answers (learner_id, prompt_id, lesson_id, question_id, mode, choice, correct,"
                      " scored, points, self_graded, week, answered_at, missed, verdict)"
                      " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)", rows)
        attempts = []
        for _ in range(ATTEMPTS):
            lesson, prompt = rng.choice(prompts)
            at = now - timedelta(days=rng.uniform(0, WEEKS * 7))
            missed = rng.sample(POINTS, rng.randint(0, 3))
            attempts.append((rng.randrange(learners) + 1, lesson, prompt, "an explanation",
                             json.dumps([p for p in POINTS if p not in missed]), json.dumps(missed),
                             int(not missed), iso_week(at, zone), iso(at),
                             "correct" if not missed else "partly" if len(missed) == 1 else "not_yet"))
        c.executemany("INSERT INTO teachbacks (learner_id, lesson_id, prompt_id, explanation, covered, missed, points,"
                      " week, submitted_at, verdict) VALUES (?,?,?,?,?,?,?,?,?,?)", attempts)
        c.executemany("INSERT INTO glossary_lookups VALUES ('slack', 'T1', ?, ?, ?, ?)",
                      ((iso_week(now, zone), n % 2, f"term {n}", rng.randint(1, 50)) for n in range(200)))


def timed(runs: int, fn) -> list[float]:
    return [fn() for _ in range(runs)]


async def seeded(root: Path, learners: int = LEARNERS) -> tuple[Settings, FixedClock]:
    """A generated library under `root` and a database filled for it (`fill`), ready for a bot to start on."""
    write_library(root / "content")
    clock = FixedClock()
    settings = Settings(db_path=root / "insights.db", content_dir=root / "content", results_dir=root / "r")
    bot = await StudyBot.start(settings, clock)
    questions = [(q.lesson_id, q.id, q.kind) for q in bot.library.questions.values()]
    prompts = [(p.lesson_id, p.id) for p in bot.library.prompts.values()]
    await bot.close()
    fill(settings.db_path, clock, questions, prompts, learners)
    return settings, clock


async def bench_insights() -> list[str]:
    with tempfile.TemporaryDirectory() as tmp:
        settings, clock = await seeded(Path(tmp))
        bot = await StudyBot.start(settings, clock)
        teacher, place = Actor("slack", "T1", "UTEACH", "Teacher", True), Place("slack", "T1", "C1")
        view, export, sizes = [], [], []
        for _ in range(20):
            started = time.perf_counter()
            await bot.handle(Command("insights", "", teacher, place))
            view.append((time.perf_counter() - started) * 1000)
        for _ in range(3):
            started = time.perf_counter()
            replies = await bot.handle(Command("insights", "export", teacher, place))
            export.append(time.perf_counter() - started)
            sizes = [len(r.file.content) for r in replies if r.file]
        answers, questions = await bot.store.count("answers"), len(bot.library.questions)
        await bot.close()
        with sqlite3.connect(settings.db_path) as c:
            def bare() -> float:
                started = time.perf_counter()
                for sql in BASELINE:
                    c.execute(sql).fetchall()
                return (time.perf_counter() - started) * 1000

            baseline = timed(20, bare)
    med = statistics.median
    return [
        f"insights: {LEARNERS:,} learners, {answers:,} answers, {ATTEMPTS:,} teach-backs, {questions} questions",
        f"  /insights {med(view):.0f} ms {goal('< 200 ms', med(view) < 200)} vs bare SQL, the per-question figures"
        f" alone in two plain GROUP BY queries, {med(baseline):.0f} ms (ratio {med(view) / med(baseline):.2f})",
        f"  /insights export {med(export):.2f} s {goal('< 2 s', med(export) < 2)}: CSV {sizes[0] / 1e6:.1f} MB,"
        f" report {sizes[1] / 1e3:.0f} kB",
    ]


async def stalls(ticks: list[float], every: float = 0.005) -> None:
    """A probe beside the work: how late the loop wakes it each time (its stalls), until cancelled."""
    loop = asyncio.get_running_loop()
    while True:
        before = loop.time()
        await asyncio.sleep(every)
        ticks.append(loop.time() - before - every)


async def bench_export_stall(learners: int = STALL_LEARNERS) -> list[str]:
    """/insights export of a cohort of `learners` x 100 answers, with a loop-lag probe beside it: the
    longest the event loop stalled (a press arriving then waits that long to be read)."""
    with tempfile.TemporaryDirectory() as tmp:
        settings, clock = await seeded(Path(tmp), learners)
        bot = await StudyBot.start(settings, clock)
        try:
            teacher, place = Actor("slack", "T1", "UTEACH", "Teacher", True), Place("slack", "T1", "C1")
            answers = await bot.store.count("answers")
            lags: list[float] = []
            probe = asyncio.create_task(stalls(lags))
            started = time.perf_counter()
            replies = await bot.handle(Command("insights", "export", teacher, place))
            took = time.perf_counter() - started
            await asyncio.sleep(0.05)  # the probe wakes once more: a stall at the export's very end counts too
            probe.cancel()
            size = next(len(r.file.content) for r in replies if r.file)
        finally:
            await bot.close()
    worst = max(lags) * 1000
    return [f"  /insights export of {answers:,} answers ({learners:,} learners) {took:.1f} s, CSV {size / 1e6:.0f} MB:"
            f" the event loop's longest stall {worst:.0f} ms {goal('< 100 ms', worst < 100)},"
            f" p99 {statistics.quantiles(lags, n=100)[98] * 1000:.0f} ms over {len(lags):,} probes"]


async def main() -> list[str]:
    return [*await bench_insights(), *await bench_export_stall()]


if __name__ == "__main__":
    print(*asyncio.run(main()), sep="\n")
