"""PostgreSQL for the tests: a server, a migrated template database, and a fresh database per test.

The server is the one STUDYBOT_TEST_DATABASE_URL names (`.ci/run` sets it); without it, a throwaway
server is started in a temporary folder when `initdb` and `pg_ctl` are installed (as the `postgres`
user when run as root, since PostgreSQL refuses root), and stopped at the end of the session.
Otherwise the PostgreSQL tests are skipped with one line saying how to run them.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import psycopg
from psycopg.conninfo import conninfo_to_dict

from bot.store.postgres_engine import PgConn, migrate

ENV = "STUDYBOT_TEST_DATABASE_URL"
HOW = (f"PostgreSQL tests skipped: set {ENV}=postgresql://user@host:port/db (a server where that user may "
       "create databases), or install PostgreSQL's initdb and pg_ctl")


def with_database(url: str, name: str) -> str:
    """The same server's URL for another database."""
    return urlsplit(url)._replace(path="/" + name).geturl()


class PgServer:
    """A server where the tests may create databases; each from a template migrated once."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.session = uuid.uuid4().hex[:8]
        self.template = f"studybot_tmpl_{self.session}"
        self._made = 0
        self._reused: str | None = None
        with self.admin() as c:
            c.execute(f"CREATE DATABASE {self.template}")
        with psycopg.connect(with_database(url, self.template), autocommit=True) as raw:
            migrate(PgConn(raw))

    def admin(self) -> psycopg.Connection:
        return psycopg.connect(self.url, autocommit=True)

    def clean_database(self) -> str:
        """The session's reused database, emptied (faster than a new one; for one process at a time)."""
        if self._reused is None:
            self._reused = self.new_database()
        with psycopg.connect(self._reused, autocommit=True) as c:
            tables = [r[0] for r in c.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public'"
                                              " AND tablename NOT IN ('schema_version', 'area_versions')")]
            c.execute(f"TRUNCATE {', '.join(tables)} RESTART IDENTITY CASCADE")
        return self._reused

    def new_database(self) -> str:
        """A fresh, migrated database's URL."""
        return self.empty_database(template=self.template)

    def empty_database(self, template: str | None = None) -> str:
        """A fresh database without studybot's schema (or a copy of `template`)."""
        self._made += 1
        name = f"studybot_t_{self.session}_{self._made}"
        with self.admin() as c:
            c.execute(f"CREATE DATABASE {name}" + (f" TEMPLATE {template}" if template else ""))
        return with_database(self.url, name)

    def drop(self, url: str) -> None:
        name = conninfo_to_dict(url)["dbname"]
        with self.admin() as c:
            c.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")

    def close(self) -> None:
        with self.admin() as c:
            if self._reused is not None:
                c.execute(f"DROP DATABASE IF EXISTS {conninfo_to_dict(self._reused)['dbname']} WITH (FORCE)")
            c.execute(f"DROP DATABASE IF EXISTS {self.template} WITH (FORCE)")


def _binaries() -> Path | None:
    found = shutil.which("initdb")
    if found and shutil.which("pg_ctl"):
        return Path(found).resolve().parent
    versions = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(p.split("/")[-3]))
    return Path(versions[-1]).parent if versions else None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def throwaway_server() -> Iterator[str] | None:
    """Start a server in a temporary folder (None: PostgreSQL is not installed); yields its URL."""
    bindir = _binaries()
    if bindir is None:
        return None

    def serve() -> Iterator[str]:
        folder = Path(tempfile.mkdtemp(prefix="studybot-pg-"))
        prefix: list[str] = []
        if os.geteuid() == 0:
            user = pwd.getpwnam("postgres") if _has_user("postgres") else pwd.getpwnam("nobody")
            os.chown(folder, user.pw_uid, user.pw_gid)
            prefix = ["setpriv", f"--reuid={user.pw_uid}", f"--regid={user.pw_gid}", "--clear-groups"]
        port = free_port()
        data = folder / "data"
        subprocess.run([*prefix, str(bindir / "initdb"), "-D", str(data), "-U", "postgres", "-A", "trust",
                        "--no-sync", "-E", "UTF8"], check=True, capture_output=True)
        options = (f"-c listen_addresses=127.0.0.1 -c port={port} -c unix_socket_directories={folder} "
                   "-c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200")
        subprocess.run([*prefix, str(bindir / "pg_ctl"), "-D", str(data), "-l", str(folder / "log"), "-w", "-o",
                        options, "start"], check=True, capture_output=True)
        try:
            yield f"postgresql://postgres@127.0.0.1:{port}/postgres"
        finally:
            subprocess.run([*prefix, str(bindir / "pg_ctl"), "-D", str(data), "-m", "immediate", "stop"],
                           capture_output=True)
            shutil.rmtree(folder, ignore_errors=True)

    return serve()


def _has_user(name: str) -> bool:
    try:
        pwd.getpwnam(name)
    except KeyError:
        return False
    return True
