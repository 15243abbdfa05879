"""`studybot import` at course size: a generated 5,000-question GIFT file and a generated 10,000-card Anki
deck, each read and written as a lesson pack (staged, checked by the loader, renamed), beside the time
`studybot validate` (the loader's check) takes on the pack written; and, when STUDYBOT_QUESTION_BANKS names
the published samples, the reading of every one of them. Prints seconds; asserts that every question and
card arrived."""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path

import genanki

from bot.content.loader import check_library
from bot.interchange import readers
from bot.interchange.exporters.anki import MODELS
from bot.interchange.model import ImportRefused
from bot.interchange.pack_writer import write_pack
from bot.interchange.readers.anki import MODEL_TERM


def gift_file(path: Path, questions: int) -> Path:
    blocks = [f"::g{i}::Which number comes after {i}? {{={i + 1} ~{i + 2}#Two after. ~{i - 1}#Before it. "
              f"####{i + 1} follows {i}.}}\n" for i in range(questions)]
    path.write_text("\n".join(blocks), encoding="utf-8")
    return path


def anki_deck(path: Path, cards: int) -> Path:
    deck = genanki.Deck(1_234_567, "bench")
    for i in range(cards):
        deck.add_note(genanki.Note(MODELS[MODEL_TERM], [f"term {i}", f"the meaning of term {i}"],
                                   guid=genanki.guid_for("bench", i)))
    genanki.Package(deck).write_to_file(str(path))
    return path


def _timed(source: Path, root: Path, kind: str, expected: int) -> str:
    started = time.perf_counter()
    found = readers.read(source)
    written = write_pack(found, root / kind, root)
    imported = time.perf_counter() - started
    started = time.perf_counter()
    report = check_library(root / kind)
    validated = time.perf_counter() - started
    library = report.library
    arrived = len(library.questions) + len(library.terms)
    assert arrived == expected and not written.problems and not report.problems, (arrived, written.problems[:3])
    return (f"  {kind}: import {imported:.2f} s (read, write, its own check), studybot validate {validated:.2f} s; "
            f"{arrived:,} arrived")


def samples() -> str:
    """Every published sample read (STUDYBOT_QUESTION_BANKS), timed: items imported, skipped and files refused."""
    folder = os.environ.get("STUDYBOT_QUESTION_BANKS", "").strip()
    if not folder or not (Path(folder) / "README.md").is_file():
        return "  published samples: skipped, set STUDYBOT_QUESTION_BANKS to the question-banks folder"
    files = sorted(p for p in Path(folder).rglob("*") if p.is_file() and p.suffix not in (".json", ".md", ".xlsx")
                   and p.name != "LICENSE" and p.relative_to(folder).parts[0] not in ("gradebook", "kahoot"))
    imported = skipped = refused = 0
    started = time.perf_counter()
    for path in files:
        try:
            found = readers.read(path)
        except ImportRefused:
            refused += 1
            continue
        imported, skipped = imported + len(found.items), skipped + len(found.skipped)
    return (f"  published samples: {len(files)} files read in {time.perf_counter() - started:.2f} s: {imported} items "
            f"imported, {skipped} skipped with their reason, {refused} file(s) refused")


async def main(questions: int = 5_000, cards: int = 10_000) -> list[str]:
    with tempfile.TemporaryDirectory(prefix="studybot-bench-import-") as folder:
        root = Path(folder)
        gift = gift_file(root / "bank.gift", questions)
        deck = anki_deck(root / "deck.apkg", cards)
        content = root / "content"
        content.mkdir()
        return [f"import: a generated {questions:,}-question GIFT file and a {cards:,}-card Anki deck",
                _timed(gift, content, "gift", questions), _timed(deck, content, "anki", cards), samples()]
