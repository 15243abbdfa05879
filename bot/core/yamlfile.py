"""Reading the YAML files people write (lesson packs, the config) without hanging or crashing.

Only a regular file is read (a FIFO would block, /dev/zero never ends), at most `MAX_BYTES`
of it, as UTF-8; anchors and aliases are refused, since a few lines of them can expand into
gigabytes ("billion laughs"), and so is a key given twice in one mapping, whose second value would
silently replace the first. Each refusal is a `FileRefused` whose message says what to do.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

import yaml

MAX_BYTES = 2_000_000
Loader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # SafeLoader without libyaml


class _Loader(Loader):  # type: ignore[misc,valid-type]
    """The safe loader, reading a date that is no day (an unquoted 2027-02-30) as the text written, for
    the checks that read the value to say which key is wrong, instead of a ValueError."""


def _timestamp(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> object:
    try:
        return loader.construct_yaml_timestamp(node)
    except ValueError:
        return loader.construct_scalar(node)


_Loader.add_constructor("tag:yaml.org,2002:timestamp", _timestamp)


class FileRefused(Exception):
    """A file that is not read, and why; `line` is 1-based (1 when the whole file is at fault)."""

    def __init__(self, message: str, line: int = 1) -> None:
        super().__init__(message)
        self.message = message
        self.line = line


def inside(path: Path, root: Path) -> bool:
    """Whether `path`, with every link followed, is `root` or under it."""
    return path.resolve().is_relative_to(root.resolve())


def read_text(path: Path, *, root: Path | None = None, limit: int = MAX_BYTES) -> str:
    """The file's text; FileRefused when it is not a regular UTF-8 file of at most `limit` bytes,
    or, with `root`, when a link leads out of that folder."""
    if root is not None and not inside(path, root):
        raise FileRefused(f"is a link to {path.resolve()}, outside {root}; copy the file into {root} instead")
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)  # a FIFO opens without waiting
    except OSError as exc:
        raise FileRefused(f"cannot read it: {exc.strerror}") from exc
    with os.fdopen(fd, "rb") as file:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise FileRefused("is not a regular file (a device, pipe or socket); make it a plain text file")
        data = file.read(limit + 1)
    if len(data) > limit:
        raise FileRefused(f"is larger than {limit / 1e6:g} MB; split it into smaller files")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise FileRefused(f"is not UTF-8 text (byte 0x{data[exc.start]:02x} on line {line}); "
                          "save it as UTF-8", line) from exc


class _OneOfEachKey(_Loader):
    """The safe loader (impossible dates kept as text), refusing a key given twice in one mapping."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        first: dict[str, int] = {}
        for key, _ in node.value:
            if isinstance(key, yaml.ScalarNode):
                line = key.start_mark.line + 1
                if key.value in first:
                    raise FileRefused(f"'{key.value[:40]}' is given twice in one mapping (first on line "
                                      f"{first[key.value]}), and the second would replace the first; keep one", line)
                first[key.value] = line
        return super().construct_mapping(node, deep)


def load(text: str) -> Any:
    """The YAML document as plain data (yaml.YAMLError when it is not YAML); FileRefused for an
    anchor or alias, or a key given twice in one mapping. Text without '&' or '*' cannot hold an
    anchor, so only such text is scanned for one."""
    if "&" in text or "*" in text:
        for event in yaml.parse(text, Loader=Loader):
            if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None):
                raise FileRefused("uses a YAML anchor or alias (&name, *name), which studybot does not read; "
                                  "write the value out in full", event.start_mark.line + 1 if event.start_mark else 1)
    return yaml.load(text, Loader=_OneOfEachKey)  # noqa: S506 (a safe loader)
