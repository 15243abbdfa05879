"""The neutral items every reader returns and the pack writer takes: nothing here knows a format."""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass, field


def printable(text: str, limit: int = 400) -> str:
    """Text from a stranger's file as one safe line: control characters (terminal escapes, line breaks)
    become spaces, and it is cut at `limit` characters."""
    cleaned = "".join(" " if unicodedata.category(ch) == "Cc" else ch for ch in text)
    line = " ".join(cleaned.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


IMPORT_FORMATS = ("gift", "moodle-xml", "anki", "qti", "cards")
EXPORT_FORMATS = ("anki", "gift", "moodle-xml", "gradebook")
CARD_TARGETS = ("glossary", "practice")  # what flashcards become


class ImportRefused(Exception):
    """A file that is not imported, with what is wrong with it (one line, naming the file)."""


@dataclass(frozen=True)
class Choice:
    text: str
    correct: bool
    feedback: str = ""  # why this choice is wrong (or a word on the right one)


@dataclass(frozen=True)
class Item:
    """One question or card of a source file.

    kind: `mc` (choices, one correct), `short` (accepted answers), `order` (steps in their right
    order) or `card` (a flashcard: `prompt` is the front, `answers[0]` the back)."""

    kind: str
    source: str  # the file it came from, as the report names it
    ref: str  # the item in that file: its name, ident or note id, else its position
    prompt: str
    choices: tuple[Choice, ...] = ()
    answers: tuple[str, ...] = ()
    explanation: str = ""  # general feedback
    title: str = ""  # the source's name for it, if any


@dataclass(frozen=True)
class Skipped:
    source: str
    ref: str
    reason: str

    def __str__(self) -> str:
        return printable(f"{self.source}: {self.ref}: skipped: {self.reason}")


@dataclass
class Found:
    """What a reader found in one file: items, items skipped with their reason, and media named."""

    items: list[Item] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    media: list[str] = field(default_factory=list)

    def skip(self, source: str, ref: str, reason: str) -> None:
        self.skipped.append(Skipped(source, ref, reason))

    def extend(self, other: Found) -> None:
        self.items += other.items
        self.skipped += other.skipped
        self.media += [m for m in other.media if m not in self.media]

    @property
    def accounted(self) -> int:
        return len(self.items) + len(self.skipped)
