"""Bursts of simultaneous learners against real `studybot run` processes (Slack HTTP mode, sharing
one port with SO_REUSEPORT): acknowledgement latency, answers/s and the servers' CPU per press for 1
process on SQLite, and 1 and 2 processes on PostgreSQL; then PostgreSQL commit throughput beside a bare
psycopg group commit.

Each burst is open loop: L learners press a button of one round question at times spread evenly
over one second, each on a connection of its own, from 8 loopback addresses; a press's latency runs
from its scheduled time to its answer, so a slow server cannot hide its queue. The Slack stand-in
(Web API and response_url) runs in a process of its own. After each burst the answers stored must
equal the presses acknowledged with 200. PostgreSQL is STUDYBOT_TEST_DATABASE_URL's server; without
one the PostgreSQL rows say so.

CPU per press is the CPU time (user and system, from /proc/PID/stat) the studybot processes spent from
just before a burst until they are idle again after it (the feedback posted after each acknowledgement
included), over the presses acknowledged; its goal applies to bursts with none refused. Beside it, the
floor: the same bursts against a bare aiohttp process that checks the signature and parses the form and
its JSON (`benchmarks.peers.press_floor`), measured the same way in the same run. On a local PostgreSQL,
the CPU of the database's backends is shown too, apart (it is not in the ratio).
"""

from __future__ import annotations

import asyncio
import os
import socket
import sqlite3
import statistics
import sys
import tempfile
import time
import uuid
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import aiohttp
import psycopg

from benchmarks import goal
from bot.core.clock import SystemClock
from bot.core.config import Settings
from bot.core.messages import Actor, Audience, Command, Place
from bot.runtime.app import StudyBot
from bot.store.postgres_engine import PostgresEngine
from standins.slack_standin import BOT_TOKEN, SIGNING_SECRET, TEAM_ID, block_actions

REPO = Path(__file__).resolve().parents[1]
LEARNERS = (200, 1000, 3000)
WINDOW = 1.0  # seconds over which a burst's presses are sent
ACK_WITHIN = 3.0  # Slack's limit for an acknowledgement
GIVE_UP = 15.0  # seconds the load generator waits for one answer
SOURCES = [f"127.0.0.{n}" for n in range(1, 9)]
WRITES, IN_FLIGHT = 4000, 200  # commit throughput: answers written, in flight at once
CPU_GOAL = {"SQLite": 2.0, "PostgreSQL": 2.5}  # CPU per press, times the floor's
ENGINE_GOAL = 0.8  # PostgresEngine's commit rate, of the bare group commit's
ALL_ACKED = ("PostgreSQL, 2 processes", 3000)  # the burst whose every press must be acknowledged within 3 s
IDLE = 0.015  # CPU seconds per 0.2 s below which a server has finished a burst's work (one clock tick)
TICK = 1 / os.sysconf("SC_CLK_TCK")
STANDIN = ("import asyncio, sys\nfrom standins.slack_standin import SlackStandIn\nasync def main():\n"
           "    async with SlackStandIn() as s:\n        print(s.url, flush=True)\n"
           "        await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)\nasyncio.run(main())\n")


@dataclass(frozen=True)
class Burst:
    learners: int
    latencies: list[float]  # seconds, of the presses answered 200
    refused: int  # non-200 answers and presses that got none
    elapsed: float  # from the first scheduled press to the last answer
    stored: int  # answers in the database afterwards
    cpu: float = 0.0  # CPU seconds the servers spent on the burst
    database_cpu: float | None = None  # CPU seconds of the database's backends, when they can be read

    def line(self, label: str) -> str:
        if not self.latencies:
            return f"  {label:26} L={self.learners:5}: no press answered ({self.refused} refused)"
        cuts = statistics.quantiles(self.latencies, n=100, method="inclusive") if len(self.latencies) > 1 \
            else [self.latencies[0]] * 99
        within = sum(1 for s in self.latencies if s <= ACK_WITHIN)
        exact = "stored = acknowledged" if self.stored == len(self.latencies) else \
            f"STORED {self.stored} != ACKNOWLEDGED {len(self.latencies)}"
        line = (f"  {label:26} L={self.learners:5}: ack p50 {cuts[49] * 1000:5.0f} ms  p95 {cuts[94] * 1000:5.0f} ms  "
                f"p99 {cuts[98] * 1000:5.0f} ms  max {max(self.latencies) * 1000:5.0f} ms  "
                f"{len(self.latencies) / self.elapsed:5.0f} answers/s  "
                f"{within}/{self.learners} acked within {ACK_WITHIN:g} s, {self.refused} refused; {exact}")
        if (label, self.learners) == ALL_ACKED:
            line += " " + goal(f"all acked within {ACK_WITHIN:g} s, none refused",
                               within == self.learners and not self.refused)
        return line

    @property
    def per_press(self) -> float:
        """CPU milliseconds per press acknowledged."""
        return self.cpu * 1000 / max(1, len(self.latencies))

    def cpu_line(self, label: str, floor: Burst | None) -> str:
        line = f"  {'':26} {'':7}  CPU per press {self.per_press:5.2f} ms"
        if floor is not None and floor.latencies:
            ratio, most = self.per_press / floor.per_press, CPU_GOAL[label.split(",")[0]]
            line += f" = {ratio:4.1f}x the floor's {floor.per_press:4.2f} ms " + (
                goal(f"<= {most:g}x", ratio <= most) if not self.refused else
                f"(goal <= {most:g}x not applied: {self.refused} refused, whose work is counted but not them)")
        if self.database_cpu is not None:
            line += f"; and {self.database_cpu * 1000 / max(1, len(self.latencies)):4.2f} ms in PostgreSQL"
        return line


def postgres_url() -> tuple[str | None, str]:
    """The server to create benchmark databases on, or None and why not."""
    url = os.environ.get("STUDYBOT_TEST_DATABASE_URL", "").strip()
    if not url:
        return None, "no PostgreSQL: set STUDYBOT_TEST_DATABASE_URL to a server where databases may be made"
    try:
        psycopg.connect(url, connect_timeout=3).close()
    except psycopg.Error as exc:
        return None, f"no PostgreSQL: {urlsplit(url).hostname}:{urlsplit(url).port} is unreachable " \
                     f"({' '.join(str(exc).split())[:80]})"
    return url, ""


def new_database(server: str) -> str:
    name = f"studybot_bench_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(server, autocommit=True) as c:
        c.execute(f"CREATE DATABASE {name}")
    return urlsplit(server)._replace(path="/" + name).geturl()


def drop_database(server: str, url: str) -> None:
    with psycopg.connect(server, autocommit=True) as c:
        c.execute(f"DROP DATABASE IF EXISTS {urlsplit(url).path.lstrip('/')} WITH (FORCE)")


async def round_tokens(settings: Settings, bursts: int) -> list[str]:
    """One open round per burst (each in its own channel); the token of its first choice."""
    bot = await StudyBot.start(settings)
    tokens = []
    try:
        for n in range(bursts):
            place = Place("slack", TEAM_ID, f"CBENCH{n}")
            replies = await bot.handle(Command("quiz", "round seconds:600", Actor("slack", TEAM_ID, "UHOST", "host"),
                                               place))
            [question] = [r for r in replies if r.audience is Audience.PUBLIC]
            tokens.append(question.choices[0].token)
    finally:
        await bot.close()
    return tokens


async def start_processes(count: int, env: dict[str, str], folder: Path) -> list[asyncio.subprocess.Process]:
    procs = []
    for n in range(count):
        log = folder / f"studybot-{n}.log"
        with log.open("ab") as out:
            procs.append(await asyncio.create_subprocess_exec(
                sys.executable, "-m", "adapters.cli", "run", env=env, cwd=folder, stdin=asyncio.subprocess.DEVNULL,
                stdout=out, stderr=out))
        for _ in range(400):
            if "slack connected" in log.read_text():
                break
            if procs[-1].returncode is not None:
                raise RuntimeError(f"studybot run did not start: {log.read_text()[-500:]}")
            await asyncio.sleep(0.05)
    return procs


async def stop_processes(procs: list[asyncio.subprocess.Process]) -> None:
    for proc in procs:
        if proc.returncode is None:
            proc.terminate()
    for proc in procs:
        await asyncio.wait_for(proc.wait(), 20)


async def burst(port: int, token: str, channel: str, learners: int, prefix: str,
                response_url: str) -> tuple[list[float], int, float]:
    """Open-loop presses; (latencies of the 200s, how many were not 200, elapsed seconds)."""
    presses = [block_actions("studybot:0", token, user_id=f"{prefix}{n:05d}", user_name=f"{prefix}{n}",
                             channel_id=channel, response_url=f"{response_url}{prefix}{n}")
               for n in range(learners)]  # signed before the clock starts, as Slack signs on its side
    url = f"http://127.0.0.1:{port}/slack/events"
    sessions = [aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0, force_close=True, local_addr=(a, 0)),
                                      timeout=aiohttp.ClientTimeout(total=GIVE_UP)) for a in SOURCES]
    loop = asyncio.get_running_loop()
    start = loop.time() + 0.2
    done: list[float] = []

    async def press(n: int) -> float | None:
        due = start + WINDOW * n / learners
        await asyncio.sleep(max(0.0, due - loop.time()))
        body, headers = presses[n]
        try:
            async with sessions[n % len(sessions)].post(url, data=body, headers=headers) as response:
                await response.read()
                ok = response.status == 200
        except (aiohttp.ClientError, TimeoutError):
            ok = False
        done.append(loop.time())
        return loop.time() - due if ok else None

    try:
        results = await asyncio.gather(*(press(n) for n in range(learners)))
    finally:
        for session in sessions:
            await session.close()
    latencies = [r for r in results if r is not None]
    return latencies, learners - len(latencies), max(done) - start


async def run_config(label: str, processes: int, learners: tuple[int, ...], database: dict[str, str],
                     standin: str, folder: Path, floors: dict[int, Burst]) -> list[str]:
    """Start `processes` studybots on one database and port, send each burst, stop them."""
    folder = folder / f"{label.split(',')[0].lower()}-{processes}"
    folder.mkdir()
    database = {"STUDYBOT_DB": str(folder / "studybot.db"), **database}  # on PostgreSQL: its pid file only
    port = _free_port()
    settings = Settings(db_path=Path(database["STUDYBOT_DB"]),
                        database_url=database.get("STUDYBOT_DATABASE_URL"), content_dir=REPO / "content",
                        results_dir=folder / "results")
    tokens = await round_tokens(settings, len(learners))
    env = {k: v for k, v in os.environ.items()
           if "PROXY" not in k.upper() and not k.startswith(("SLACK_", "DISCORD_", "STUDYBOT_"))}
    env.update(SLACK_BOT_TOKEN=BOT_TOKEN, SLACK_SIGNING_SECRET=SIGNING_SECRET, SLACK_API_URL=standin + "/api/",
               STUDYBOT_HTTP_HOST="127.0.0.1", STUDYBOT_HTTP_PORT=str(port), STUDYBOT_REUSE_PORT="1",
               STUDYBOT_CONTENT=str(REPO / "content"), STUDYBOT_RESULTS_DIR=str(folder / "results"), **database)
    procs = await start_processes(processes, env, folder)
    lines = []
    try:
        for n, (size, token) in enumerate(zip(learners, tokens, strict=True)):
            learner = f"U{label[:2].upper()}{processes}B{n}X"
            async with Meter([p.pid for p in procs], settings.database_url) as meter:
                latencies, refused, elapsed = await burst(port, token, f"CBENCH{n}", size, learner,
                                                          standin + "/response_url/")
            stored = await asyncio.to_thread(_count_answers, settings, token)
            done = Burst(size, latencies, refused, elapsed, stored, meter.cpu, meter.database_cpu)
            lines += [done.line(label), done.cpu_line(label, floors.get(size))]
    finally:
        await stop_processes(procs)
    return lines


async def floor_bursts(learners: tuple[int, ...], standin: str) -> dict[int, Burst]:
    """The same bursts against the floor: one bare aiohttp process that checks and parses each press."""
    proc = await asyncio.create_subprocess_exec(sys.executable, "-m", "benchmarks.peers", "press-floor", "0", cwd=REPO,
                                                stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE)
    assert proc.stdout is not None and proc.stdin is not None
    floors = {}
    try:
        port = int(await proc.stdout.readline())
        for n, size in enumerate(learners):
            async with Meter([proc.pid], None) as meter:
                latencies, refused, elapsed = await burst(port, "P0.0", "CFLOOR", size, f"UFLOOR{n}X",
                                                          standin + "/response_url/")
            floors[size] = Burst(size, latencies, refused, elapsed, len(latencies), meter.cpu)
    finally:
        proc.stdin.close()
        await asyncio.wait_for(proc.wait(), 20)
    return floors


def floor_line(floor: Burst) -> str:
    return (f"  {'bare aiohttp (the floor)':26} L={floor.learners:5}: CPU per press {floor.per_press:5.2f} ms; "
            f"{len(floor.latencies)}/{floor.learners} acked, {floor.refused} refused")


def _count_answers(settings: Settings, token: str) -> int:
    """The answers stored for the prompt a token belongs to, read as plain SQL."""
    sql, prompt = "SELECT COUNT(*) FROM answers WHERE prompt_id = ?", token.partition(".")[0]
    if settings.database_url:
        with psycopg.connect(settings.database_url) as c:
            found = c.execute(sql.replace("?", "%s"), (prompt,)).fetchone()
    else:
        with closing(sqlite3.connect(settings.db_path)) as file:
            found = file.execute(sql, (prompt,)).fetchone()
    return int(found[0]) if found else 0


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


# ---------------------------------------------------------------- CPU time


def cpu_seconds(pids: list[int]) -> float:
    """User and system CPU seconds the processes have used (their threads', ended ones included)."""
    total = 0.0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
        except OSError:  # gone, or not readable
            continue
        total += (int(fields[11]) + int(fields[12])) * TICK  # utime and stime: fields 14 and 15 of stat
    return total


def backends(url: str | None) -> list[int]:
    """The pids of a local PostgreSQL's backends serving this database (none when it is not local)."""
    if not url or urlsplit(url).hostname not in ("127.0.0.1", "localhost", "::1") or not Path("/proc").is_dir():
        return []
    with psycopg.connect(url) as c:
        rows = c.execute("SELECT pid FROM pg_stat_activity WHERE datname = current_database()"
                         " AND pid <> pg_backend_pid()").fetchall()
    return [int(r[0]) for r in rows]


class Meter:
    """The CPU a burst costs: the servers' (until they are idle again) and the database backends'."""

    def __init__(self, pids: list[int], database_url: str | None) -> None:
        self.pids, self.url = pids, database_url

    async def __aenter__(self) -> Meter:
        self.database = await asyncio.to_thread(backends, self.url)
        self.started = cpu_seconds(self.pids), cpu_seconds(self.database)
        return self

    async def __aexit__(self, *exc: object) -> None:
        now = cpu_seconds(self.pids)
        for _ in range(50):  # the feedback posted after each acknowledgement is still part of the burst
            await asyncio.sleep(0.2)
            now, before = cpu_seconds(self.pids), now
            if now - before < IDLE:
                break
        self.cpu = now - self.started[0]
        backends_now = await asyncio.to_thread(backends, self.url)
        self.database_cpu = cpu_seconds(backends_now) - self.started[1] if backends_now else None


# ---------------------------------------------------------------- commit throughput

TABLE = ("CREATE TABLE bench_answers (learner TEXT, question TEXT, correct INTEGER, PRIMARY KEY (learner, question));"
         "CREATE TABLE bench_scores (learner TEXT PRIMARY KEY, points INTEGER NOT NULL)")


def _answer(c: Any, learner: str, question: str) -> int:
    """An answer's writes: the answer, then the learner's score (the shape of studybot's)."""
    c.execute("INSERT INTO bench_answers VALUES (?, ?, 1) ON CONFLICT DO NOTHING", (learner, question))
    c.execute("INSERT INTO bench_scores VALUES (?, 1) ON CONFLICT (learner) DO UPDATE"
              " SET points = bench_scores.points + 1", (learner,))
    return 1


async def through_engine(url: str, writes: int) -> float:
    engine = await PostgresEngine.open(url, SystemClock())
    try:
        await engine.run(lambda c: [c.execute(s) for s in TABLE.split(";")])
        gate = asyncio.Semaphore(IN_FLIGHT)

        async def one(n: int) -> None:
            async with gate:
                await engine.write(_answer, f"E{n % 500}", f"q{n}")

        started = time.perf_counter()
        await asyncio.gather(*(one(n) for n in range(writes)))
        return writes / (time.perf_counter() - started)
    finally:
        await engine.close()


async def bare_group_commit(url: str, writes: int) -> float:
    """psycopg alone: one connection on a thread, each batch of waiting answers in one transaction."""
    conn = await asyncio.to_thread(lambda: psycopg.connect(url, autocommit=True))
    conn.execute("DROP TABLE IF EXISTS bench_answers, bench_scores")
    for statement in TABLE.split(";"):
        conn.execute(statement)
    pending: list[tuple[str, str, asyncio.Future[None]]] = []
    flushing: asyncio.Task[None] | None = None

    def commit(batch: list[tuple[str, str, asyncio.Future[None]]]) -> None:
        with conn.transaction():
            for learner, question, _ in batch:
                conn.execute("INSERT INTO bench_answers VALUES (%s, %s, 1) ON CONFLICT DO NOTHING", (learner, question))
                conn.execute("INSERT INTO bench_scores VALUES (%s, 1) ON CONFLICT (learner) DO UPDATE"
                             " SET points = bench_scores.points + 1", (learner,))

    async def flush() -> None:
        nonlocal pending, flushing
        while pending:
            batch, pending = pending, []
            await asyncio.to_thread(commit, batch)
            for *_, future in batch:
                future.set_result(None)
        flushing = None

    gate = asyncio.Semaphore(IN_FLIGHT)

    async def one(n: int) -> None:
        nonlocal flushing
        async with gate:
            future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            pending.append((f"B{n % 500}", f"q{n}", future))
            if flushing is None:
                flushing = asyncio.create_task(flush())
            await future

    try:
        started = time.perf_counter()
        await asyncio.gather(*(one(n) for n in range(writes)))
        return writes / (time.perf_counter() - started)
    finally:
        conn.close()


async def commit_lines(server: str, writes: int = WRITES) -> list[str]:
    ours_db, bare_db = new_database(server), new_database(server)
    try:
        bare = max([await bare_group_commit(bare_db, writes), await bare_group_commit(bare_db, writes)])
        ours = 0.0
        for _ in range(2):
            drop_database(server, ours_db)
            ours_db = new_database(server)
            ours = max(ours, await through_engine(ours_db, writes))
    finally:
        drop_database(server, ours_db)
        drop_database(server, bare_db)
    return [f"PostgreSQL commit throughput, {writes} answers (2 statements each), {IN_FLIGHT} in flight (best of 2):",
            f"  bare psycopg group commit : {bare:7.0f} answers/s",
            f"  studybot PostgresEngine   : {ours:7.0f} answers/s ({ours / bare:.2f} of the bare floor) "
            f"{goal(f'>= {ENGINE_GOAL:g}', ours / bare >= ENGINE_GOAL)}"]


# ---------------------------------------------------------------- all of it


async def main(learners: tuple[int, ...] = LEARNERS, postgres: bool = True, writes: int = WRITES) -> list[str]:
    server, why_not = postgres_url() if postgres else (None, "no PostgreSQL asked for")
    standin = await asyncio.create_subprocess_exec(sys.executable, "-c", STANDIN, cwd=REPO,
                                                   stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE)
    assert standin.stdout is not None and standin.stdin is not None
    standin_url = (await standin.stdout.readline()).decode().strip()
    lines = [f"bursts of simultaneous learners pressing a round's button (Slack HTTP mode, open loop over "
             f"{WINDOW:g} s, ack = HTTP 200 after the commit; CPU per press beside the floor's in the same burst):"]
    try:
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp)
            floors = await floor_bursts(learners, standin_url)
            lines += [floor_line(floors[size]) for size in learners]
            lines += await run_config("SQLite, 1 process", 1, learners, {}, standin_url, folder, floors)
            if server is None:
                lines.append(f"  PostgreSQL, 1 and 2 processes: skipped, {why_not}")
            else:
                for processes in (1, 2):
                    url = new_database(server)
                    try:
                        label = f"PostgreSQL, {processes} process{'es' if processes > 1 else ''}"
                        lines += await run_config(label, processes, learners, {"STUDYBOT_DATABASE_URL": url},
                                                  standin_url, folder, floors)
                    finally:
                        drop_database(server, url)
        if server is not None:
            lines += await commit_lines(server, writes)
        else:
            lines.append(f"PostgreSQL commit throughput: skipped, {why_not}")
    finally:
        standin.stdin.close()
        await standin.wait()
    return lines


if __name__ == "__main__":
    print(*asyncio.run(main()), sep="\n")
