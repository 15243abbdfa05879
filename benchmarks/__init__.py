"""The benchmarks of `make bench`. Each figure is printed beside its goal; one that misses its goal
says FAIL on its line, so a slow run is seen, not read past."""

from __future__ import annotations

import logging
import os
import statistics
from collections.abc import Iterator, Sequence
from contextlib import contextmanager


def goal(text: str, met: bool) -> str:
    """`(goal …)` as printed beside a figure: followed by FAIL when the figure misses it."""
    return f"(goal {text})" + ("" if met else " FAIL: misses its goal")


def spread(values: Sequence[float], fmt: str = ".2f") -> str:
    """`median (min-max)` of a benchmark's rounds."""
    return f"{statistics.median(values):{fmt}} ({min(values):{fmt}}-{max(values):{fmt}})"


@contextmanager
def logging_as_a_service() -> Iterator[None]:
    """The root logger at INFO in `studybot run`'s text format, written to the null device, as a
    service logs (a line per handled event); the logging before is restored after."""
    from bot.core.logs import configure  # noqa: PLC0415

    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    with open(os.devnull, "w") as nowhere:
        configure("INFO", nowhere)
        try:
            yield
        finally:
            root.handlers[:] = handlers
            root.setLevel(level)
