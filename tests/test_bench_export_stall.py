"""The export's stall benchmark still runs, tiny (its figure is `make bench`'s, never asserted here)."""

from __future__ import annotations

import sys

from support import REPO

if str(REPO) not in sys.path:  # the benchmarks package lives beside bot/, outside the installed packages
    sys.path.insert(0, str(REPO))

from benchmarks import bench_insights  # noqa: E402


async def test_the_export_stall_benchmark_runs_tiny_and_exports_every_answer() -> None:
    [line] = await bench_insights.bench_export_stall(learners=20)
    assert line.startswith("  /insights export of 2,000 answers (20 learners)")
    assert "the event loop's longest stall" in line
