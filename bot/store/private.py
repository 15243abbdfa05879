"""Files only their owner may read (mode 0600): the database, its pid file and backups hold bot
tokens and learners' answers."""

from __future__ import annotations

import os
from pathlib import Path

OWNER_ONLY = 0o600


def create_private(path: Path, *, exclusive: bool = True) -> int:
    """An open, writable descriptor of a new file at `path` that only its owner may read or write,
    whatever the umask; FileExistsError when `exclusive` and it exists (nothing is replaced)."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_CLOEXEC | (os.O_EXCL if exclusive else 0)
    fd = os.open(path, flags, OWNER_ONLY)
    try:
        os.fchmod(fd, OWNER_ONLY)  # an existing file (not exclusive) is made private too
    except OSError:
        os.close(fd)
        raise
    return fd


def touch_private(path: Path) -> None:
    """Create `path` empty with mode 0600 if it does not exist (SQLite then opens it as a new
    database, and gives its -wal and -shm files the same mode); an existing file is left as it is."""
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, OWNER_ONLY))
    except FileExistsError:
        pass
