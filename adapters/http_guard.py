"""An HTTP listener that slow or flooding clients cannot exhaust, for Slack's HTTP mode.

aiohttp closes a connection whose request headers have not all arrived within its keep-alive
timeout (armed when the connection opens and after each answer, and not put off by a trickle of
bytes), so `header_timeout` is passed as that; the body is read under `body_timeout` by the handler;
`max_body` is aiohttp's `client_max_size`.

`CappedSite` serves at most `max_connections` at once, and at most `max_connections_per_client` of
them active (a request on its way or being answered) from one address, so that slow connections from
one address leave places for others. A connection answered and kept alive is idle: it keeps its place
only while nobody waits for one. A connection with no place waits for one, for at most `queue_wait`
seconds (Slack does not retry an interaction, so a burst is queued, not refused), oldest first, in a
waiting room as large as the open-file limit allows (raised to its hard limit at start). While it
waits its request is read ahead (up to `READ_AHEAD` bytes): one whose request has all arrived is
*ready*, and takes the next free place whatever its address's share. The slow are told from the many
fast: an address may have only `max_waiting_per_client` connections waiting whose request is still
unfinished; one that comes past that has `GRACE` seconds for its request to arrive, and is not given
a place before it has, else it is answered 503 and hung up on, as is a connection whose wait runs
out. So a burst of presses from one address (a load balancer's) is queued and answered, and a flood
of slow connections from one is not.
"""

from __future__ import annotations

import asyncio
import re
import resource
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
    max_waiting: int | None = None  # connections waiting at once; None: what the open-file limit leaves
    max_waiting_per_client: int = 400  # of them unfinished (the request still arriving) from one address
    max_json_depth: int = 64  # nesting of a JSON payload; Slack's own are under 15 deep
    install_pages_per_client: int = 30  # "Add to Slack" pages one address may open within ten minutes


GRACE = 0.5  # seconds an address past its share of unfinished waiting connections has to finish them
READ_AHEAD = 32 * 1024  # bytes of a waiting connection's request read while it waits
RESERVE = 256  # open files kept for the rest of the process (database, logs, posts to Slack)
MOST_WAITING = 10_000  # the waiting room's size at most, whatever the open-file limit
BACKLOG = 4096  # connections the kernel holds until they are accepted (capped by net.core.somaxconn)
_LENGTH = re.compile(rb"\r\ncontent-length:[ \t]*(\d+)", re.IGNORECASE)
_CHUNKED = re.compile(rb"\r\ntransfer-encoding:", re.IGNORECASE)


def open_file_limit() -> int:
    """Raise this process's soft limit on open files to its hard limit; the limit now."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY or hard > soft:
        wanted = 1 << 20 if hard == resource.RLIM_INFINITY else hard
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
            soft = wanted
        except (ValueError, OSError):
            pass
    return soft


def waiting_room(limits: Limits) -> int:
    """How many connections may wait: `limits.max_waiting`, else what the open-file limit leaves."""
    if limits.max_waiting is not None:
        return limits.max_waiting
    return max(0, min(MOST_WAITING, open_file_limit() - limits.max_connections - RESERVE))


def arrived(early: bytes | bytearray) -> bool:
    """Whether a whole request (headers, and a body of its Content-Length) is in `early`. A chunked
    body (which Slack does not send) never counts as arrived: its end is not read ahead."""
    end = early.find(b"\r\n\r\n")
    if end < 0 or _CHUNKED.search(early, 0, end + 2):
        return False
    length = _LENGTH.search(early, 0, end + 2)
    return len(early) >= end + 4 + (int(length.group(1)) if length else 0)


def _refuse(transport: asyncio.BaseTransport) -> None:
    """Answer 503 and hang up."""
    assert isinstance(transport, asyncio.Transport)
    transport.write(BUSY)
    transport.close()


class _Waiting:
    """What a connection waiting for a place has: its address, what of its request arrived (read
    ahead, up to READ_AHEAD), whether that is all of it (`ready`), and when its wait runs out."""

    site: CappedSite
    client: str
    transport: asyncio.Transport | None
    holds_place: bool
    early: bytearray | None = None  # while waiting: what arrived
    ready = False
    over = False  # came past its address's share of unfinished waiting connections
    deadline: asyncio.TimerHandle | None = None

    def start_waiting(self, early: bytes = b"") -> bool:
        """Queue for a place (False: no room); reading goes on until the request has arrived."""
        self.early = bytearray(early)
        if not self.site.wait(self):
            return False
        self.deadline = asyncio.get_running_loop().call_later(self.site.limits.queue_wait, self.give_up)
        self.read_ahead(b"")
        return True

    def read_ahead(self, data: bytes) -> None:
        assert self.early is not None and self.transport is not None
        self.early += data
        if not self.ready and arrived(self.early):
            self.ready = True
            self.site.now_ready(self)
        if self.ready or len(self.early) >= READ_AHEAD:
            self.transport.pause_reading()

    def taken(self) -> bytes:
        """What arrived while it waited (it waits no more)."""
        early, self.early, self.ready, self.over = bytes(self.early or b""), None, False, False
        return early

    def give_up(self) -> None:
        """Answer 503 and hang up (no answer is on its way: it waited)."""
        self.site.stop_waiting(self)
        if self.transport is not None and not self.transport.is_closing():
            _refuse(self.transport)

    def take_place(self) -> None:
        raise NotImplementedError


class _Arriving(_Waiting, asyncio.Protocol):
    """A new connection: served at once when there is a place for its address, else waiting until
    the site admits it (or its wait runs out)."""

    holds_place = False

    def __init__(self, site: CappedSite) -> None:
        self.site = site
        self.client = ""
        self.transport = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        peer = transport.get_extra_info("peername")
        self.client = str(peer[0]) if isinstance(peer, tuple) else ""
        self.transport = transport
        if not self.site.serve_now(self) and not self.start_waiting():  # no room to wait: refused at once
            _refuse(transport)

    def data_received(self, data: bytes) -> None:
        if self.early is not None:
            self.read_ahead(data)

    def connection_lost(self, exc: Exception | None) -> None:
        self.site.stop_waiting(self)

    def take_place(self) -> None:
        self.site.serve(self)

    def admit(self, protocol: asyncio.Protocol) -> None:
        """Hand the connection to the server's protocol, as if it had just arrived."""
        assert self.transport is not None
        early = self.taken()
        self.transport.set_protocol(protocol)
        protocol.connection_made(self.transport)
        if early:
            protocol.data_received(early)
        self.transport.resume_reading()


class _Served(_Waiting, asyncio.Protocol):
    """A served connection, between its transport and aiohttp's handler. It is active while a request
    is on its way or being answered, and idle once answered (kept alive, nothing sent since). An idle
    one that sends a request while its address has all its places waits, like a new one."""

    holds_place = True

    def __init__(self, site: CappedSite, handler: Any, client: str) -> None:
        self.site, self.handler, self.client = site, handler, client
        self.transport = None
        self.idle = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        _SERVED[self.handler] = self
        self.handler.connection_made(transport)

    def data_received(self, data: bytes) -> None:
        if self.early is not None:
            self.read_ahead(data)
        elif not self.idle or self.site.woke(self):
            self.handler.data_received(data)
        elif not self.start_waiting(data):  # its address has all its places: wait for one
            self.give_up()

    def take_place(self) -> None:
        """Active again, with what arrived while it waited."""
        assert self.transport is not None
        early = self.taken()
        self.site.woke(self, admitted=True)
        self.handler.data_received(early)
        self.transport.resume_reading()

    def eof_received(self) -> bool | None:
        return bool(self.handler.eof_received())

    def connection_lost(self, exc: Exception | None) -> None:
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
    `limits.max_connections_per_client` of them active from one address (unless their request has all
    arrived), and queues the others (see the module's docstring). A connection answered and idle gives
    its place to one that waits. `reuse_port` lets processes on one machine share the port (SO_REUSEPORT:
    the kernel spreads connections among them). The application must use the `idle_once_answered`
    middleware."""

    def __init__(self, runner: web.AppRunner, host: str, port: int, limits: Limits, reuse_port: bool = False) -> None:
        super().__init__(runner, host, port, reuse_port=reuse_port, backlog=BACKLOG)
        self.limits = limits
        self.room = 0  # connections that may wait: set at start
        self._waiting: dict[_Waiting, None] = {}  # in the order they came
        self._unfinished: Counter[str] = Counter()  # waiting and not ready, by address
        self._served: set[_Served] = set()
        self._active: Counter[str] = Counter()  # served and not idle, by address
        self._idle: dict[_Served, None] = {}  # the idle ones, longest idle first
        self._holders = 0  # waiting connections that hold a place (served, idle, then sent more)
        self._admitting = False  # an admission is scheduled

    async def start(self) -> None:
        self.room = waiting_room(self.limits)
        await web.BaseSite.start(self)  # registers the site with its runner, as TCPSite.start does
        loop = asyncio.get_running_loop()
        self._server = await loop.create_server(lambda: _Arriving(self), self._host, self._port,
                                                backlog=self._backlog, reuse_address=self._reuse_address,
                                                reuse_port=self._reuse_port)
        self._bound_port = self._server.sockets[0].getsockname()[1]

    async def stop(self) -> None:
        for waiting in list(self._waiting):
            waiting.give_up()
        await super().stop()

    # ------------------------------------------------------------ places

    def serve_now(self, arriving: _Arriving) -> bool:
        """Serve a new connection at once if nobody waits and there is a place for its address."""
        if self._waiting or not self._place_for(arriving):
            return False
        self.serve(arriving)
        return True

    def _place_for(self, connection: _Waiting) -> bool:
        """Whether `connection` may be active: its request has arrived or its address is under its
        share, and a place is free (unless it holds one already; the longest idle connection is
        closed to free one)."""
        if not connection.ready and self._active[connection.client] >= self.limits.max_connections_per_client:
            return False
        if not connection.holds_place and len(self._served) >= self.limits.max_connections:
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
            self._admit_soon()

    def woke(self, served: _Served, admitted: bool = False) -> bool:
        """An idle connection sent more: active again, unless its address has its share already
        (False: it waits for a place, keeping its own); or it was `admitted` after waiting."""
        if served.idle:
            del self._idle[served]
            served.idle = False
        if not admitted and self._active[served.client] >= self.limits.max_connections_per_client:
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
        self._admit_soon()

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

    def wait(self, waiting: _Waiting) -> bool:
        """Queue a connection past the cap; False when the waiting room is full."""
        if len(self._waiting) >= self.room:
            return False
        self._waiting[waiting] = None
        self._holders += waiting.holds_place
        client = waiting.client
        if self._unfinished[client] >= self.limits.max_waiting_per_client:
            waiting.over = True
            asyncio.get_running_loop().call_later(GRACE, self._still_unfinished, waiting)
        self._unfinished[client] += 1
        self._admit_soon()
        return True

    def now_ready(self, waiting: _Waiting) -> None:
        """A waiting connection's request has all arrived."""
        if waiting in self._waiting:
            self._finished(waiting.client)
            self._admit_soon()

    def stop_waiting(self, waiting: _Waiting) -> None:
        if self._waiting.pop(waiting, False) is None:
            self._holders -= waiting.holds_place
            if not waiting.ready:
                self._finished(waiting.client)
            if waiting.deadline is not None:
                waiting.deadline.cancel()

    def _finished(self, client: str) -> None:
        self._unfinished[client] -= 1
        if self._unfinished[client] <= 0:
            del self._unfinished[client]

    def _still_unfinished(self, waiting: _Waiting) -> None:
        """A connection past its address's share, its grace over: refused unless its request arrived."""
        if waiting in self._waiting and not waiting.ready:
            waiting.give_up()

    def _admit_soon(self) -> None:
        if not self._admitting and self._waiting:
            self._admitting = True
            asyncio.get_running_loop().call_soon(self._admit)

    def _admit(self) -> None:
        """Give free places to waiting connections, oldest first among those that may take one (not
        one past its address's share whose request is still arriving, nor one of an address at its
        share of active connections, unless its request has arrived)."""
        self._admitting = False
        capped: set[str] = set()  # addresses at their share of active connections
        for waiting in list(self._waiting):
            if not self._holders and len(self._served) >= self.limits.max_connections and not self._idle:
                break  # no place is free: the next one to free up admits again
            if waiting not in self._waiting or (not waiting.ready and (waiting.over or waiting.client in capped)):
                continue
            if self._place_for(waiting):
                self.stop_waiting(waiting)
                waiting.take_place()
            elif self._active[waiting.client] >= self.limits.max_connections_per_client:
                capped.add(waiting.client)


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
