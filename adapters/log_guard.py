"""Log hygiene at the platform edge: no request body in any line, no line forged by input, and
refused requests logged at a bounded rate (a flood of bad requests cannot grow the log)."""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable

_CONTROL = re.compile(r"[\x00-\x1f\x7f\u0085\u2028\u2029]")
# Where an SDK's message starts quoting a request: "(body: {...})", "Request body: ...", "({...})".
_QUOTED = re.compile(r"\(|\{|\b[Bb]ody:")
WITHHELD = "[request details withheld]"


def escape(text: str) -> str:
    """Line breaks and other control characters as visible escapes, so that no input starts a new line."""
    return _CONTROL.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), text)


def clean(value: object, limit: int = 60) -> str:
    """A value from the wire, fit for a log line: escaped and cut."""
    return escape(str(value)[:limit])


class NoBodies(logging.Filter):
    """Withholds whatever an SDK's message quotes of a request (slack-bolt puts whole bodies in
    some INFO and WARNING lines) and escapes the rest onto one line."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        quoted = _QUOTED.search(message)
        safe = message if quoted is None else message[: quoted.start()].rstrip(" :,") + " " + WITHHELD
        safe = escape(safe)
        if safe != message:
            record.msg, record.args = safe, None
        return True


class Unsaid(logging.Filter):
    """Drops an SDK's start-up lines that are true of every run and ask nothing of the operator."""

    def __init__(self, *messages: str) -> None:
        super().__init__()
        self.messages = frozenset(messages)

    def filter(self, record: logging.LogRecord) -> bool:
        return record.getMessage() not in self.messages


class RefusalLog:
    """Logs refused requests at most once per `every` seconds; the next line counts the ones left out."""

    def __init__(self, logger: logging.Logger, every: float = 60.0, clock: Callable[[], float] = time.monotonic,
                 verb: str = "refused") -> None:
        self.logger = logger
        self.verb = verb
        self.every = every
        self.clock = clock
        self._next = 0.0
        self._left_out = 0

    def __call__(self, why: str) -> None:
        now = self.clock()
        if now < self._next:
            self._left_out += 1
            return
        more = f" ({self._left_out} more {self.verb} since the last such line)" if self._left_out else ""
        self.logger.warning("%s a request: %s%s", self.verb, escape(why), more)
        self._next, self._left_out = now + self.every, 0
