"""Many OS processes on one PostgreSQL database, counted where it matters: at the Slack stand-in and
in the database.

- Three `studybot run` processes (Slack HTTP mode, real slack-bolt) and 1,000 timers due at once:
  every timer fires exactly once (one post per timer at the stand-in), and every process takes a share.
- A round runs on three processes; the one that claims its reveal is SIGKILLed while it holds the
  claim: another takes the timer over within the lease (plus one scheduler tick), and every question
  is posted once, revealed once, and the round ends once.
- Four processes take 5,000 answers (and 500 repeated clicks, sent to two processes at once) from
  500 learners: every acknowledged answer is stored exactly once, and the leaderboard is the one a
  single process makes of the same answers.
"""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import sys
import time
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Sequence
from pathlib import Path

import pytest
from pg import PgServer
from readiness import READY_WITHIN

from bot.content.loader import check_library
from bot.core.clock import SystemClock
from bot.core.config import Settings
from bot.core.messages import Actor, ChoiceMade, Cohort, Place
from bot.features import rounds
from bot.features.leaderboard import board_text
from bot.runtime.app import StudyBot
from bot.store import Store
from bot.store.model import QUESTION, AnswerMode
from standins.slack_standin import SlackStandIn, post_signed, slash_command

pytestmark = pytest.mark.postgres

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
PACK = REPO / "tests" / "packs" / "core"
COHORT = "T0001"
PLACE = Place("slack", COHORT, "C0001")
PLACE_COHORT = Cohort("slack", COHORT)
LEASE = 1  # seconds: STUDYBOT_TIMER_LEASE where a process is killed (a lease must outlast a delivery)
TICK = 1.0  # the scheduler's interval
TIMERS, TIMER_PROCESSES = 1000, 3
LEARNERS, ANSWERS_EACH, ANSWER_PROCESSES = 500, 10, 4
REPEAT_EVERY = 10  # every tenth answer is also clicked, at the same moment, in a second process

RELIABILITY = [
    ("three `studybot run` processes (Slack HTTP mode) on one PostgreSQL database, 1,000 timers due at once",
     f"{TIMERS} timers, {TIMER_PROCESSES} processes",
     "each timer's post reaches the Slack stand-in exactly once; each process delivered some"),
    ("the process that claimed a running round's reveal is SIGKILLed while it holds the claim (before posting)",
     f"3 processes, lease {LEASE} s",
     "another process reveals within the lease plus a tick; each question posted once and revealed once; one summary"),
    ("four processes answer 5,000 button clicks from 500 learners, 500 of them sent to two processes at once",
     f"{LEARNERS} learners × {ANSWERS_EACH} answers, {ANSWER_PROCESSES} processes",
     "every acknowledged answer stored exactly once; the leaderboard equals a single process's of the same answers"),
]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def database(pg_server: PgServer) -> Iterator[str]:
    """A fresh, migrated PostgreSQL database of its own."""
    url = pg_server.new_database()
    yield url
    pg_server.drop(url)


@pytest.fixture
async def fake() -> AsyncIterator[SlackStandIn]:
    async with SlackStandIn() as standin:
        yield standin


def environment(tmp_path: Path, url: str, fake: SlackStandIn | None = None, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if "PROXY" not in k.upper() and not k.startswith(("SLACK_", "DISCORD_", "STUDYBOT_", "FLEET_"))}
    env.update(STUDYBOT_DATABASE_URL=url, STUDYBOT_CONTENT=str(PACK), STUDYBOT_RESULTS_DIR=str(tmp_path / "results"),
               STUDYBOT_LOG_LEVEL="WARNING", PYTHONPATH=f"{REPO}{os.pathsep}{HERE}", **extra)
    if fake is not None:
        env.update(SLACK_BOT_TOKEN=fake.bot_token, SLACK_SIGNING_SECRET=fake.signing_secret,
                   SLACK_API_URL=fake.api_url, STUDYBOT_HTTP_HOST="127.0.0.1")
    return env


class Worker:
    """One fleet_worker.py process; its stdout lines are collected as they come."""

    def __init__(self, proc: asyncio.subprocess.Process, folder: Path, port: int | None) -> None:
        self.proc = proc
        self.folder = folder
        self.port = port
        self.lines: list[str] = []
        self.changed = asyncio.Event()
        self._reader = asyncio.create_task(self._read())

    @classmethod
    async def start(cls, mode: str, env: dict[str, str], folder: Path, http: bool = True) -> Worker:
        folder.mkdir(parents=True, exist_ok=True)  # its own folder: its own pid file, no developer's .env
        port = free_port() if http else None
        own = {**env, **({"STUDYBOT_HTTP_PORT": str(port)} if port else {})}
        with (folder / "log").open("ab") as log:
            proc = await asyncio.create_subprocess_exec(
                sys.executable, str(HERE / "fleet_worker.py"), mode, env=own, cwd=folder, stderr=log,
                stdin=asyncio.subprocess.PIPE if mode == "answer" else asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE)
        return cls(proc, folder, port)

    async def _read(self) -> None:
        assert self.proc.stdout is not None
        while line := await self.proc.stdout.readline():
            self.lines.append(line.decode().rstrip("\n"))
            self.changed.set()

    async def serving(self) -> None:
        """Wait until its HTTP port takes connections (the scheduler starts right after)."""
        deadline = time.monotonic() + READY_WITHIN
        while time.monotonic() < deadline and self.proc.returncode is None:
            try:
                _, writer = await asyncio.open_connection("127.0.0.1", self.port)
                writer.close()
                return
            except OSError:
                await asyncio.sleep(0.05)
        pytest.fail("a studybot process did not start:\n" + self.log()[-2000:])

    def log(self) -> str:
        return (self.folder / "log").read_text(errors="replace")

    async def stop(self) -> int:
        """SIGTERM, and its exit code once it ended (the output read to the end)."""
        if self.proc.returncode is None:
            self.proc.send_signal(signal.SIGTERM)
        code = await asyncio.wait_for(self.proc.wait(), 15)
        await self._reader
        return code

    def delivered(self) -> int:
        return int(next(line.split()[1] for line in self.lines if line.startswith("DELIVERED")))


async def until(condition: Callable[[], Awaitable[bool]], what: str, within: float = 60.0,
                workers: Sequence[Worker] = ()) -> None:
    """Poll `condition` until it holds; past `within` seconds the test fails, with the processes' logs."""
    deadline = time.monotonic() + within
    while not await condition():
        if time.monotonic() > deadline:
            logs = "\n".join(w.log()[-1500:] for w in workers)
            pytest.fail(f"timed out waiting for {what}\n{logs}")
        await asyncio.sleep(0.05)


async def test_three_processes_fire_a_thousand_due_timers_exactly_once(database: str, fake: SlackStandIn,
                                                                        tmp_path: Path) -> None:
    store = await Store.open(database, SystemClock())
    later = store.clock.now().replace(year=2100)
    try:  # 1,000 stopped rounds in 1,000 channels, each with its summary timer (not yet due)
        starter = Actor("slack", COHORT, "U0", "starter")

        async def stopped_round(n: int) -> int:
            round_id, _ = await store.rounds.open(Place("slack", COHORT, f"C{n:04d}"), starter, "core-basics",
                                                  ["core-q1"], rounds.timer_key, later)
            await store.rounds.close(round_id, rounds.timer_key)
            await store.timers.set(f"{rounds.END}:{round_id}", later)
            return round_id

        # the rounds are stored before the processes start: a round caught open between its steps here would be
        # one whose timer was lost, which a starting process mends (a test's steps, not the bot's transaction)
        await asyncio.gather(*(stopped_round(n) for n in range(TIMERS)))
        env = environment(tmp_path, database, fake)  # the default lease: far longer than a delivery takes
        fleet = await asyncio.gather(*(Worker.start("run", env, tmp_path / f"p{n}") for n in range(TIMER_PROCESSES)))
        try:  # their timers become due once all serve
            await asyncio.gather(*(w.serving() for w in fleet))
            await store.engine.write(lambda c: c.execute("UPDATE timers SET due_at = ?", (store.engine.now(),)))

            async def all_fired() -> bool:
                return await store.count("timers") == 0 and len(fake.calls_to("chat.postMessage")) >= TIMERS

            await until(all_fired, "every timer to fire", workers=fleet)
            await asyncio.sleep(2 * TICK)  # a timer fired twice would post again within a tick or two
        finally:
            codes = list(await asyncio.gather(*(w.stop() for w in fleet)))
    finally:
        await store.close()
    assert codes == [0] * TIMER_PROCESSES, [w.log()[-1000:] for w in fleet]
    posts = Counter(call.params["channel"] for call in fake.calls_to("chat.postMessage"))
    assert posts == {f"C{n:04d}": 1 for n in range(TIMERS)}
    assert all(call.params["text"].startswith("Round over") for call in fake.calls_to("chat.postMessage"))
    shares = [w.delivered() for w in fleet]
    assert sum(shares) == TIMERS and all(shares), shares  # every process took part


async def test_a_round_survives_the_sigkill_of_the_process_holding_its_timer(database: str, fake: SlackStandIn,
                                                                            tmp_path: Path) -> None:
    config = tmp_path / "studybot.yaml"
    config.write_text("rounds:\n  seconds: 5\n  shortest: 5\n")  # a question's time longer than lease + tick
    stall = tmp_path / "stall"
    stall.touch()  # the first reveal waits, claimed, in whichever process claims it
    env = environment(tmp_path, database, fake, STUDYBOT_CONFIG=str(config), FLEET_STALL=str(stall),
                      STUDYBOT_TIMER_LEASE=str(LEASE))
    fleet = await asyncio.gather(*(Worker.start("run", env, tmp_path / f"p{n}") for n in range(3)))
    try:
        await asyncio.gather(*(w.serving() for w in fleet))
        status, _ = await post_signed(f"http://127.0.0.1:{fleet[0].port}/slack/events",
                                      *slash_command("/quiz", "round 2", user_id="U0001",
                                                     response_url=fake.response_url("starter")))
        assert status == 200

        async def stalled() -> bool:
            return any(line.startswith("STALLED") for w in fleet for line in w.lines)

        await until(stalled, "a process to claim the first reveal", within=20, workers=fleet)
        stall.unlink()
        [owner] = [w for w in fleet if any(line.startswith("STALLED") for line in w.lines)]
        owner.proc.kill()
        killed_at = time.monotonic()
        assert await owner.proc.wait() == -signal.SIGKILL

        async def revealed() -> bool:
            return bool(fake.calls_to("chat.update"))

        await until(revealed, "another process to reveal the first question", within=20, workers=fleet)
        takeover = time.monotonic() - killed_at

        async def summary_posted() -> bool:
            return any(c.params.get("text", "").startswith("Round over") for c in fake.calls_to("chat.postMessage"))

        await until(summary_posted, "the round's summary", within=30, workers=fleet)
        await asyncio.sleep(2 * TICK)  # a repeated step would show within a tick or two
        survivors = [w for w in fleet if w is not owner]
    finally:
        await asyncio.gather(*(w.stop() for w in fleet if w.proc.returncode is None))
    assert takeover <= LEASE + TICK + 2.0, takeover  # the lease, a tick, and room for a loaded machine
    posts = [c.params.get("text", "") for c in fake.calls_to("chat.postMessage")]
    questions = [t for t in posts if t.startswith("Round · question")]
    assert sorted(t.split(" · ")[1] for t in questions) == ["question 1 of 2", "question 2 of 2"], posts
    assert sum(t.startswith("Round over") for t in posts) == 1, posts
    edits = Counter(c.params["ts"] for c in fake.calls_to("chat.update"))
    assert len(edits) == 2 and set(edits.values()) == {1}, edits  # each question revealed once
    assert sum(w.delivered() for w in survivors) == 4  # two reveals, the second question, the summary


async def test_four_processes_store_every_acknowledged_answer_once(database: str, pg_server: PgServer,
                                                                  tmp_path: Path) -> None:
    plan = answer_plan()
    tokens = await make_prompts(Settings(database_url=database, content_dir=PACK), plan)
    env = environment(tmp_path, database)
    fleet = await asyncio.gather(*(Worker.start("answer", env, tmp_path / f"a{n}", http=False)
                                   for n in range(ANSWER_PROCESSES)))
    acknowledged: dict[str, str] = {}  # request number -> the reply's first line
    waiting: dict[str, asyncio.Future[str]] = {}
    try:
        for w in fleet:
            await until(lambda w=w: _ready(w), "the answering processes", within=READY_WITHIN, workers=fleet)

        async def collect(w: Worker) -> None:
            seen = 0
            while w.proc.returncode is None or seen < len(w.lines):
                await w.changed.wait()
                w.changed.clear()
                for line in w.lines[seen:]:
                    n, _, text = line.partition(" ")
                    if n in waiting and not waiting[n].done():
                        waiting[n].set_result(text)
                seen = len(w.lines)

        collectors = [asyncio.create_task(collect(w)) for w in fleet]

        async def click(worker: Worker, n: str, user: str, token: str) -> None:
            waiting[n] = asyncio.get_running_loop().create_future()
            assert worker.proc.stdin is not None
            worker.proc.stdin.write(f"{n} {user} {token}\n".encode())
            acknowledged[n] = await asyncio.wait_for(waiting[n], 60)

        async def learner(index: int, user: str) -> None:  # one learner's answers in order, over every process
            for k, token in enumerate(tokens[user]):
                first = fleet[(index + k) % ANSWER_PROCESSES]
                if k % REPEAT_EVERY == 0:  # pressed twice at once, in two processes
                    second = fleet[(index + k + 1) % ANSWER_PROCESSES]
                    await asyncio.gather(click(first, f"{user}.{k}", user, token),
                                         click(second, f"{user}.{k}b", user, token))
                else:
                    await click(first, f"{user}.{k}", user, token)

        await asyncio.wait_for(asyncio.gather(*(learner(i, u) for i, u in enumerate(tokens))), 120)
        for w in fleet:
            assert w.proc.stdin is not None
            w.proc.stdin.close()
        codes = [await asyncio.wait_for(w.proc.wait(), 30) for w in fleet]
        for task in collectors:
            task.cancel()
    finally:
        for w in fleet:
            if w.proc.returncode is None:
                w.proc.kill()
                await w.proc.wait()
    assert codes == [0] * ANSWER_PROCESSES, [w.log()[-1000:] for w in fleet]
    graded = [n for n, text in acknowledged.items() if text.startswith(("✅ Correct", "❌ Not quite"))]
    already = [n for n, text in acknowledged.items() if text.startswith("You already answered")]
    assert len(graded) == LEARNERS * ANSWERS_EACH and len(already) == LEARNERS * ANSWERS_EACH // REPEAT_EVERY, \
        Counter(text.split(" ")[0] for text in acknowledged.values())

    bot = await StudyBot.start(Settings(database_url=database, content_dir=PACK), SystemClock())
    try:
        rows = await bot.store.engine.read("SELECT a.prompt_id, COUNT(*) AS n FROM answers a GROUP BY a.prompt_id")
        assert {r["prompt_id"]: r["n"] for r in rows} == {t.split(".")[0]: 1 for ts in tokens.values() for t in ts}
        fleet_board = await boards(bot)
    finally:
        await bot.close()

    alone = await single_process_board(tmp_path, plan)
    assert fleet_board == alone
    assert fleet_board[1].count("\n") > 5  # a real board, not an empty one


async def _ready(w: Worker) -> bool:
    if w.proc.returncode is not None:
        pytest.fail("an answering process ended:\n" + w.log()[-2000:])
    return "READY" in w.lines


def answer_plan() -> dict[str, list[tuple[str, bool]]]:
    """Each learner's answers in order: (question id, right or not), varied so that the board has ranks;
    only a learner's first answer to a question scores, so the order matters."""
    library = check_library(PACK).library
    asked = [q for q in library.questions.values() if q.kind == "mc"]
    return {f"U{n:04d}": [(asked[(n + k) % len(asked)].id, (n * 7 + k * 3) % 5 < 3) for k in range(ANSWERS_EACH)]
            for n in range(LEARNERS)}


async def make_prompts(settings: Settings, plan: dict[str, list[tuple[str, bool]]]) -> dict[str, list[str]]:
    """A practice prompt per planned answer, stored through a bot on `settings`; each learner's button
    tokens (the planned choice of each)."""
    bot = await StudyBot.start(settings, SystemClock())
    try:
        async def one(user: str, question_id: str, right: bool) -> str:
            question = bot.library.questions[question_id]
            prompt = await bot.store.prompts.new(QUESTION, PLACE, Actor("slack", COHORT, user, user.lower()),
                                                 lesson_id=question.lesson_id, item_id=question.id,
                                                 mode=AnswerMode.PRACTICE)
            index = question.correct_index if right else (question.correct_index + 1) % len(question.choices)
            return f"{prompt.id}.{index}"

        made = iter(await asyncio.gather(*(one(user, q, right) for user, picks in plan.items() for q, right in picks)))
    finally:
        await bot.close()
    return {user: [next(made) for _ in picks] for user, picks in plan.items()}


async def boards(bot: StudyBot) -> tuple[list[tuple[str, int]], str]:
    """Every learner's points this week, and the week's board as /leaderboard shows it."""
    rows = await bot.store.engine.read("SELECT l.user_id, w.points FROM weekly_scores w JOIN learners l"
                                       " ON l.id = w.learner_id ORDER BY l.user_id")
    cohort = PLACE_COHORT
    return [(r["user_id"], r["points"]) for r in rows], await board_text(bot.ctx, cohort, bot.ctx.week(cohort))


async def single_process_board(tmp_path: Path, plan: dict[str, list[tuple[str, bool]]]) -> tuple[list, str]:
    """The same answers, each learner's in order, through one process on its own database."""
    settings = Settings(db_path=tmp_path / "alone.db", content_dir=PACK)
    tokens = await make_prompts(settings, plan)
    bot = await StudyBot.start(settings, SystemClock())
    try:
        async def learner(user: str) -> None:
            for token in tokens[user]:
                await bot.handle(ChoiceMade(token, Actor("slack", COHORT, user, user.lower()), PLACE))

        await asyncio.gather(*(learner(u) for u in tokens))
        return await boards(bot)
    finally:
        await bot.close()
