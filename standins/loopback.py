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

    async def start(self, port: int = 0) -> Self:
        raise NotImplementedError

    async def serve(self, app: web.Application, port: int = 0) -> int:
        """Serve the app on 127.0.0.1 at `port` (0: a free one); returns the port."""
        self._runner = web.AppRunner(app, shutdown_timeout=1.0)
        await self._runner.setup()
        await web.TCPSite(self._runner, "127.0.0.1", port).start()
        return int(self._runner.addresses[0][1])

    async def restart(self) -> None:
        """Stop serving, closing every connection, and serve again on the same port (what is recorded
        is kept): the service restarting, as its clients see it."""
        assert self._runner is not None
        port = int(self._runner.addresses[0][1])
        await self.close()
        await self.start(port)

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
