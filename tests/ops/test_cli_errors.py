"""Every start-up and CLI failure an operator meets is one line, `studybot: <what>: <what to do>`,
with exit status 2 and no traceback (unless --debug); `studybot check` and `--version`; `.env`."""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import Run
from fake_platform import REJECTED, platform
from support import CORE_PACK, REPO

from adapters import cli, platforms
from bot.core.clock import SystemClock
from bot.core.errors import ConfigError
from bot.store import Store


def failure(result: tuple[int, str, str]) -> str:
    """The one stderr line of a failure with exit status 2."""
    code, _, err = result
    assert code == 2, err
    assert "Traceback" not in err
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("studybot: "), err
    return lines[0]


def config(tmp_path: Path, text: str) -> str:
    path = tmp_path / "studybot.yaml"
    path.write_text(text)
    return str(path)


SLACK_HTTP = {"SLACK_BOT_TOKEN": "xoxb-1", "SLACK_SIGNING_SECRET": "s", "STUDYBOT_HTTP_HOST": "127.0.0.1"}


@pytest.mark.parametrize("command", ["run", "check"])
@pytest.mark.parametrize("text, says", [
    ("instructor: {slack: [U1]}", "instructor: unknown key (did you mean 'instructors'?)"),
    ("cohorts: {T1: {platform: slack, leaderbord: {channel: C1}}}",
     "cohorts.T1.leaderbord: unknown key (did you mean 'leaderboard'?)"),
    ("rounds: {seconds: 2}", "rounds.seconds: must be a whole number of seconds from 5 to 3600, not 2"),
    ("discord: {sync_guilds: [abc]}", "discord.sync_guilds[0]: 'abc' is not a server id"),
    ("cohorts: {T1: {platform: slack, leaderboard: {channel: C1, time: 20:00}}}",
     'cohorts.T1.leaderboard.time: YAML reads an unquoted 20:00 as the number 1200; quote it: time: "20:00"'),
    ("cohorts: {T1: {platform: slack, leaderboard: {channel: null}}}", "cohorts.T1.leaderboard.channel: is empty"),
])
def test_a_config_mistake_is_one_line(studybot: Run, tmp_path: Path, command: str, text: str, says: str) -> None:
    line = failure(studybot(command, STUDYBOT_CONFIG=config(tmp_path, text), **SLACK_HTTP))
    assert line.startswith(f"studybot: {tmp_path / 'studybot.yaml'}: ") and says in line, line


@pytest.mark.parametrize("port", ["70000", "99999"])
def test_a_port_out_of_range_is_one_line(studybot: Run, port: str) -> None:
    assert failure(studybot("run", STUDYBOT_HTTP_PORT=port, **SLACK_HTTP)) == (
        f"studybot: STUDYBOT_HTTP_PORT: '{port}' is not a port number; set a free port from 1 to 65535, such as 3000")


@pytest.mark.parametrize("command", ["run", "check"])
def test_a_port_in_use_is_one_line(studybot: Run, command: str) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        line = failure(studybot(command, STUDYBOT_HTTP_PORT=str(port), **SLACK_HTTP))
    assert line == (f"studybot: STUDYBOT_HTTP_PORT: port {port} on 127.0.0.1 is in use; stop the program that holds "
                    "it or set STUDYBOT_HTTP_PORT to a free port")


@pytest.mark.parametrize("command", ["run", "check", "console"])
def test_a_missing_content_folder_is_one_line(studybot: Run, tmp_path: Path, command: str) -> None:
    missing = tmp_path / "no-content"  # studybot runs in tmp_path: the folder is named from there
    line = failure(studybot(command, STUDYBOT_CONTENT=str(missing), **SLACK_HTTP))
    assert line == ("studybot: no-content:1: folder: no such folder of lesson packs; set STUDYBOT_CONTENT or pass "
                    "a folder")


@pytest.mark.parametrize("command", ["validate", "check", "run"])
def test_content_problems_name_files_as_they_open_from_the_current_folder(
        studybot: Run, tmp_path: Path, tmp_path_factory: pytest.TempPathFactory, command: str) -> None:
    """Under the current folder a file is named from it, however the packs were given; elsewhere in full
    (never from the folder above the packs: `packs/basics/quiz.yaml` opened from nowhere)."""
    outside = tmp_path_factory.mktemp("outside").resolve()
    here = Path.cwd()
    for root in (here / "packs", outside / "packs"):
        shutil.copytree(CORE_PACK, root)
        quiz = root / "basics" / "quiz.yaml"
        quiz.write_text(quiz.read_text().replace("    type: mc", "    type: essay", 1))
    away = str(outside / "packs")
    for given, named in (("packs", "packs"), (str(here / "packs"), "packs"), (away, away),
                         (os.path.relpath(away), away)):  # ../../outside0/packs, named in full
        argv, env = ((command, given), {}) if command == "validate" else ((command,), {"STUDYBOT_CONTENT": given})
        code, out, err = studybot(*argv, **env, **SLACK_HTTP)
        [problem] = out.splitlines()[:1] if command == "validate" else err.splitlines()
        assert code == (1 if command == "validate" else 2), (given, out, err)
        assert problem.removeprefix("studybot: ").startswith(f"{named}/basics/quiz.yaml:3: questions[0].type: "), given


def test_no_platform_names_the_variables(studybot: Run) -> None:
    line = failure(studybot("run"))
    assert "no platform is configured (for slack set SLACK_BOT_TOKEN" in line
    assert "; for discord set DISCORD_TOKEN)" in line


def test_a_rejected_token_is_one_line(studybot: Run, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(platforms, "PLATFORMS", (platform(),))
    assert failure(studybot("run", FAKE_PLATFORM="reject")) == f"studybot: {REJECTED}"


def test_reload_with_no_studybot_running_is_one_line_and_signals_nobody(studybot: Run, tmp_path: Path) -> None:
    """No pid file, or one left behind by a studybot that was killed, whose process id now belongs
    to another program: that program is not sent SIGHUP (which would end it)."""
    db, marker = tmp_path / "bot.db", tmp_path / "bot.db.pid"
    expected = (f"studybot: no running studybot found for {db} (none holds {marker}); start it with studybot run, "
                "or set STUDYBOT_DB to the database it runs on")
    assert failure(studybot("reload")) == expected
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        marker.write_text(f"{other.pid}\n")
        assert failure(studybot("reload")) == expected
        with pytest.raises(subprocess.TimeoutExpired):
            other.wait(0.5)  # still running: it was not signalled
    finally:
        other.kill()
        other.wait()


def test_reload_refuses_packs_that_lack_the_lesson_of_a_question_of_the_day(studybot: Run, tmp_path: Path) -> None:
    """The running studybot would refuse them: so does the command, before it looks for the process."""
    text = "cohorts: {T1: {platform: slack, daily: {channel: C1, time: '09:00', lesson: core-basix}}}"
    line = failure(studybot("reload", STUDYBOT_CONFIG=config(tmp_path, text)))
    assert line == (f"studybot: {tmp_path / 'studybot.yaml'}: cohorts.T1.daily.lesson: there is no lesson "
                    "'core-basix'; write one of core-basics")


def test_a_usage_mistake_is_one_line(studybot: Run) -> None:
    line = failure(studybot("rnu"))
    assert line.startswith("studybot: argument command: invalid choice: 'rnu'") and "see `studybot --help`" in line


def test_an_unexpected_error_is_one_line_and_debug_shows_the_traceback(studybot: Run,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(folder: Path) -> None:
        raise RuntimeError("something\nunforeseen")

    monkeypatch.setattr(cli, "check_library", broken)
    assert failure(studybot("validate")) == ("studybot: unexpected RuntimeError: something unforeseen; run it again "
                                             "with --debug to see the traceback, and report it")
    with pytest.raises(RuntimeError):
        cli.main(["--debug", "validate"])
    with pytest.raises(ConfigError, match="STUDYBOT_LOG_LEVEL"):
        os.environ["STUDYBOT_LOG_LEVEL"] = "LOUD"
        try:
            cli.main(["--debug", "check"])
        finally:
            del os.environ["STUDYBOT_LOG_LEVEL"]


def test_debug_may_follow_the_command(studybot: Run, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STUDYBOT_LOG_LEVEL", "LOUD")
    with pytest.raises(ConfigError, match="STUDYBOT_LOG_LEVEL"):
        cli.main(["check", "--debug"])  # not "unrecognized arguments: --debug"
    assert cli.build_parser().parse_args(["check"]).debug is False
    assert cli.build_parser().parse_args(["--debug", "check"]).debug is True


@pytest.mark.parametrize("command", ["check", "console", "run"])
def test_a_results_folder_that_cannot_be_written_is_one_line(studybot: Run, tmp_path: Path, command: str) -> None:
    """Found at start-up, not by the first learner to ask for /results."""
    (tmp_path / "a-file").write_text("")
    for folder in ("/proc/nope", str(tmp_path / "a-file" / "results")):
        line = failure(studybot(command, STUDYBOT_RESULTS_DIR=folder, **SLACK_HTTP))
        assert line.startswith(f"studybot: STUDYBOT_RESULTS_DIR: cannot write results files in {folder} ("), line
        assert line.endswith("make it writable by this user, or set STUDYBOT_RESULTS_DIR to a folder that is")


def test_version(studybot: Run) -> None:
    code, out, _ = studybot("--version")
    assert code == 0 and out.strip() == f"studybot {cli.studybot_version()}" and out.split()[1][0].isdigit()


def test_check_starts_nothing_and_says_what_it_found(studybot: Run, tmp_path: Path) -> None:
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        port = free.getsockname()[1]
    code, out, err = studybot("check", STUDYBOT_CONFIG=config(tmp_path, "rounds: {seconds: 30}\n"), **SLACK_HTTP,
                              STUDYBOT_HTTP_PORT=str(port))
    assert code == 0, err
    assert out.splitlines() == [
        f"settings: OK (config {tmp_path / 'studybot.yaml'})",
        f"content: OK, 1 lesson(s), 4 questions in {CORE_PACK}",
        f"database: OK, {tmp_path / 'bot.db'} does not exist yet and will be created at start",
        "results: OK, data/results is writable",
        "platforms: slack",
    ]
    assert not (tmp_path / "bot.db").exists()


def test_dotenv_is_read_and_the_environment_wins(tmp_path: Path) -> None:
    """A subprocess, as an operator runs it: `.env` in the working directory."""
    (tmp_path / ".env").write_text(f"DISCORD_TOKEN=from-dotenv\nSTUDYBOT_CONTENT={tmp_path / 'nowhere'}\n"
                                   f"STUDYBOT_DB={tmp_path / 'from-dotenv.db'}\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SLACK_", "DISCORD_", "STUDYBOT_"))}
    env.update(STUDYBOT_CONTENT=str(CORE_PACK), PYTHONPATH=str(REPO))
    done = subprocess.run([sys.executable, "-m", "adapters.cli", "check"], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "platforms: discord" in done.stdout  # DISCORD_TOKEN came from .env
    assert f"in {CORE_PACK}" in done.stdout and f"{tmp_path / 'from-dotenv.db'} does not exist" in done.stdout


def test_health_on_a_fresh_install_says_to_start_studybot(studybot: Run, tmp_path: Path) -> None:
    code, _, err = studybot("health")
    assert code == 1 and "does not exist: start studybot (studybot run) to create it" in err, err


def test_health_lists_the_timers_given_up_without_failing(studybot: Run, tmp_path: Path) -> None:
    async def prepare() -> None:
        store = await Store.open(tmp_path / "bot.db", SystemClock())
        try:
            await store.beat()
            await store.timers.give_up("leaderboard:slack:T0001", "channel_not_found\n(archived)")
            await store.timers.cannot_post("cohorts.T0001.daily.channel", "studybot cannot post in channel C0X")
        finally:
            await store.close()

    asyncio.run(prepare())
    code, out, err = studybot("health")
    assert code == 0, err
    healthy, process, checked, warning = out.splitlines()
    assert healthy.startswith("healthy: heartbeat ") and healthy.endswith(", 1 process(es) running")
    assert process.startswith("process ") and " beat 0 s ago, up since " in process
    assert warning.startswith("warning: timer leaderboard:slack:T0001 was given up at ")
    assert warning.endswith(": channel_not_found (archived)")
    assert checked.startswith("warning: cohorts.T0001.daily.channel (checked at ")
    assert checked.endswith("): studybot cannot post in channel C0X")


@pytest.mark.parametrize("argv, buffered", [
    (("validate",), False), (("check",), False), (("health",), False), (("console",), False),
    (("disputes", "export"), False), (("health",), True), (("validate",), True),
], ids=lambda value: " ".join(value) if isinstance(value, tuple) else "buffered" if value else "unbuffered")
def test_a_reader_that_went_away_ends_it_quietly(tmp_path: Path, argv: tuple[str, ...], buffered: bool) -> None:
    """`studybot health | head -3`: once the reader of its output has gone, studybot ends as `ls | head`
    does, with no word on stderr and the status a shell shows for a closed pipe (128 + SIGPIPE); whether
    its output is written at once (PYTHONUNBUFFERED, as in the Docker image) or at exit."""
    async def beating() -> None:  # health has a running process to list
        store = await Store.open(tmp_path / "bot.db", SystemClock())
        await store.beat()
        await store.close()

    asyncio.run(beating())
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("SLACK_", "DISCORD_", "STUDYBOT_")) and k != "PYTHONUNBUFFERED"}
    env.update(STUDYBOT_CONTENT=str(CORE_PACK), STUDYBOT_DB=str(tmp_path / "bot.db"),
               STUDYBOT_RESULTS_DIR=str(tmp_path / "results"), PYTHONPATH=str(REPO),
               **({} if buffered else {"PYTHONUNBUFFERED": "1"}))
    reader, writer = os.pipe()
    os.close(reader)  # the reader went away before the first line
    try:
        done = subprocess.run([sys.executable, "-m", "adapters.cli", *argv], cwd=tmp_path, env=env,
                              stdin=subprocess.DEVNULL, stdout=writer, stderr=subprocess.PIPE, text=True, timeout=60)
    finally:
        os.close(writer)
    assert (done.returncode, done.stderr) == (128 + signal.SIGPIPE, "")


def test_a_console_whose_reader_went_away_mid_chat_ends_quietly(tmp_path: Path) -> None:
    """`studybot console | head -1`: the replies to lines typed after the reader went away are no bug,
    and the chat ends as at the end of input."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SLACK_", "DISCORD_", "STUDYBOT_"))}
    env.update(STUDYBOT_CONTENT=str(CORE_PACK), STUDYBOT_DB=str(tmp_path / "bot.db"),
               STUDYBOT_RESULTS_DIR=str(tmp_path / "results"), PYTHONPATH=str(REPO), PYTHONUNBUFFERED="1")
    console = subprocess.Popen([sys.executable, "-m", "adapters.cli", "console"], cwd=tmp_path, env=env,
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert console.stdin is not None and console.stdout is not None
    try:
        assert console.stdout.readline().startswith("studybot console.")
        console.stdout.close()  # the reader goes away after the first line
        console.stdin.write("/help\n/quiz\n")
        console.stdin.flush()
        _, err = console.communicate(timeout=60)
    finally:
        console.kill()
    assert (console.returncode, err) == (128 + signal.SIGPIPE, "")


def test_a_broken_pipe_that_is_not_the_output_is_a_failure(monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    """Only stdout's reader going away ends studybot quietly; another pipe breaking (a socket, a child's)
    is an unexpected failure, said in one line."""
    async def broken(settings, *more) -> int:
        raise BrokenPipeError(32, "Broken pipe (a socket, not the output)")

    monkeypatch.setattr(cli, "health", broken)
    with pytest.raises(SystemExit) as ended:
        cli.main(["health"])
    assert ended.value.code == 2
    assert capsys.readouterr().err.startswith("studybot: unexpected BrokenPipeError: [Errno 32] Broken pipe (a socket")
