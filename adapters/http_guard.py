"""An HTTP listener that slow or flooding clients cannot exhaust, for Slack's HTTP mode.

aiohttp closes a connection whose request headers have not all arrived within its keep-alive
timeout (armed when the connection opens and after each answer, and not put off by a trickle of
bytes), so `header_timeout` is passed as that; the body is read under `body_timeout` by the handler;
`max_body` is aiohttp's `client_max_size`.

`CappedSite` serves at most `max_connections` at once, and at most `max_connections_per_client` of
them active (a request on its way or being answered) from one address, so that slow connections from
one address leave places for others. A connection answered and kept alive is idle: it keeps its place
only while nobody waits for one. A connection with no place waits for one, unread, for at most
`queue_wait` seconds (Slack does not retry an interaction, so a burst is queued, not refused), and
only `max_waiting` may wait, `max_waiting_per_client` of them from one address: a client that floods is
answered 503 and hung up on, as is one whose wait runs out.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter, deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from aiohttp import web

BUSY = b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"


@dataclass(frozen=True)
class Limits:
    header_timeout: float = 10.0  # seconds for a connection's request headers to arrive
    body_timeout: float = 10.0  # seconds for its body
    max_body: int = 1024 * 1024  # bytes; Slack's largest interaction payloads are a few hundred KB
    max_connections: int = 100  # served at once
    max_connections_per_client: int = 50  # of them active (not idle) from one address
    queue_wait: float = 2.0  # seconds a connection past the cap may wait for a place (Slack gives up at 3)
    max_waiting: int = 800  # connections waiting at once: with those served, under a 1024-descriptor limit
    max_waiting_per_client: int = 400  # of them from one address (behind a load balancer: the balancer's)
    max_json_depth: int = 64  # nesting of a JSON payload; Slack's own are under 15 deep
    install_pages_per_client: int = 30  # "Add to Slack" pages one address may open within ten minutes


ADMIT_EVERY = 0.005  # seconds between looks for a free place while connections wait


def _refuse(transport: asyncio.BaseTransport) -> None:
    """Answer 503 and hang up."""
    assert isinstance(transport, asyncio.Transport)
    transport.write(BUSY)
    transport.close()


class _Arriving(asyncio.Protocol):
    """A new connection: served at once when there is a place for its address, else waiting, unread,
    until the site admits it (or its wait runs out)."""

    def __init__(self, site: CappedSite) -> None:
        self.site = site
        self.client = ""
        self.transport: asyncio.Transport | None = None
        self.early = bytearray()  # what arrived before reading paused
        self.deadline: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        peer = transport.get_extra_info("peername")
        self.client = str(peer[0]) if isinstance(peer, tuple) else ""
        self.transport = transport
        if self.site.serve_now(self):
            return
        if not self.site.wait(self):  # no room to wait: refused at once
            _refuse(transport)
            return
        transport.pause_reading()
        self.deadline = asyncio.get_running_loop().call_later(self.site.limits.queue_wait, self.give_up)

    def data_received(self, data: bytes) -> None:
        self.early += data

    def connection_lost(self, exc: Exception | None) -> None:
        self.site.stop_waiting(self)

    holds_place = False

    def give_up(self) -> None:
        self.site.stop_waiting(self)
        if self.transport is not None and not self.transport.is_closing():
            _refuse(self.transport)

    def take_place(self) -> None:
        self.site.serve(self)

    def admit(self, protocol: asyncio.Protocol) -> None:
        """Hand the connection to the server's protocol, as if it had just arrived."""
        assert self.transport is not None
        if self.deadline is not None:
            self.deadline.cancel()
        self.transport.set_protocol(protocol)
        protocol.connection_made(self.transport)
        if self.early:
            protocol.data_received(bytes(self.early))
        self.transport.resume_reading()


class _Served(asyncio.Protocol):
    """A served connection, between its transport and aiohttp's handler. It is active while a request
    is on its way or being answered, and idle once answered (kept alive, nothing sent since). An idle
    one that sends a request while its address has all its places waits, unread, like a new one."""

    holds_place = True

    def __init__(self, site: CappedSite, handler: Any, client: str) -> None:
        self.site, self.handler, self.client = site, handler, client
        self.transport: asyncio.Transport | None = None
        self.idle = False
        self.early: bytearray | None = None  # while waiting: what arrived
        self.deadline: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        _SERVED[self.handler] = self
        self.handler.connection_made(transport)

    def data_received(self, data: bytes) -> None:
        if self.early is not None:
            self.early += data
        elif not self.idle or self.site.woke(self):
            self.handler.data_received(data)
        else:  # its address has all its places: wait for one
            assert self.transport is not None
            self.early = bytearray(data)
            self.transport.pause_reading()
            if not self.site.wait(self):
                self.give_up()
                return
            self.deadline = asyncio.get_running_loop().call_later(self.site.limits.queue_wait, self.give_up)

    def take_place(self) -> None:
        """Active again, with what arrived while it waited."""
        assert self.transport is not None and self.early is not None
        if self.deadline is not None:
            self.deadline.cancel()
        early, self.early = bytes(self.early), None
        self.site.woke(self)
        self.handler.data_received(early)
        self.transport.resume_reading()

    def give_up(self) -> None:
        """Answer 503 and hang up (no answer is on its way: it was idle)."""
        self.site.stop_waiting(self)
        if self.transport is not None and not self.transport.is_closing():
            _refuse(self.transport)

    def eof_received(self) -> bool | None:
        return bool(self.handler.eof_received())

    def connection_lost(self, exc: Exception | None) -> None:
        if self.deadline is not None:
            self.deadline.cancel()
        _SERVED.pop(self.handler, None)
        self.site.stop_waiting(self)
        self.site.gone(self)
        self.handler.connection_lost(exc)

    def pause_writing(self) -> None:
        self.handler.pause_writing()

    def resume_writing(self) -> None:
        self.handler.resume_writing()


_SERVED: dict[Any, _Served] = {}  # aiohttp's handler of each served connection -> the connection


@web.middleware
async def idle_once_answered(request: web.Request, handler: Any) -> web.StreamResponse:
    """aiohttp middleware: send the response whole, then mark its connection idle (see `CappedSite`).
    An application served by a `CappedSite` is built with it."""
    response: web.StreamResponse = await handler(request)
    served = _SERVED.get(request.protocol)
    if served is not None:
        await response.prepare(request)
        await response.write_eof()
        served.site.rest(served)
    return response


class CappedSite(web.TCPSite):
    """A TCPSite that serves at most `limits.max_connections` connections at once, at most
    `limits.max_connections_per_client` of them active from one address, and queues a bounded number
    past that (see the module's docstring). A connection answered and idle gives its place to one that
    waits. `reuse_port` lets processes on one machine share the port (SO_REUSEPORT: the kernel spreads
    connections among them). The application must use the `idle_once_answered` middleware."""

    def __init__(self, runner: web.AppRunner, host: str, port: int, limits: Limits, reuse_port: bool = False) -> None:
        super().__init__(runner, host, port, reuse_port=reuse_port)
        self.limits = limits
        self._waiting: deque[_Arriving | _Served] = deque()
        self._per_client: Counter[str] = Counter()  # waiting, by address
        self._served: set[_Served] = set()
        self._active: Counter[str] = Counter()  # served and not idle, by address
        self._idle: dict[_Served, None] = {}  # the idle ones, longest idle first
        self._admitting: asyncio.Task[None] | None = None

    async def start(self) -> None:
        await web.BaseSite.start(self)  # registers the site with its runner, as TCPSite.start does
        loop = asyncio.get_running_loop()
        self._server = await loop.create_server(lambda: _Arriving(self), self._host, self._port,
                                                backlog=self._backlog, reuse_address=self._reuse_address,
                                                reuse_port=self._reuse_port)
        self._bound_port = self._server.sockets[0].getsockname()[1]

    async def stop(self) -> None:
        if self._admitting is not None:
            self._admitting.cancel()
        for waiting in list(self._waiting):
            waiting.give_up()
        await super().stop()

    # ------------------------------------------------------------ places

    def serve_now(self, arriving: _Arriving) -> bool:
        """Serve a new connection at once if nobody waits and there is a place for its address."""
        if self._waiting or not self._place_for(arriving.client):
            return False
        self.serve(arriving)
        return True

    def _place_for(self, client: str, held: bool = False) -> bool:
        """Whether `client` may have one more active connection: under its share, and a place is free
        (unless the connection `held` one already; the longest idle connection is closed to free one)."""
        if self._active[client] >= self.limits.max_connections_per_client:
            return False
        if not held and len(self._served) >= self.limits.max_connections:
            if not self._idle:
                return False
            self._close(next(iter(self._idle)))
        return True

    def serve(self, arriving: _Arriving) -> None:
        server = self._runner.server
        assert server is not None
        served = _Served(self, server(), arriving.client)
        self._served.add(served)
        self._active[served.client] += 1
        arriving.admit(served)

    def rest(self, served: _Served) -> None:
        """The connection was answered: idle now, and its place may go to a connection that waits."""
        if served in self._served and not served.idle:
            served.idle = True
            self._less_active(served.client)
            self._idle[served] = None

    def woke(self, served: _Served) -> bool:
        """An idle connection sent more: active again, unless its address has its share already
        (False: it waits for a place, keeping its own)."""
        if served.idle:
            del self._idle[served]
            served.idle = False
        if served.early is None and self._active[served.client] >= self.limits.max_connections_per_client:
            return False
        self._active[served.client] += 1
        return True

    def gone(self, served: _Served) -> None:
        if served not in self._served:
            return
        self._served.discard(served)
        if served.idle:
            del self._idle[served]
        elif served.early is None:  # active (one waiting for a place is not)
            self._less_active(served.client)

    def _less_active(self, client: str) -> None:
        self._active[client] -= 1
        if self._active[client] <= 0:
            del self._active[client]

    def _close(self, served: _Served) -> None:
        """Close an idle connection to free its place."""
        self._served.discard(served)
        del self._idle[served]
        if served.transport is not None:
            served.transport.close()

    # ------------------------------------------------------------ the queue

    def wait(self, waiting: _Arriving | _Served) -> bool:
        """Queue a connection past the cap; False when there is no room for it (or its client)."""
        full = len(self._waiting) >= self.limits.max_waiting
        if full or self._per_client[waiting.client] >= self.limits.max_waiting_per_client:
            return False
        self._waiting.append(waiting)
        self._per_client[waiting.client] += 1
        if self._admitting is None or self._admitting.done():
            self._admitting = asyncio.create_task(self._admit())
        return True

    def stop_waiting(self, waiting: _Arriving | _Served) -> None:
        try:
            self._waiting.remove(waiting)
        except ValueError:
            return
        self._per_client[waiting.client] -= 1
        if self._per_client[waiting.client] <= 0:
            del self._per_client[waiting.client]

    async def _admit(self) -> None:
        """Admit waiting connections, oldest first among the addresses under their share, as places
        free up."""
        while self._waiting:
            for waiting in list(self._waiting):
                if self._place_for(waiting.client, held=waiting.holds_place):
                    self.stop_waiting(waiting)
                    waiting.take_place()
            await asyncio.sleep(ADMIT_EVERY)


class Allowance:
    """At most `most` takes per address within any `seconds`; at most `addresses` remembered (the
    longest idle forgotten first)."""

    def __init__(self, most: int, seconds: float, addresses: int = 10_000,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.most, self.seconds, self.addresses = most, seconds, addresses
        self._now = clock
        self._taken: dict[str, deque[float]] = {}  # address -> its takes within the window, oldest first

    def take(self, address: str) -> bool:
        """Count one for `address`; False (not counted) when it has had its `most` already."""
        now = self._now()
        taken = self._taken.pop(address, None) or deque()
        while taken and taken[0] <= now - self.seconds:
            taken.popleft()
        self._taken[address] = taken  # now the most recently used
        while len(self._taken) > self.addresses:
            del self._taken[next(iter(self._taken))]
        if len(taken) >= self.most:
            return False
        taken.append(now)
        return True


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
