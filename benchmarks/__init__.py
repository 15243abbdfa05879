"""The benchmarks of `make bench`. Each figure is printed beside its goal; one that misses its goal
says FAIL on its line, so a slow run is seen, not read past."""


def goal(text: str, met: bool) -> str:
    """`(goal …)` as printed beside a figure: followed by FAIL when the figure misses it."""
    return f"(goal {text})" + ("" if met else " FAIL: misses its goal")
