"""Logging: one line per handled event; no token, secret or answer text at any level."""

from __future__ import annotations

import logging
import re
from typing import TextIO

# Credentials as the platforms shape them; a line carrying one is masked, not dropped.
_SECRETS = re.compile(
    r"(xox[abposr]-[A-Za-z0-9-]+|xapp-[A-Za-z0-9-]+"
    r"|[MNO][A-Za-z0-9_-]{20,}\.[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{20,}"
    r"|(?i:bearer|bot)\s+[A-Za-z0-9._-]{16,})"
)
# SDK loggers that print whole request and response bodies (answers, tokens) at DEBUG.
_CHATTY = ("slack_bolt", "slack_sdk", "discord.http", "discord.gateway", "discord.webhook",
           "discord.client", "discord.state", "aiohttp.access", "aiosqlite", "asyncio")


class Redact(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        masked = _SECRETS.sub("<secret>", message)
        if masked != message:
            record.msg, record.args = masked, None
        return True


def configure(level: str = "INFO", stream: TextIO | None = None) -> None:
    """Log to stderr (or `stream`) at `level`; SDK loggers that print bodies stay at INFO or above."""
    handler = logging.StreamHandler(stream)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    handler.addFilter(Redact())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
    for name in _CHATTY:
        logging.getLogger(name).setLevel(max(logging.INFO, logging.getLevelName(level)))
