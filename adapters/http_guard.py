"""An HTTP listener that slow or flooding clients cannot exhaust, for Slack's HTTP mode.

aiohttp closes a connection whose request headers have not all arrived within its keep-alive
timeout (it is armed when the connection opens), so `header_timeout` is passed as that; the
body is read under `body_timeout` by the handler; `max_body` is aiohttp's `client_max_size`;
and `CappedSite` turns away connections beyond `max_connections` with a 503.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from aiohttp import web

_STRINGS = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
_NOT_BRACKETS = re.compile(r"[^\[\]{}]")
BUSY = b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"


@dataclass(frozen=True)
class Limits:
    header_timeout: float = 10.0  # seconds for a connection's request headers to arrive
    body_timeout: float = 10.0  # seconds for its body
    max_body: int = 1024 * 1024  # bytes; Slack's largest interaction payloads are a few hundred KB
    max_connections: int = 100  # open at once, well under a 256-descriptor limit
    max_json_depth: int = 64  # nesting of a JSON payload; Slack's own are under 15 deep


def json_depth_within(text: str, limit: int) -> bool:
    """Whether JSON text nests no deeper than `limit`, decided without parsing it (a parser
    recurses, so 50,000 levels would exhaust the stack)."""
    depth = 0
    for bracket in _NOT_BRACKETS.sub("", _STRINGS.sub("", text)):
        depth += 1 if bracket in "[{" else -1
        if depth > limit:
            return False
    return True


class _Refuse(asyncio.Protocol):
    """Answers 503 and hangs up: the connection cap is reached."""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        transport.write(BUSY)
        transport.close()


class CappedSite(web.TCPSite):
    """A TCPSite that serves at most `max_connections` connections at once."""

    def __init__(self, runner: web.AppRunner, host: str, port: int, max_connections: int) -> None:
        super().__init__(runner, host, port)
        self.max_connections = max_connections

    async def start(self) -> None:
        await web.BaseSite.start(self)  # registers the site with its runner, as TCPSite.start does
        server = self._runner.server
        assert server is not None

        def protocol() -> Any:
            return server() if len(server.connections) < self.max_connections else _Refuse()

        loop = asyncio.get_running_loop()
        self._server = await loop.create_server(protocol, self._host, self._port, backlog=self._backlog,
                                                reuse_address=self._reuse_address, reuse_port=self._reuse_port)
        self._bound_port = self._server.sockets[0].getsockname()[1]


class ReplayGuard:
    """Signed requests already taken, by timestamp and signature, for as long as Slack accepts a
    signature (five minutes): a request replayed within that time is seen, and not acted on twice."""

    WINDOW = 5 * 60  # seconds, Slack's own limit on a request's age
    MOST = 100_000  # remembered at once; the oldest are dropped first

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._now = clock
        self._seen: dict[tuple[str, str], float] = {}  # in the order they came

    def first_time(self, timestamp: str | None, signature: str | None) -> bool:
        """Whether this request was not yet taken."""
        now = self._now()
        while self._seen and (len(self._seen) >= self.MOST
                              or next(iter(self._seen.values())) < now - self.WINDOW - 60):
            del self._seen[next(iter(self._seen))]
        return (timestamp or "", signature or "") not in self._seen

    def taken(self, timestamp: str | None, signature: str | None) -> None:
        """Remember a request once it was handled (one that failed may come again, and is done then)."""
        self._seen[(timestamp or "", signature or "")] = self._now()
