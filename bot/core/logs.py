"""Logging: one line per handled event; no token, secret or answer text at any level.

Each platform adds the shapes of its credentials (masked wherever they appear) and the
loggers of its SDK that print request bodies (held at INFO or above). The default format is
for people; `json` (STUDYBOT_LOG_FORMAT) gives one JSON object per line for log collectors,
with the fields a record carries (`extra=`) beside the message."""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import TextIO

from bot.core.messages import Command, Event, TimerFired

GENERIC_SECRETS = (r"(?i:bearer|bot)\s+[A-Za-z0-9._-]{16,}",)  # HTTP authorization values
GENERIC_NOISY = ("aiohttp.access", "aiosqlite", "asyncio")
FIELDS = ("platform", "cohort", "command", "outcome", "latency_ms")  # passed by callers as extra=
TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


def event_fields(event: Event, outcome: str, seconds: float) -> dict[str, object]:
    """The structured fields of a handled event's log line: never a token or a user's text."""
    if isinstance(event, TimerFired):
        return {"command": f"timer:{event.key.kind}", "outcome": outcome,
                "latency_ms": round(seconds * 1000, 1)}
    what = f"/{event.name[:20]}" if isinstance(event, Command) else type(event).__name__
    return {"platform": event.actor.platform, "cohort": event.actor.cohort, "command": what, "outcome": outcome,
            "latency_ms": round(seconds * 1000, 1)}


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

    def mask(self, text: str) -> str:
        return self._secrets.sub("<secret>", text)


class JsonFormatter(logging.Formatter):
    """One JSON object per record: time, level, logger, event (the message) and the known fields."""

    def __init__(self, redact: Redact) -> None:
        super().__init__()
        self._redact = redact

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, object] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "event": record.getMessage(),
        }
        line.update((name, getattr(record, name)) for name in FIELDS if hasattr(record, name))
        if record.exc_info:
            line["error"] = self._redact.mask(self.formatException(record.exc_info))
        return json.dumps(line, ensure_ascii=False, default=str)


def configure(level: str = "INFO", stream: TextIO | None = None, *, secrets: Iterable[str] = (),
              noisy: Iterable[str] = (), fmt: str = "text") -> None:
    """Log to stderr (or `stream`) at `level`, as text or JSON lines; loggers that print bodies
    stay at INFO or above."""
    handler = logging.StreamHandler(stream)
    redact = Redact(secrets)
    handler.setFormatter(JsonFormatter(redact) if fmt == "json" else logging.Formatter(TEXT_FORMAT))
    handler.addFilter(redact)
    logging.captureWarnings(fmt == "json")  # a warning printed by itself would not be a JSON line
    logging._srcfile = None  # neither format shows where a line was logged: skip finding it (logging's HOWTO)
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
    for name in (*GENERIC_NOISY, *noisy):
        logging.getLogger(name).setLevel(max(logging.INFO, logging.getLevelName(level)))
