"""The benchmarks still run against the current schema and code, at a size that takes a second; the
figures themselves are `make bench`'s, never asserted here."""

from __future__ import annotations

import os
import sys
import time

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
    assert lines[1].startswith("  bare aiohttp (the floor)   L=   20: CPU per press ")
    assert lines[1].endswith("20/20 acked, 0 refused")
    assert lines[2].startswith("  SQLite, 1 process          L=   20: ack p50")
    assert lines[2].endswith("20/20 acked within 3 s, 0 refused; stored = acknowledged")
    assert " CPU per press " in lines[3] and "x the floor's " in lines[3]
    assert lines[4].startswith("  PostgreSQL, 1 and 2 processes: skipped, no PostgreSQL: set STUDYBOT_TEST_DATABASE")
    assert lines[5].startswith("PostgreSQL commit throughput: skipped, no PostgreSQL")


def test_the_cpu_of_a_process_is_read_from_proc() -> None:
    from benchmarks.bench_scale import cpu_seconds  # noqa: PLC0415

    before = cpu_seconds([os.getpid()])
    deadline = time.process_time() + 0.05
    while time.process_time() < deadline:  # spend some CPU
        pass
    assert cpu_seconds([os.getpid()]) > before
    assert cpu_seconds([2**22 + 1]) == 0.0  # a process that is not there costs nothing


async def test_the_slack_benchmark_runs_tiny_against_its_three_servers() -> None:
    from benchmarks import bench_slack  # noqa: PLC0415

    lines = await bench_slack.main(rounds=1, requests=3, warmup=1)
    assert lines[0].startswith("slack /glossary round trips: 3 signed requests in sequence per server and round")
    assert [line.split(":")[0].strip() for line in lines[1:]] == [
        "fair peer (aiohttp, same work)", "slack-bolt, the same work", "bare slack-bolt, a fixed text",
        "studybot SlackAdapter", "studybot / fair peer", "studybot / slack-bolt, same work",
        "studybot / bare slack-bolt"]
    assert "(goal >= 0.95)" in lines[5]


async def test_the_discord_benchmark_runs_tiny_against_its_three_bots() -> None:
    from benchmarks import bench_discord  # noqa: PLC0415

    lines = await bench_discord.main(rounds=1, interactions=3, warmup=1)
    assert lines[0].startswith("discord /glossary, dispatch to callback: 3 interactions in sequence per bot")
    assert [line.split(":")[0].strip() for line in lines[1:]] == [
        "fair peer (discord.py, same work)", "bare discord.py, a fixed text", "studybot DiscordAdapter",
        "studybot / fair peer", "studybot / bare discord.py"]
    assert "(goal >= 0.95)" in lines[4]


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
