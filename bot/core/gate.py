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
        self._passing = _Passing(self)

    def event(self) -> _Passing:
        """Held while one event is handled (a plain object, not a generator: one per event)."""
        return self._passing

    async def _enter(self) -> None:
        if not self._open.is_set():
            await self._open.wait()
        self._in_flight += 1
        self._idle.clear()

    def _leave(self) -> None:
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


class _Passing:
    """`Gate.event`'s context: one event passing the gate."""

    __slots__ = ("_gate",)

    def __init__(self, gate: Gate) -> None:
        self._gate = gate

    async def __aenter__(self) -> None:
        await self._gate._enter()

    async def __aexit__(self, *exc: object) -> None:
        self._gate._leave()
