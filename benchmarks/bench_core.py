"""Start-up, glossary typo lookups, answer recording and leaderboard queries, each beside a
bare baseline run in the same process. Prints figures; asserts nothing."""

from __future__ import annotations

import asyncio
import logging
import random
import sqlite3
import statistics
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import timedelta
from pathlib import Path

import aiosqlite
import yaml
from fsrs import Card, Rating, Scheduler

from benchmarks import goal
from bot.content.loader import load_library
from bot.content.term_index import Glossary
from bot.core.clock import FixedClock
from bot.core.config import Settings
from bot.core.messages import Actor, ChoiceMade, Cohort, Command, Place
from bot.kit.streaks import streak
from bot.kit.teams import team_board
from bot.questions.mc import MultipleChoice
from bot.runtime.app import StudyBot
from bot.store.engine import iso
from bot.store.model import QUESTION, AnswerMode

LESSONS, QUESTIONS_PER_LESSON, TERMS_PER_LESSON = 100, 50, 50


def write_library(root: Path, lessons: int = LESSONS) -> list[Path]:
    """100 lessons, 5,000 questions (about 600 bytes of YAML each), 5,000 glossary terms."""
    files = []
    for n in range(lessons):
        folder = root / f"lesson{n:03d}"
        folder.mkdir(parents=True)
        (folder / "lesson.yaml").write_text(
            f'id: "lesson-{n}"\ntitle: "Lesson {n}"\nsummary: "Generated lesson {n}."\n'
            'goals:\n  - id: "g"\n    text: "A goal"\n'
        )
        questions = []
        for q in range(QUESTIONS_PER_LESSON):
            questions.append(
                f'  - id: "l{n}-q{q}"\n    type: mc\n    goal: "g"\n'
                f'    prompt: "Which statement about generated topic number {q} of lesson {n} is right?"\n'
                "    choices:\n"
                '      - text: "The first statement, which is the correct one for this question"\n'
                "        correct: true\n"
                '      - text: "A second statement that sounds plausible but is wrong"\n'
                '        why_wrong: "It confuses the training side with the serving side."\n'
                '      - text: "A third statement that mixes up two of the terms"\n'
                '        why_wrong: "It swaps the meaning of the two terms in the lesson."\n'
                '    explanation: "The first statement follows from the reading; the others do not."\n'
                "    sources: [P1, M2]\n"
            )
        (folder / "quiz.yaml").write_text("questions:\n" + "".join(questions))
        terms = [
            f'  - term: "term {n}-{t} widget"\n    aliases: ["tw{n}x{t}"]\n'
            f'    definition: "A generated definition of term {t} in lesson {n}, in plain words."\n'
            for t in range(TERMS_PER_LESSON)
        ]
        (folder / "glossary.yaml").write_text("terms:\n" + "".join(terms))
        (folder / "notes.md").write_text("# Reading log\n\n## P1 — A paper\n\n## M2 — A blog post\n")
        files += [folder / "lesson.yaml", folder / "quiz.yaml", folder / "glossary.yaml"]
    return files


def best_of(runs: int, fn) -> float:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        fn()
        times.append(time.perf_counter() - started)
    return min(times)


def bench_startup() -> list[str]:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "content"
        files = write_library(root)
        size = sum(f.stat().st_size for f in files)
        bare = best_of(3, lambda: [yaml.load(f.read_text(), Loader=yaml.CSafeLoader) for f in files])  # noqa: S506
        ours = best_of(3, lambda: load_library(root))
        library = load_library(root)
        glossary = Glossary(library.terms)
        names = [t.term for t in library.terms]
        rng = random.Random(7)
        lookups = []
        for _ in range(1000):
            name = list(rng.choice(names))
            i = rng.randrange(len(name) - 1)
            name[i], name[i + 1] = name[i + 1], name[i]  # a transposition typo
            started = time.perf_counter()
            glossary.lookup("".join(name)) or glossary.suggest("".join(name))
            lookups.append((time.perf_counter() - started) * 1000)
    p99 = statistics.quantiles(lookups, n=100)[98]
    return [
        f"start-up: {len(library.questions):,} questions, {len(library.terms):,} terms, {size / 1e6:.1f} MB of YAML",
        f"  load + validate {ours * 1000:.0f} ms vs bare CSafeLoader {bare * 1000:.0f} ms: "
        f"ratio {ours / bare:.2f}x {goal('<= 1.5x', ours / bare <= 1.5)}",
        f"glossary typo lookup over {len(names):,} terms: p50 {statistics.median(lookups):.2f} ms, "
        f"p99 {p99:.2f} ms {goal('p99 < 2 ms', p99 < 2)}",
    ]


async def bench_answers(learners: int = 500, rounds: int = 4) -> list[str]:
    """Answers per second through StudyBot.handle, each returned after its commit."""
    with tempfile.TemporaryDirectory() as tmp:
        content = Path(__file__).resolve().parents[1] / "content"
        settings = Settings(db_path=Path(tmp) / "bench.db", content_dir=content, results_dir=Path(tmp) / "r")
        bot = await StudyBot.start(settings, FixedClock())
        lesson = next(iter(bot.library.lessons.values()))
        mc = [q for q in lesson.questions if isinstance(q, MultipleChoice)][:rounds]
        place = Place("slack", "T1", "C1")
        actors = [Actor("slack", "T1", f"U{i}", f"learner {i}") for i in range(learners)]
        tokens = []
        for q in mc:
            for actor in actors:
                prompt = await bot.store.prompts.new(QUESTION, place, actor, lesson_id=lesson.id,
                                                     item_id=q.id, mode=AnswerMode.ROUND)
                tokens.append((f"{prompt.id}.{q.correct_index}", actor))
        started = time.perf_counter()
        for batch in range(rounds):
            chunk = tokens[batch * learners:(batch + 1) * learners]
            await asyncio.gather(*(bot.handle(ChoiceMade(token, actor, place)) for token, actor in chunk))
        ours = len(tokens) / (time.perf_counter() - started)
        recorded = await bot.store.count("answers")
        await bot.close()

        async with aiosqlite.connect(Path(tmp) / "bare.db", isolation_level=None) as db:
            await db.execute("PRAGMA journal_mode = WAL")
            await db.execute("PRAGMA synchronous = NORMAL")
            await db.execute("CREATE TABLE answers (id INTEGER PRIMARY KEY, learner TEXT, question TEXT, correct INT,"
                             " week TEXT, at TEXT)")
            await db.execute("CREATE TABLE scores (learner TEXT, week TEXT, points INT, PRIMARY KEY (learner, week))")
            lock = asyncio.Lock()

            async def bare(i: int) -> None:
                async with lock:  # one transaction per answer, like the bot's
                    await db.execute("BEGIN IMMEDIATE")
                    await db.execute("INSERT INTO answers (learner, question, correct, week, at) VALUES (?,?,?,?,?)",
                                     (f"U{i}", "q", 1, "2026-W49", "now"))
                    await db.execute("INSERT INTO scores VALUES (?, '2026-W49', 1) ON CONFLICT DO UPDATE"
                                     " SET points = points + 1", (f"U{i}",))
                    await db.execute("COMMIT")

            started = time.perf_counter()
            for _ in range(rounds):
                await asyncio.gather(*(bare(i) for i in range(learners)))
            baseline = len(tokens) / (time.perf_counter() - started)
    return [
        f"answers: {learners} concurrent learners x {rounds} questions, {recorded:,} recorded",
        f"  through StudyBot.handle {ours:,.0f}/s vs bare aiosqlite {baseline:,.0f}/s: ratio {ours / baseline:.2f} "
        f"{goal('>= 2,000/s', ours >= 2000)}",
    ]


def seed_answers(path: Path, week: str, answers: int, learners: int, rng: random.Random,
                 answered_at: Callable[[random.Random], str], extra: Sequence[tuple[object, ...]] = ()) -> None:
    """`answers` round answers (60% right) from `learners` learners of cohort slack/T1 written straight into
    the database, with each learner's points on the weekly and all-time boards; `extra` answers besides."""
    points = [0] * learners
    rows = []
    for n in range(answers):
        who = rng.randrange(learners)
        correct = rng.random() < 0.6
        points[who] += correct
        rows.append((who + 1, f"p{n}", "l", f"q{n % 500}", "round", int(correct), 1, int(correct), week,
                     answered_at(rng)))
    with sqlite3.connect(path) as c:
        c.execute("PRAGMA synchronous = OFF")
        c.executemany("INSERT INTO learners (id, platform, cohort, user_id, display_name, last_seen)"
                      " VALUES (?, 'slack', 'T1', ?, ?, 'x')",
                      ((i + 1, f"U{i}", f"learner {i}") for i in range(learners)))
        c.executemany("INSERT INTO answers (learner_id, prompt_id, lesson_id, question_id, mode, correct, scored,"
                      " points, week, answered_at) VALUES (?,?,?,?,?,?,?,?,?,?)", [*rows, *extra])
        c.executemany("INSERT INTO weekly_scores (learner_id, week, platform, cohort, points)"
                      " VALUES (?, ?, 'slack', 'T1', ?)", ((i + 1, week, p) for i, p in enumerate(points)))
        c.executemany("UPDATE learners SET points = ? WHERE id = ?", ((p, i + 1) for i, p in enumerate(points)))


async def bench_leaderboard(answers: int = 1_000_000, learners: int = 10_000) -> list[str]:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "board.db"
        clock = FixedClock()
        settings = Settings(db_path=path, content_dir=Path(__file__).resolve().parents[1] / "content")
        bot = await StudyBot.start(settings, clock)
        week = bot.ctx.week(Cohort("slack", "T1"))
        await bot.close()
        seed_answers(path, week, answers, learners, random.Random(3), lambda rng: "t")
        bot = await StudyBot.start(settings, clock)
        top, rank, scan = [], [], []
        for i in range(50):
            started = time.perf_counter()
            await bot.store.boards.top(Cohort("slack", "T1"), week)
            top.append((time.perf_counter() - started) * 1000)
            started = time.perf_counter()
            await bot.store.boards.standing(Actor("slack", "T1", f"U{i * 37}"), week)
            rank.append((time.perf_counter() - started) * 1000)
        for _ in range(5):  # the baseline takes seconds: five samples
            started = time.perf_counter()
            await bot.store.engine.read("SELECT learner_id, SUM(points) AS p FROM answers WHERE week = ?"
                                        " GROUP BY learner_id ORDER BY p DESC LIMIT 10", (week,))
            scan.append((time.perf_counter() - started) * 1000)
        await bot.close()
        write_library(Path(tmp) / "content", PROGRESS_LESSONS)
        with_exam, without = await bench_progress(replace(settings, content_dir=Path(tmp) / "content"), clock, path)
    med = statistics.median
    return [
        f"leaderboard: {answers:,} answers from {learners:,} learners in one week",
        f"  weekly top 10 {med(top):.2f} ms {goal('< 5 ms', med(top) < 5)}; one learner's rank {med(rank):.2f} ms "
        f"{goal('< 20 ms', med(rank) < 20)};"
        f" baseline GROUP BY over the answers {med(scan):.0f} ms (ratio {med(scan) / med(top):.0f}x)",
        f"  /progress with an exam ahead, a learner with {PROGRESS_LESSONS * QUESTIONS_PER_LESSON} review cards in "
        f"{PROGRESS_LESSONS} lessons: {med(with_exam):.1f} ms {goal('< 20 ms', med(with_exam) < 20)}; "
        f"the same /progress without an exam {med(without):.1f} ms",
    ]


PROGRESS_LESSONS, PROGRESS_LEARNERS = 10, 20  # each of these learners has a card for every question


async def bench_progress(settings: Settings, clock: FixedClock, path: Path) -> tuple[list[float], list[float]]:
    """/progress through StudyBot.handle for learners with random review histories, with the cohort's exam
    30 days ahead (every lesson's exam figures) and without; milliseconds."""
    rng, fsrs, now = random.Random(11), Scheduler(), clock.now()
    rows = []
    for who in range(1, PROGRESS_LEARNERS + 1):
        for n in range(PROGRESS_LESSONS):
            for q in range(QUESTIONS_PER_LESSON):
                card, at = Card(card_id=q, due=now), now - timedelta(days=60)
                for _ in range(rng.randrange(1, 6)):
                    at += timedelta(hours=rng.uniform(1, 240))
                    card, _ = fsrs.review_card(card, rng.choice(list(Rating)), review_datetime=min(at, now))
                rows.append((who, f"l{n}-q{q}", f"lesson-{n}", card.to_json(), card.due.isoformat()))
    with sqlite3.connect(path) as c:
        c.executemany("INSERT INTO cards (learner_id, question_id, lesson_id, state, due) VALUES (?,?,?,?,?)", rows)
    exam = {"cohorts": {"T1": {"platform": "slack", "review": {"exam": (now + timedelta(days=30)).date()}}}}
    timings: list[list[float]] = []
    for chosen in (settings.with_config(exam), settings):
        logging.disable(logging.WARNING)  # the generated lessons have no quiz.md
        bot = await StudyBot.start(chosen, clock)
        logging.disable(logging.NOTSET)
        times = []
        for who in range(PROGRESS_LEARNERS * 2):
            started = time.perf_counter()
            [reply] = await bot.handle(Command("progress", "", Actor("slack", "T1", f"U{who % PROGRESS_LEARNERS}"),
                                               Place("slack", "T1", "C1")))
            times.append((time.perf_counter() - started) * 1000)
        assert ("predicted recall on the day" in reply.text) is (chosen is not settings)
        await bot.close()
        timings.append(times)
    return timings[0], timings[1]


async def bench_teams_and_streaks(answers: int = 1_000_000, learners: int = 10_000, teams: int = 20,
                                  members: int = 50, days: int = 60) -> list[str]:
    """The team board (20 configured teams of 50) and /progress with its streak, at 1M answers spread over
    60 days; one learner answered every day for a year (a 365-day streak: one indexed probe per day)."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "teams.db"
        clock = FixedClock()
        cohort = Cohort("slack", "T1")
        roster = {f"team{t}": [f"U{t * members + m}" for m in range(members)] for t in range(teams)}
        settings = Settings(db_path=path, content_dir=Path(__file__).resolve().parents[1] / "content").with_config(
            {"cohorts": {"T1": {"platform": "slack", "teams": roster}}})
        bot = await StudyBot.start(settings, clock)
        week = bot.ctx.week(cohort)
        await bot.close()
        now = clock.now()
        daily = [(1, f"daily{d}", "l", "q0", "review", 1, 0, 0, week, iso(now - timedelta(days=d))) for d in range(365)]
        seed_answers(path, week, answers, learners, random.Random(7),
                     lambda rng: iso(now - timedelta(seconds=rng.uniform(0, days * 86400))), daily)
        bot = await StudyBot.start(settings, clock)
        board, all_time, streak_ms, progress = [], [], [], []
        for i in range(30):
            started = time.perf_counter()
            standings = await team_board(bot.ctx, cohort, week)
            board.append((time.perf_counter() - started) * 1000)
            started = time.perf_counter()
            await team_board(bot.ctx, cohort, None)
            all_time.append((time.perf_counter() - started) * 1000)
            started = time.perf_counter()
            found = await streak(bot.ctx, Actor("slack", "T1", "U0"))
            streak_ms.append((time.perf_counter() - started) * 1000)
            started = time.perf_counter()
            await bot.handle(Command("progress", "", Actor("slack", "T1", f"U{i * 37}"), Place("slack", "T1", "C1")))
            progress.append((time.perf_counter() - started) * 1000)
        await bot.close()
    assert len(standings) == teams and found is not None and found.days == 365
    med = statistics.median
    return [
        f"teams and streaks: {answers:,} answers from {learners:,} learners over {days} days,"
        f" {teams} teams of {members}",
        f"  team board this week {med(board):.2f} ms {goal('< 5 ms', med(board) < 5)}; all time {med(all_time):.2f} ms"
        f" {goal('< 5 ms', med(all_time) < 5)}",
        f"  a 365-day streak {med(streak_ms):.2f} ms {goal('< 20 ms', med(streak_ms) < 20)};"
        f" /progress with its streak {med(progress):.2f} ms {goal('< 20 ms', med(progress) < 20)}",
    ]


async def bench_due_queue(cards: int = 5_000) -> list[str]:
    """The next due card for a learner with 5,000 cards: one indexed range query."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "cards.db"
        clock = FixedClock()
        settings = Settings(db_path=path, content_dir=Path(__file__).resolve().parents[1] / "content")
        bot = await StudyBot.start(settings, clock)
        await bot.close()
        rng = random.Random(5)
        now = clock.now()
        with sqlite3.connect(path) as c:
            c.executemany("INSERT INTO learners (id, platform, cohort, user_id, last_seen)"
                          " VALUES (?, 'slack', 'T1', ?, 'x')",
                          ((i, f"U{i}") for i in range(1, 11)))

            def due() -> str:
                return (now + timedelta(hours=rng.uniform(-500, 500))).isoformat()

            c.executemany("INSERT INTO cards (learner_id, question_id, lesson_id, state, due) VALUES (?,?,?,?,?)",
                          ((i, f"q{n}", f"l{n % 10}", "{}", due()) for i in range(1, 11) for n in range(cards)))
        bot = await StudyBot.start(settings, clock)
        questions = [f"q{n}" for n in range(0, cards, 10)]  # lesson l0: a tenth of the cards
        times, scans = [], []
        for _ in range(200):
            started = time.perf_counter()
            await bot.store.cards.due(Actor("slack", "T1", "U3"), now, "l0", questions, limit=10)
            times.append((time.perf_counter() - started) * 1000)
        for _ in range(20):
            started = time.perf_counter()
            await bot.store.engine.read("SELECT question_id, state, due FROM cards WHERE learner_id = 3")
            scans.append((time.perf_counter() - started) * 1000)
        await bot.close()
    med = statistics.median
    return [f"review due queue, one learner with {cards:,} cards in 10 lessons, one lesson's: {med(times):.2f} ms"
            f" {goal('< 5 ms', med(times) < 5)}; baseline reading all their cards {med(scans):.2f} ms"]


async def main() -> list[str]:
    return (bench_startup() + await bench_answers() + await bench_leaderboard() + await bench_teams_and_streaks()
            + await bench_due_queue())


if __name__ == "__main__":
    print(*asyncio.run(main()), sep="\n")
