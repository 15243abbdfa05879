"""What every stand-in shares: an aiohttp app served on 127.0.0.1 at a free port, its websockets
closed and the server stopped on close, and `async with` for both."""

from __future__ import annotations

from typing import Any, Self

from aiohttp import WSCloseCode, web


class LoopbackServer:
    """Subclasses build their app in `start()`, hand it to `serve()`, and add their sockets to `_sockets`."""

    def __init__(self) -> None:
        self._sockets: set[web.WebSocketResponse] = set()
        self._runner: web.AppRunner | None = None

    async def start(self) -> Self:
        raise NotImplementedError

    async def serve(self, app: web.Application) -> int:
        """Serve the app on 127.0.0.1 at a free port; returns the port."""
        self._runner = web.AppRunner(app, shutdown_timeout=1.0)
        await self._runner.setup()
        await web.TCPSite(self._runner, "127.0.0.1", 0).start()
        return int(self._runner.addresses[0][1])

    async def close(self) -> None:
        """Close open websockets and stop the server."""
        for ws in list(self._sockets):
            await ws.close(code=WSCloseCode.GOING_AWAY)
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def __aenter__(self) -> Self:
        return await self.start()

    async def __aexit__(self, *exc: Any) -> None:
        await self.close()
