"""Which reader reads a file: by its extension, else by its first bytes."""

from __future__ import annotations

import re
from pathlib import Path

from bot.interchange.model import IMPORT_FORMATS, Found, ImportRefused
from bot.interchange.readers import anki, flashcards, gift, moodle_xml, qti
from bot.interchange.safety import decode, read_bytes

FORMATS = IMPORT_FORMATS


def detect(path: Path, head: bytes) -> str:
    """The format of a file, from its name and its first bytes."""
    name = path.name.lower()
    if name.endswith((".apkg", ".colpkg")):
        return "anki"
    if head.startswith(b"PK"):
        return "qti"  # a zip that is not an Anki package: a QTI content package
    if name.endswith((".gift", ".gift.txt")):
        return "gift"
    if name.endswith((".csv", ".tsv")):
        return "cards"
    stripped = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    if stripped.startswith(b"<"):
        return "moodle-xml" if re.search(rb"<quiz\s*>", head) else "qti"
    if name.endswith(".qti"):
        return "qti"
    text = head.decode("utf-8", "replace")
    if "{" in text and ("}" in text or "::" in text):
        return "gift"
    return "cards"


def read(path: Path, fmt: str | None = None) -> Found:
    """A file's items, by the format given or found; ImportRefused names the file and what is wrong."""
    name = str(path)
    data = read_bytes(path)
    fmt = fmt or detect(path, data[:4096])
    if fmt == "anki":
        return anki.read(path, name)
    if fmt == "qti":
        return qti.read_file(path, name)
    if fmt == "moodle-xml":
        return moodle_xml.read(data, name)
    text = decode(data, name)
    if fmt == "gift":
        return gift.read(text, name)
    if fmt == "cards":
        return flashcards.read(text, name)
    raise ImportRefused(f"{name}: unknown format '{fmt}'; use one of {', '.join(FORMATS)}")

