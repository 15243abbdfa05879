"""The benchmarks still run against the current schema and code, at a size that takes a second; the
figures themselves are `make bench`'s, never asserted here."""

from __future__ import annotations

import sys

from support import REPO

if str(REPO) not in sys.path:  # the benchmarks package lives beside bot/, outside the installed packages
    sys.path.insert(0, str(REPO))

from benchmarks import bench_core  # noqa: E402


async def test_the_core_benchmarks_run_and_record_what_they_time() -> None:
    answers = await bench_core.bench_answers(learners=5, rounds=2)
    assert answers[0] == "answers: 5 concurrent learners x 2 questions, 10 recorded"
    board = await bench_core.bench_leaderboard(answers=200, learners=20)
    assert board[0] == "leaderboard: 200 answers from 20 learners in one week"
    teams = await bench_core.bench_teams_and_streaks(answers=300, learners=40, teams=4, members=5, days=3)
    assert teams[0] == "teams and streaks: 300 answers from 40 learners over 3 days, 4 teams of 5"
    [due] = await bench_core.bench_due_queue(cards=50)
    assert due.startswith("review due queue, one learner with 50 cards in 10 lessons")


async def test_the_scale_benchmark_runs_tiny_and_checks_what_it_stored(monkeypatch) -> None:
    from benchmarks import bench_scale  # noqa: PLC0415

    monkeypatch.delenv("STUDYBOT_TEST_DATABASE_URL", raising=False)  # its PostgreSQL rows: one line each
    lines = await bench_scale.main(learners=(20,), writes=20)
    assert lines[1].startswith("  SQLite, 1 process          L=   20: ack p50")
    assert lines[1].endswith("stored = acknowledged")
    assert lines[2].startswith("  PostgreSQL, 1 and 2 processes: skipped, no PostgreSQL: set STUDYBOT_TEST_DATABASE")
    assert lines[3].startswith("PostgreSQL commit throughput: skipped, no PostgreSQL")


def test_a_figure_that_misses_its_goal_says_fail() -> None:
    from benchmarks import goal

    assert goal("< 5 ms", True) == "(goal < 5 ms)"
    assert goal("<= 1.5x", False) == "(goal <= 1.5x) FAIL: misses its goal"


async def test_the_import_benchmark_runs_tiny_and_checks_every_item_arrived(monkeypatch) -> None:
    from benchmarks import bench_interchange  # noqa: PLC0415

    monkeypatch.delenv("STUDYBOT_QUESTION_BANKS", raising=False)
    lines = await bench_interchange.main(questions=20, cards=30)
    assert lines[0] == "import: a generated 20-question GIFT file and a 30-card Anki deck"
    assert lines[1].startswith("  gift: import ") and lines[1].endswith("20 arrived")
    assert lines[2].startswith("  anki: import ") and lines[2].endswith("30 arrived")
    assert lines[3] == "  published samples: skipped, set STUDYBOT_QUESTION_BANKS to the question-banks folder"
