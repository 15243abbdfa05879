"""Logging: one line per handled event; no token, secret or answer text at any level.

Each platform adds the shapes of its credentials (masked wherever they appear) and the
loggers of its SDK that print request bodies (held at INFO or above)."""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable
from typing import TextIO

GENERIC_SECRETS = (r"(?i:bearer|bot)\s+[A-Za-z0-9._-]{16,}",)  # HTTP authorization values
GENERIC_NOISY = ("aiohttp.access", "aiosqlite", "asyncio")


class Redact(logging.Filter):
    """Masks every credential-shaped string in a record; the line is kept."""

    def __init__(self, patterns: Iterable[str]) -> None:
        super().__init__()
        self._secrets = re.compile("|".join(f"(?:{p})" for p in (*GENERIC_SECRETS, *patterns)))

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        masked = self._secrets.sub("<secret>", message)
        if masked != message:
            record.msg, record.args = masked, None
        return True


def configure(level: str = "INFO", stream: TextIO | None = None, *, secrets: Iterable[str] = (),
              noisy: Iterable[str] = ()) -> None:
    """Log to stderr (or `stream`) at `level`; loggers that print bodies stay at INFO or above."""
    handler = logging.StreamHandler(stream)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    handler.addFilter(Redact(secrets))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
    for name in (*GENERIC_NOISY, *noisy):
        logging.getLogger(name).setLevel(max(logging.INFO, logging.getLevelName(level)))
