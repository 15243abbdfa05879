"""A gate between events: any number pass at once, and a change of what they all read (the lesson
library, on reload) waits until none is in flight and holds the next ones back until it is done."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager


class Gate:
    def __init__(self) -> None:
        self._open = asyncio.Event()
        self._open.set()
        self._idle = asyncio.Event()
        self._idle.set()
        self._in_flight = 0
        self._changing = asyncio.Lock()

    @asynccontextmanager
    async def event(self) -> AsyncIterator[None]:
        """Held while one event is handled."""
        await self._open.wait()
        self._in_flight += 1
        self._idle.clear()
        try:
            yield
        finally:
            self._in_flight -= 1
            if not self._in_flight:
                self._idle.set()

    @asynccontextmanager
    async def change(self) -> AsyncIterator[None]:
        """Held while what events read changes: between two events, never during one."""
        async with self._changing:
            self._open.clear()
            try:
                await self._idle.wait()
                yield
            finally:
                self._open.set()
