"""Reading files that strangers wrote: bounded sizes, one known text encoding, checked zip members,
and XML parsed by defusedxml (no entity expansion, no external entities). Every refusal is an
ImportRefused naming the file and what is wrong."""

from __future__ import annotations

import codecs
import stat
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path, PurePosixPath
from typing import Any

import defusedxml.ElementTree as SafeET
from defusedxml import DefusedXmlException

from bot.interchange.model import ImportRefused

MAX_FILE = 50_000_000  # bytes of one input file
MAX_LINE = 1_000_000  # characters of one line of a text format
MAX_UNZIPPED = 200_000_000  # bytes a package may unpack to, in all
MAX_RATIO = 200  # how many times its compressed size one member may unpack to
MAX_MEMBERS = 20_000


def read_bytes(path: Path, limit: int = MAX_FILE) -> bytes:
    """A regular file's bytes, at most `limit` of them."""
    try:
        info = path.stat()
    except OSError as exc:
        raise ImportRefused(f"{path}: cannot be read ({exc.strerror})") from exc
    if not stat.S_ISREG(info.st_mode):
        raise ImportRefused(f"{path}: not a regular file")
    if info.st_size > limit:
        raise ImportRefused(f"{path}: {info.st_size:,} bytes; files of at most {limit:,} bytes are imported")
    with path.open("rb") as handle:
        return handle.read(limit + 1)[:limit]


def decode(data: bytes, name: str, *, max_line: int = MAX_LINE) -> str:
    """Text in UTF-8 (with or without a byte-order mark) or UTF-16 with its mark; anything else is refused
    rather than guessed. A line longer than `max_line` characters is refused too."""
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        encoding = "utf-16"
    else:
        encoding = "utf-8-sig"
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise ImportRefused(f"{name}: line {line}: not UTF-8 text (byte {exc.start}); save it as UTF-8 and import "
                            "it again") from exc
    if "\x00" in text:
        raise ImportRefused(f"{name}: holds NUL characters: not a text file of this format")
    for number, row in enumerate(text.splitlines(), start=1):
        if len(row) > max_line:
            raise ImportRefused(f"{name}: line {number}: {len(row):,} characters long; lines of at most "
                                f"{max_line:,} are read")
    return text


def parse_xml(data: bytes | str, name: str) -> Any:
    """An XML document's root element, parsed without expanding entities or fetching anything."""
    try:
        return SafeET.fromstring(data, forbid_dtd=False, forbid_entities=True, forbid_external=True)
    except DefusedXmlException as exc:
        raise ImportRefused(f"{name}: refused: the XML declares entities ({type(exc).__name__}), which can "
                            "expand without bound") from exc
    except SafeET.ParseError as exc:
        raise ImportRefused(f"{name}: not well-formed XML ({exc})") from exc


def _checked_member(info: zipfile.ZipInfo, name: str) -> None:
    member = info.filename
    parts = PurePosixPath(member.replace("\\", "/")).parts
    if member.startswith(("/", "\\")) or ".." in parts or (parts and ":" in parts[0]):
        raise ImportRefused(f"{name}: refused: the member '{member[:80]}' names a path outside the package")
    if info.file_size > MAX_RATIO * max(info.compress_size, 1) and info.file_size > 1_000_000:
        raise ImportRefused(f"{name}: refused: the member '{member[:80]}' unpacks to {info.file_size:,} bytes from "
                            f"{info.compress_size:,} (a zip bomb?)")


class Package:
    """A zip file's members, read only after every member name and size was checked."""

    def __init__(self, archive: zipfile.ZipFile, name: str) -> None:
        self.archive = archive
        self.name = name

    def names(self) -> list[str]:
        return [i.filename for i in self.archive.infolist() if not i.is_dir()]

    def read(self, member: str) -> bytes:
        info = self.archive.getinfo(member)
        with self.archive.open(info) as handle:  # never more than the header says, whatever the stream holds
            data = handle.read(info.file_size + 1)
        if len(data) > info.file_size:
            raise ImportRefused(f"{self.name}: refused: the member '{member[:80]}' holds more than its header says")
        return data


@contextmanager
def open_package(path: Path) -> Iterator[Package]:
    """A zip package whose members all have safe names and bounded sizes (in all and each by its ratio)."""
    read_bytes(path, MAX_FILE)  # a regular file of bounded size
    try:
        archive = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError) as exc:
        raise ImportRefused(f"{path}: not a zip package ({exc})") from exc
    with archive:
        infos = archive.infolist()
        if len(infos) > MAX_MEMBERS:
            raise ImportRefused(f"{path}: refused: {len(infos):,} members; packages of at most {MAX_MEMBERS:,} "
                                "are read")
        total = 0
        for info in infos:
            _checked_member(info, str(path))
            total += info.file_size
        if total > MAX_UNZIPPED:
            raise ImportRefused(f"{path}: refused: unpacks to {total:,} bytes; at most {MAX_UNZIPPED:,} are read "
                                "(a zip bomb?)")
        yield Package(archive, str(path))
