"""PostgreSQL backups with pg_dump and pg_restore: the password goes to them through their
environment (PGPASSWORD), never their argument list (which `ps` shows every user); the dump is
written 0600 (it holds every bot token); what they print is masked; and a restore is refused while
any studybot process of that database is alive (the processes table lists them)."""

from __future__ import annotations

import os
import shutil
import subprocess
from datetime import UTC, datetime
from pathlib import Path

import psycopg
from psycopg import errors as pg_errors

from bot.core.errors import SetupError, StoreUnavailable
from bot.store import pg_url
from bot.store.pg_url import redacted
from bot.store.private import create_private
from bot.store.processes import ALIVE_WITHIN


def _run(tool: str, argv: list[str], url: str, stdout: int | None = None) -> subprocess.CompletedProcess[str]:
    dbname, secret = pg_url.for_tools(url)
    return subprocess.run([tool, *argv, "--dbname", dbname], env={**os.environ, **secret}, stdout=stdout,
                          stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True)


def _detail(done: subprocess.CompletedProcess[str], url: str) -> str:
    return pg_url.masked(" ".join((done.stderr or "").split()), url)[:160]


def dump(url: str, target: Path) -> None:
    """pg_dump's custom format into a new file `target`, mode 0600; SetupError says why not."""
    tool = shutil.which("pg_dump")
    if tool is None:
        raise SetupError(f"pg_dump is not installed here (postgresql-client); back up PostgreSQL with: "
                         f"(umask 077; PGPASSWORD=… pg_dump -Fc -f {target} -h HOST -U USER DATABASE)")
    pg_url.readable(url)
    try:
        fd = create_private(target)
    except OSError as exc:
        raise SetupError(f"cannot write the backup {target}: {exc.strerror}; choose a new path in a folder "
                         "this user can write") from exc
    try:
        done = _run(tool, ["-Fc"], url, stdout=fd)
    finally:
        os.close(fd)
    if done.returncode != 0:
        target.unlink(missing_ok=True)
        raise SetupError(f"pg_dump could not back up {redacted(url)}: {_detail(done, url)}")


def restore(backup: Path, url: str) -> None:
    """pg_restore a dump made by `studybot backup` with every studybot process of the database
    stopped; SetupError says what stops it."""
    if not backup.is_file():
        raise SetupError(f"cannot restore {backup}: no such file; give the path of a backup made by studybot backup")
    tool = shutil.which("pg_restore")
    if tool is None:
        raise SetupError("pg_restore is not installed here (postgresql-client); with every studybot stopped, run: "
                         f"PGPASSWORD=… pg_restore --clean --if-exists --no-owner -h HOST -U USER -d DATABASE {backup}")
    pg_url.readable(url)
    if alive := alive_processes(url):
        listed = ", ".join(alive[:3]) + (f" and {len(alive) - 3} more" if len(alive) > 3 else "")
        raise SetupError(f"cannot restore into {redacted(url)}: {len(alive)} studybot process(es) run on it "
                         f"({listed}); stop every one of them first, then restore")
    done = _run(tool, ["--clean", "--if-exists", "--no-owner", str(backup)], url, stdout=subprocess.DEVNULL)
    if done.returncode != 0:
        raise SetupError(f"pg_restore could not restore {backup} into {redacted(url)}: {_detail(done, url)}")


def alive_processes(url: str) -> list[str]:
    """The studybot processes that beat on the database within ALIVE_WITHIN ("host pid N")."""
    since = (datetime.now(UTC) - ALIVE_WITHIN).isoformat(timespec="microseconds")
    try:
        with psycopg.connect(url, autocommit=True, connect_timeout=5) as c:
            rows = c.execute("SELECT host, pid FROM processes WHERE beat_at >= %s ORDER BY beat_at DESC",
                             (since,)).fetchall()
    except pg_errors.UndefinedTable:
        return []
    except psycopg.Error as exc:
        raise StoreUnavailable(pg_url.explain(url, exc)) from exc
    return [f"{host} pid {pid}" for host, pid in rows]

