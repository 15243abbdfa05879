"""`studybot run`: every configured platform in one event loop, on one store, with one
scheduler delivering timers through each platform's Outbox.

Each platform goes through connecting (its adapter's `start()`), retrying (start raised
PlatformUnreachable: a fresh adapter after an exponential backoff, one log line per attempt)
and serving. PlatformRejected stops start-up (the CLI prints its one line). SIGTERM or Ctrl-C
stop the process in any of these states within STOP_WITHIN seconds: adapters finish the work
in flight, then the store closes. A database file deleted or replaced under the running bot
stops it too (StoreUnavailable)."""

from __future__ import annotations

import asyncio
import contextlib
import errno
import fcntl
import gc
import logging
import os
import signal
import socket
import time
from collections.abc import Awaitable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, TextIO

from adapters import metrics_http
from adapters.platform import Listen, Platform
from bot.core.config import Settings
from bot.core.errors import PlatformRejected, PlatformUnreachable, SetupError
from bot.core.messages import Place
from bot.runtime.app import StudyBot
from bot.runtime.delivery import Outbox
from bot.runtime.scheduler import TICK, run_scheduler
from bot.store.private import touch_private

log = logging.getLogger("studybot.runner")

STOP_WITHIN = 8.0  # seconds to close every adapter after a stop signal (Docker's stop waits 10)


CHECK_WITHIN = 10.0  # seconds for one configured channel's start-up check
RELOAD_CHANNEL = "studybot_reload"  # what `studybot reload` announces on PostgreSQL
CHANNEL_CHECKS = "channel checks"  # the lock of the process checking the configured channels
# The collector's young generation runs every 20,000 allocations, not 700: a burst of 1,000 presses then
# spends about 10 ms in it rather than 70-110 ms (its collections went from ~180 to 2; measured with gc.callbacks).
GC_THRESHOLDS = (20_000, 10, 10)


class Adapter(Outbox, Protocol):
    platform: str

    async def start(self) -> None: ...

    async def close(self) -> None: ...

    async def channel_problem(self, place: Place) -> str | None:
        """Why studybot could not post in this cohort's channel, else None."""


@dataclass(frozen=True)
class Backoff:
    """Waits between connection attempts: `first`, doubling up to `cap` seconds."""

    first: float = 1.0
    cap: float = 60.0

    def delays(self) -> Iterator[float]:
        delay = self.first
        while True:
            yield delay
            delay = min(delay * 2, self.cap)


@contextlib.contextmanager
def stop_signals(stop: asyncio.Event) -> Iterator[asyncio.Event]:
    """SIGTERM and SIGINT set `stop` while inside (the running loop's handlers)."""
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    try:
        yield stop
    finally:
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.remove_signal_handler(sig)


def pid_file(db_path: Path) -> Path:
    """Where a running studybot leaves its process id, beside its database's real file (through any
    symbolic link: one pid file per file, whatever path names it; `studybot reload` reads it)."""
    real = db_path.resolve()
    return real.with_name(real.name + ".pid")


def running_pid(marker: Path) -> int | None:
    """The process id in a pid file while its studybot runs (it holds the file's lock), else None:
    a file left behind by a studybot that was killed names a process that may now be another program."""
    try:
        with marker.open() as file:
            try:
                fcntl.flock(file, fcntl.LOCK_SH | fcntl.LOCK_NB)
            except BlockingIOError:
                words = file.read().split()
                return int(words[0]) if words and words[0].isdecimal() else None
            return None
    except FileNotFoundError:
        return None


def _locked(marker: Path, tries: int = 10) -> TextIO:
    """The pid file, open and locked by this process. A moment's lock (`studybot reload` reading it) is waited
    out, and a file its holder removed between our open and our lock is opened afresh; BlockingIOError while
    another studybot holds it."""
    for attempt in range(tries):
        touch_private(marker)  # 0600: created before it is opened, so it is never readable by others
        held = marker.open("a+")  # not truncated before the lock is ours: it may be another studybot's
        try:
            fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            held.close()
            if attempt == tries - 1:
                raise
            time.sleep(0.05)
            continue
        try:
            same = os.fstat(held.fileno()).st_ino == os.stat(marker).st_ino
        except FileNotFoundError:
            same = False
        if same:
            return held
        held.close()  # locked a file already removed: the path names a new one now
    raise BlockingIOError(f"{marker} kept changing")


@contextlib.contextmanager
def serving_alone(settings: Settings) -> Iterator[None]:
    """While inside, this process is the one studybot serving its SQLite file: it holds the pid file
    (written and locked; `studybot reload` reads it) and a lock on the database file itself, so that
    no other path to the same file (a symbolic or hard link) gets a second serving process. SQLite
    serves one process, so a second one is refused (SetupError) rather than taking the first one's
    timers and rounds. On PostgreSQL nothing is held: many processes share the database."""
    if settings.database_url:
        yield
        return
    marker = pid_file(settings.db_path)
    try:
        held = _locked(marker)
    except (FileNotFoundError, NotADirectoryError, PermissionError):  # no (writable) database folder: the store says so
        yield
        return
    except BlockingIOError:
        raise _in_use(settings.db_path, marker) from None
    except OSError as exc:
        log.warning("cannot write %s (%s): `studybot reload` will not find this process (send it SIGHUP)",
                    marker, exc.strerror)
        yield
        return
    try:
        database = _lock_database(settings.db_path, marker)
    except BaseException:  # another path to a served file: this pid file (ours, locked) goes
        with contextlib.suppress(OSError):
            marker.unlink()
        held.close()
        raise
    held.truncate(0)
    held.write(f"{os.getpid()}\n")
    held.flush()
    try:
        yield
    finally:  # removed while still locked, so that no other studybot's file is taken
        with contextlib.suppress(OSError):
            marker.unlink()
        held.close()
        if database is not None:
            os.close(database)  # after the store closed: closing it drops no lock of SQLite's


def _lock_database(db_path: Path, marker: Path) -> int | None:
    """The database file (created 0600 when new) open and locked (flock, which SQLite's own locks never
    meet) by this process: its identity, whatever path names it. None when it cannot be opened (the
    store says why at start)."""
    try:
        touch_private(db_path)
        fd = os.open(db_path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        raise _in_use(db_path, None) from None
    return fd


def _in_use(db_path: Path, marker: Path | None) -> SetupError:
    pid = running_pid(marker) if marker is not None else None
    holder = f"studybot pid {pid}" if pid is not None else "another studybot"
    through = f"it holds {marker}" if marker is not None else "through another link to the same file"
    return SetupError(f"{db_path} is in use by {holder} ({through}); stop it first, or use PostgreSQL "
                      "(STUDYBOT_DATABASE_URL) to run many processes")


@contextlib.contextmanager
def reload_on_hangup(bot: StudyBot) -> Iterator[None]:
    """While inside: SIGHUP re-reads the lesson packs (StudyBot.reload), and so does `studybot reload`:
    on SQLite through the pid file (`serving_alone`), which says who we are; on PostgreSQL through the
    database (NOTIFY on RELOAD_CHANNEL), which reaches every process on every machine."""
    loop = asyncio.get_running_loop()
    reloads: set[asyncio.Task[Any]] = set()

    def hangup() -> None:
        task = loop.create_task(bot.reload(), name="reload")
        reloads.add(task)
        task.add_done_callback(reloads.discard)

    async def on_notice() -> None:
        async for _ in bot.store.engine.notices(RELOAD_CHANNEL):
            log.info("studybot reload was asked on the database; reloading the lesson packs")
            hangup()

    loop.add_signal_handler(signal.SIGHUP, hangup)
    listener = loop.create_task(on_notice(), name="reload listener")
    try:
        yield
    finally:
        listener.cancel()
        loop.remove_signal_handler(signal.SIGHUP)


def check_ports(configured: Mapping[Platform, Any], metrics_port: int | None,
                metrics_host: str = metrics_http.HOST) -> None:
    """Every address studybot will listen on is free (SetupError names the variable otherwise); a
    shared port (SO_REUSEPORT) may already be held by other studybot processes, which share it too."""
    wanted = [address for platform, settings in configured.items() for address in platform.listens(settings)]
    if metrics_port is not None:
        for listen in wanted:
            if listen.port == metrics_port:
                raise SetupError(f"STUDYBOT_METRICS_PORT: {metrics_port} is also {listen.variable}; leave it unset "
                                 "(Slack's HTTP port serves /metrics too) or choose another port")
        wanted.append(Listen(metrics_host, metrics_port, "STUDYBOT_METRICS_PORT"))
    for host, port, variable, shared in wanted:
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        with socket.socket(family, socket.SOCK_STREAM) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as aiohttp binds
            if shared:  # binds beside processes that share the port; still fails beside any other program
                probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
            try:
                probe.bind((host, port))
            except OSError as exc:
                if exc.errno == errno.EADDRINUSE:
                    raise SetupError(f"{variable}: port {port} on {host} is in use; stop the program that holds it "
                                     f"or set {variable} to a free port") from exc
                raise SetupError(f"{variable}: cannot listen on {host}:{port} ({exc.strerror}); "
                                 "choose another address or port") from exc


async def run_platforms(bot: StudyBot, configured: Mapping[Platform, Any], stop: asyncio.Event | None = None, *,
                        backoff: Backoff = Backoff(), metrics_port: int | None = None,
                        metrics_host: str = metrics_http.HOST) -> None:
    """Serve every configured platform until `stop` is set (SIGTERM and SIGINT set it when no
    `stop` is given). PlatformRejected and other SetupErrors end it after everything is closed."""
    if stop is None:
        with stop_signals(asyncio.Event()) as own:
            return await run_platforms(bot, configured, own, backoff=backoff, metrics_port=metrics_port,
                                       metrics_host=metrics_host)
    check_ports(configured, metrics_port, metrics_host)
    metrics = await metrics_http.serve(bot, metrics_port, metrics_host) if metrics_port is not None else None
    adapters: list[Adapter] = []
    ticker: asyncio.Task[None] | None = None
    announce(bot, configured)
    await bot.store.installs.reseal()
    beating = asyncio.create_task(_beat_while_connecting(bot), name="beat while connecting")
    try:
        try:
            adapters = await _connect_all(bot, configured, stop, backoff)
        finally:
            beating.cancel()
            await asyncio.gather(beating, return_exceptions=True)
        if adapters and not stop.is_set():
            bot.store.processes.platforms = ", ".join(a.platform for a in adapters)  # `health` lists it
            ticker = asyncio.create_task(run_scheduler(bot, {a.platform: a for a in adapters}))
            checks = asyncio.create_task(check_channels(bot, adapters))
            gc.freeze()  # what start-up built (packs, libraries) stays out of the collector's passes under load
            gc.set_threshold(*GC_THRESHOLDS)
            log.info("studybot is running on %s", ", ".join(a.platform for a in adapters))
            await _first(stop.wait(), bot.store.engine.failed.wait())
            checks.cancel()
        log.info("stopping")
    finally:
        deadline = asyncio.get_running_loop().time() + STOP_WITHIN
        if ticker is not None:  # timers in flight finish first: they deliver through the adapters
            ticker.cancel()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.gather(ticker, return_exceptions=True), STOP_WITHIN / 2)
        await _close(adapters, within=max(deadline - asyncio.get_running_loop().time(), 1.0))
        if metrics is not None:
            await metrics.cleanup()
    if bot.store.engine.failure is not None:
        raise bot.store.engine.failure


def announce(bot: StudyBot, configured: Mapping[Platform, Any]) -> None:
    """What this process tells the others through its heartbeat (`studybot health` lists it): its name,
    the platforms it is still connecting, and its Discord shards."""
    processes = bot.store.processes
    if bot.settings.process_name:
        processes.host = bot.settings.process_name
    processes.platforms = ", ".join(p.name for p in configured)
    processes.waiting = processes.platforms
    processes.shards = next((shard_text(s.shard_ids, s.shard_count) for s in configured.values()
                             if getattr(s, "shard_count", None) is not None), "")


def shard_text(ids: Sequence[int], count: int) -> str:
    """Shards as STUDYBOT_DISCORD_SHARDS writes them: 0,1/4."""
    return f"{','.join(map(str, ids))}/{count}"


async def _beat_while_connecting(bot: StudyBot) -> None:
    """Beat every tick until every platform is connected (the scheduler beats after that): a process
    that is still connecting, or retrying an unreachable platform, is running, and `health` says so."""
    while True:
        try:
            await bot.store.beat()
        except Exception:
            log.exception("cannot record the heartbeat")
        await asyncio.sleep(TICK)


async def check_channels(bot: StudyBot, adapters: Sequence[Adapter]) -> int:
    """Check each channel the configuration posts to on a schedule; each one studybot cannot post
    in is logged and recorded for `studybot health` (which shows what the latest check found).
    One process checks for all: one that starts while another checks skips it. Returns how many
    have a problem."""
    async with bot.store.engine.first(CHANNEL_CHECKS) as mine:
        if not mine:
            log.info("another studybot process is checking the configured channels")
            return 0
        return await _check_channels(bot, adapters)


async def _check_channels(bot: StudyBot, adapters: Sequence[Adapter]) -> int:
    problems = 0
    for adapter in adapters:
        for key, place in bot.channels(adapter.platform):
            channel = place.channel_id
            try:
                async with asyncio.timeout(CHECK_WITHIN):
                    problem = await adapter.channel_problem(place)
            except Exception as exc:  # the platform is slow or down: the posts will retry on their own
                log.warning("could not check %s (%s): %s", key, channel, type(exc).__name__)
                continue
            if problem is None:
                await bot.store.timers.can_post(key)
            else:
                problems += 1
                reason = f"studybot cannot post in channel {channel} ({problem}); invite it there or correct {key}"
                log.warning("%s: %s", key, reason)
                await bot.store.timers.cannot_post(key, reason)
    return problems


async def _connect_all(bot: StudyBot, configured: Mapping[Platform, Any], stop: asyncio.Event,
                       backoff: Backoff) -> list[Adapter]:
    """Every platform connected (each retried on its own), or [] when stopped first; the first
    PlatformRejected (or other failure) closes the others and is raised."""
    tasks = [asyncio.create_task(_connect(bot, p, s, stop, backoff), name=f"connect-{p.name}")
             for p, s in configured.items()]
    done, pending = await asyncio.wait(tasks, return_when=asyncio.FIRST_EXCEPTION)
    failed = next((t for t in done if t.exception() is not None), None)
    if failed is not None:
        for task in pending:
            task.cancel()
        results = await asyncio.gather(*tasks, return_exceptions=True)
        await _close([r for r in results if not isinstance(r, BaseException) and r is not None])
        raise failed.exception()  # type: ignore[misc]
    connected = [a for a in (t.result() for t in tasks) if a is not None]
    if len(connected) < len(tasks):  # stopped while connecting or retrying
        await _close(connected)
        return []
    return connected


async def _connect(bot: StudyBot, platform: Platform, settings: Any, stop: asyncio.Event,
                   backoff: Backoff) -> Adapter | None:
    """A started adapter for the platform, or None when `stop` was set first. Each attempt
    uses a fresh adapter, so that no adapter is ever started twice."""
    delays = backoff.delays()
    attempt = 0
    while not stop.is_set():
        attempt += 1
        adapter: Adapter = platform.adapter_class()(bot, settings)
        starting = asyncio.create_task(adapter.start(), name=f"start-{platform.name}")
        try:
            started = await _first(starting, stop.wait())
        finally:  # stopped, or cancelled because another platform failed
            if not starting.done():
                starting.cancel()
                await asyncio.gather(starting, return_exceptions=True)
                await _close([adapter])
        if not started:
            return None
        try:
            starting.result()
        except PlatformUnreachable as exc:
            await _close([adapter])
            delay = next(delays)
            log.warning("%s is unreachable (%s); attempt %d failed, retrying in %g s", platform.name,
                        _one_line(exc), attempt, delay)
            if await _first(stop.wait(), asyncio.sleep(delay)):
                return None
            continue
        except PlatformRejected:
            await _close([adapter])
            raise
        except OSError as exc:
            await _close([adapter])
            raise SetupError(f"{platform.name} cannot start: {exc.strerror or _one_line(exc)}; "
                             f"check {platform.needs} and the ports it listens on") from exc
        except BaseException:
            await _close([adapter])
            raise
        log.info("%s connected", platform.name)
        bot.store.processes.connected(platform.name)
        return adapter
    return None


async def _first(first: Awaitable[Any], second: Awaitable[Any]) -> bool:
    """Wait for whichever ends first; True when it was `first`. The other is cancelled, except
    a Task, which the caller owns."""
    a, b = asyncio.ensure_future(first), asyncio.ensure_future(second)
    try:
        await asyncio.wait({a, b}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for future, given in ((a, first), (b, second)):
            if not future.done() and not isinstance(given, asyncio.Task):
                future.cancel()
    return a.done()


async def _close(adapters: Sequence[Adapter], within: float = STOP_WITHIN) -> None:
    """Close adapters (newest first), all within `within` seconds; a failure is logged."""
    async def close(adapter: Adapter) -> None:
        try:
            await adapter.close()
        except Exception:
            log.warning("%s did not close cleanly", adapter.platform, exc_info=True)

    if not adapters:
        return
    try:
        await asyncio.wait_for(asyncio.gather(*(close(a) for a in reversed(adapters))), within)
    except TimeoutError:
        log.warning("stopped waiting for %s to close after %.0f s", ", ".join(a.platform for a in adapters), within)


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split())[:200] or type(exc).__name__
