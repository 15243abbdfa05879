"""A platform for the runner's tests, registered like Slack and Discord, whose adapter does what
it is told at each start(): serve, hang (connecting for ever), be unreachable or reject its token.

In-process tests register `platform(...)` themselves; `python fake_platform.py ARGS` runs the
real `studybot` CLI with only this platform registered, told by FAKE_PLATFORM (one behaviour,
or several separated by commas for successive attempts) and FAKE_MARKER (a file each start()
appends its behaviour to, so that a test can tell which state the process is in)."""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from adapters.platform import Platform
from bot.core.errors import PlatformRejected, PlatformUnreachable
from bot.core.messages import MessageRef, Place, Reply

REJECTED = "FAKE_PLATFORM was refused by the fake platform (invalid_auth); set it to a valid token"


@dataclass
class FakeSettings:
    behaviours: list[str]  # one per attempt; the last one repeats
    marker: Path | None = None
    made: list[FakeAdapter] = field(default_factory=list)  # every adapter built, in order


class FakeAdapter:
    platform = "fake"

    def __init__(self, bot: Any, settings: FakeSettings) -> None:
        self.settings = settings
        self.started = self.closed = False
        self.sent: list[Reply] = []
        settings.made.append(self)

    async def start(self) -> None:
        behaviours = self.settings.behaviours
        what = behaviours.pop(0) if len(behaviours) > 1 else behaviours[0]
        if self.settings.marker is not None:
            with self.settings.marker.open("a") as marker:
                marker.write(what + "\n")
        if what == "unreachable":
            raise PlatformUnreachable("connection refused by 127.0.0.1:9")
        if what == "reject":
            raise PlatformRejected(REJECTED)
        if what == "hang":
            await asyncio.Event().wait()
        self.started = True

    async def close(self) -> None:
        self.closed = True

    async def send(self, reply: Reply) -> MessageRef | None:
        self.sent.append(reply)
        return None

    async def edit(self, ref: MessageRef, reply: Reply) -> None:
        self.sent.append(reply)

    async def channel_problem(self, place: Place) -> str | None:
        return "no such channel" if (place.channel_id or "").startswith("GONE") else None


def platform(name: str = "fake") -> Platform:
    def read(environ: Mapping[str, str], settings: Any) -> FakeSettings | None:
        told = environ.get("FAKE_PLATFORM", "")
        marker = environ.get("FAKE_MARKER")
        return FakeSettings(told.split(","), Path(marker) if marker else None) if told else None

    return Platform(name=name, variables=("FAKE_PLATFORM", "FAKE_MARKER"), secrets=(), noisy_loggers=(), sections=(),
                    read=read, configured=lambda s: s is not None, needs="FAKE_PLATFORM",
                    adapter=f"{__name__}:FakeAdapter")


if __name__ == "__main__":
    from adapters import cli, platforms

    platforms.PLATFORMS = (platform(),)
    sys.argv[0] = "studybot"
    os.environ.setdefault("PYTHONDONTWRITEBYTECODE", "1")
    cli.main(sys.argv[1:])
