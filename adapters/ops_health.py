"""What `studybot health` and `studybot check` make of the processes table: which processes run
(beat within a minute), which are still connecting a platform (running, not yet serving it), and
whether the Discord shards of the running ones fit together (no gap, no overlap, one total)."""

from __future__ import annotations

import socket
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from adapters.platform import Platform
from adapters.runner import shard_text
from bot.core.config import SECRET_KEY_HOW, Settings
from bot.core.errors import StoreUnavailable
from bot.store import postgres_engine, sqlite_engine
from bot.store.installs import Install
from bot.store.processes import ALIVE_WITHIN, Process, read_processes, shard_problems
from bot.store.sealing import Sealer


@dataclass
class Verdict:
    """`unhealthy` (None: healthy) and the lines `health` prints after its first."""

    unhealthy: str | None = None
    healthy: str = ""
    lines: list[str] = field(default_factory=list)


def named(process: Process) -> str:
    shards = f", discord shards {process.shards}" if process.shards else ""
    serves = f" ({process.platforms}{shards})" if process.platforms else ""
    return f"process {process.host} pid {process.pid}{serves}"


def judge(processes: list[Process], now: datetime, where: str, variable: str, itself: str | None = None) -> Verdict:
    """The health of the processes on the database `where` (`variable` names where it is set). With
    `itself` (a process name, or this host's when ''), only that process's own health counts: a replica's
    healthcheck checks itself, not whether any replica is alive."""
    running = [p for p in processes if now - p.beat_at <= ALIVE_WITHIN]
    judged = running
    if itself is not None:
        me = itself or socket.gethostname()
        judged = [p for p in running if p.host == me[:80]]
    serving = [p for p in judged if not p.waiting]
    if not judged:
        last = f" (the last heartbeat was at {processes[0].beat_at.isoformat(timespec='seconds')})" if processes else ""
        which = f" named {itself or socket.gethostname()}" if itself is not None else ""
        return Verdict(f"no studybot process{which} is running on {where}{last}; start it with studybot run, or set "
                       f"{variable} to the database it runs on")
    if not serving:
        waiting = judged[0]
        return Verdict(f"studybot is running on {where} ({named(waiting)}, up since "
                       f"{waiting.started_at.isoformat(timespec='seconds')}) but is still connecting "
                       f"{waiting.waiting}: it retries on its own; its log says why it cannot connect")
    verdict = Verdict(healthy=f"healthy: heartbeat {int((now - serving[0].beat_at).total_seconds())} s ago, "
                      f"{len(running)} process(es) running")
    shards = shard_problems(running)
    if shards and itself is None:
        verdict.unhealthy = shards[0] + (f" (and {len(shards) - 1} more problem(s))" if len(shards) > 1 else "")
    verdict.lines += [f"warning: {problem}" for problem in shards]
    for process in processes:  # the running ones, then those that stopped without leaving (latest first)
        if process in running:
            connecting = f"; still connecting {process.waiting}" if process.waiting else ""
            verdict.lines.append(f"{named(process)}: beat {int((now - process.beat_at).total_seconds())} s ago, up "
                                 f"since {process.started_at.isoformat(timespec='seconds')}{connecting}")
        else:
            verdict.lines.append(f"{named(process)}: not heard from since "
                                 f"{process.beat_at.isoformat(timespec='seconds')}; it was killed or is stuck, or "
                                 "its machine went down")
    return verdict


def shards_before_start(processes: list[Process], now: datetime, mine: str) -> list[str]:
    """What `studybot check` says of the Discord shards, this process's (`mine`, like 0,1/4; '' when
    unsharded) beside those of the processes running on the database."""
    running = [p for p in processes if now - p.beat_at <= ALIVE_WITHIN]
    if not mine and not any(p.shards for p in running):
        return []
    problems = shard_problems(running, mine)
    if problems:
        return [f"warning: {problem}" for problem in problems]
    others = sum(1 for p in running if p.shards)
    return [f"discord shards: OK, {mine or 'none here'}" + (f", beside {others} running process(es)" if others else "")]


def check_lines(settings: Settings, found: Mapping[Platform, Any]) -> list[str]:
    """`studybot check`'s lines on the Discord shards, beside the processes running on the database."""
    mine = next((shard_text(s.shard_ids, s.shard_count) for s in found.values()
                 if getattr(s, "shard_count", None) is not None), "")
    try:
        processes = (postgres_engine.peek(settings.database_url, read_processes) if settings.database_url
                     else sqlite_engine.peek(settings.db_path, read_processes))
    except StoreUnavailable:
        processes = None
    return shards_before_start(processes or [], datetime.now(UTC), mine)


def token_lines(installs: list[Install], settings: Settings) -> list[str]:
    """A warning when workspaces' bot tokens are stored unencrypted (no STUDYBOT_SECRET_KEY)."""
    plain = [i for i in installs if i.bot_token and not Sealer.is_sealed(i.bot_token)]
    if not plain or settings.secret_keys:
        return []
    return [f"warning: {len(plain)} workspace(s) have their bot token stored unencrypted; set STUDYBOT_SECRET_KEY "
            f"to encrypt them at the next start ({SECRET_KEY_HOW})"]


def open_tokens(installs: list[Install], settings: Settings) -> None:
    """What `run` does first with the stored tokens: decrypt them with STUDYBOT_SECRET_KEY; StoreUnavailable
    (for `check`) when a key they need is not given."""
    sealer = Sealer(settings.secret_keys)
    for install in installs:
        sealer.open(install.bot_token)
        sealer.open(install.refresh_token)
