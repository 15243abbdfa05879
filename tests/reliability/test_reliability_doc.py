"""docs/reliability.md is built from the RELIABILITY lists of the tests in this folder, so the
table cannot drift from what the tests try. `make reliability-doc` rewrites it."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

HERE = Path(__file__).resolve().parent
DOC = HERE.parents[1] / "docs" / "reliability.md"
INTRO = """# Reliability: what was tried and what held

Every row is a test under `tests/` (mostly `tests/reliability/`) that runs with `make test`;
the table is generated from those tests' own `RELIABILITY` lists and checked by
`tests/reliability/test_reliability_doc.py`, so it cannot drift. `make reliability-doc` rewrites it.
"""


def rows() -> list[tuple[str, str, str, str]]:
    found = []
    for path in sorted(HERE.parent.rglob("test_*.py"), key=lambda p: p.name):
        if path == Path(__file__).resolve() or "RELIABILITY = [" not in path.read_text(encoding="utf-8"):
            continue
        spec = importlib.util.spec_from_file_location(f"reliability_{path.stem}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        for what, cases, held in getattr(module, "RELIABILITY", []):
            found.append((path.name, what, str(cases), held))
    return found


def render() -> str:
    lines = [INTRO, "| test file | what was tried | cases | what held |", "|---|---|---|---|"]
    lines += [f"| `{f}` | {w} | {c} | {h} |" for f, w, c, h in rows()]
    return "\n".join(lines) + "\n"


def test_every_reliability_module_reports_what_it_tried() -> None:
    for path in HERE.glob("test_*.py"):
        if path.name != Path(__file__).name:
            assert "RELIABILITY = [" in path.read_text(), f"{path.name} has no RELIABILITY list"


def test_reliability_doc_matches_the_tests() -> None:
    expected = render()
    if os.environ.get("STUDYBOT_WRITE_DOCS"):
        DOC.write_text(expected, encoding="utf-8")
    assert DOC.read_text(encoding="utf-8") == expected, "docs/reliability.md is stale: run `make reliability-doc`"
