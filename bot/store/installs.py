"""Installs: the workspaces that added studybot through a platform's OAuth flow (one row per cohort,
with its bot token and, when the platform rotates tokens, the refresh token and expiry), and the
one-time OAuth states of installs in progress.

An uninstall wipes the tokens at once but keeps the row (when it happened), so that the cohort's
scores stay until the operator's retention runs out (`purge_uninstalled`)."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime, timedelta

from bot.core.messages import Cohort
from bot.store.engine import Conn, Engine, Row, iso
from bot.store.sealing import Sealer

log = logging.getLogger("studybot.store")

SCHEMA = {
    9: """
    CREATE TABLE installs (
        platform TEXT NOT NULL,
        cohort TEXT NOT NULL,
        enterprise_id TEXT,
        is_enterprise_install INTEGER NOT NULL DEFAULT 0,
        team_name TEXT NOT NULL DEFAULT '',
        app_id TEXT,
        bot_token TEXT,
        bot_id TEXT,
        bot_user_id TEXT,
        bot_scopes TEXT NOT NULL DEFAULT '',
        refresh_token TEXT,
        token_expires_at INTEGER,
        installer_id TEXT NOT NULL DEFAULT '',
        installed_at TEXT NOT NULL,
        uninstalled_at TEXT,
        PRIMARY KEY (platform, cohort)
    ){without_rowid};
    CREATE TABLE oauth_states (
        state TEXT PRIMARY KEY,
        expires_at TEXT NOT NULL
    ){without_rowid}
    """,
}
SAVE = ("INSERT INTO installs (platform, cohort, enterprise_id, is_enterprise_install, team_name, app_id, bot_token,"
        " bot_id, bot_user_id, bot_scopes, refresh_token, token_expires_at, installer_id, installed_at)"
        " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?) ON CONFLICT (platform, cohort) DO UPDATE SET"
        " enterprise_id = excluded.enterprise_id, is_enterprise_install = excluded.is_enterprise_install,"
        " team_name = excluded.team_name, app_id = excluded.app_id, bot_token = excluded.bot_token,"
        " bot_id = excluded.bot_id, bot_user_id = excluded.bot_user_id, bot_scopes = excluded.bot_scopes,"
        " refresh_token = excluded.refresh_token, token_expires_at = excluded.token_expires_at,"
        " installer_id = CASE installs.installer_id WHEN '' THEN excluded.installer_id ELSE installs.installer_id END,"
        " uninstalled_at = NULL RETURNING installer_id")
# A purged cohort's rows: its learners (and by cascade their answers, scores and cards), then the rest.
PURGE = ("DELETE FROM learners WHERE platform = ? AND cohort = ?",
         "DELETE FROM prompts WHERE platform = ? AND cohort = ?",
         "DELETE FROM rounds WHERE platform = ? AND cohort = ?",
         "DELETE FROM glossary_lookups WHERE platform = ? AND cohort = ?",
         "DELETE FROM installs WHERE platform = ? AND cohort = ?")


@dataclass(frozen=True)
class Install:
    """One workspace's install. `cohort` is the team id (an org-wide install's: the enterprise id)."""

    platform: str
    cohort: str
    bot_token: str | None
    bot_id: str | None = None
    bot_user_id: str | None = None
    bot_scopes: str = ""
    refresh_token: str | None = None
    token_expires_at: int | None = None  # Unix seconds; None: the token does not expire
    installer_id: str = ""
    team_name: str = ""
    app_id: str | None = None
    enterprise_id: str | None = None
    is_enterprise_install: bool = False
    installed_at: datetime | None = None
    uninstalled_at: datetime | None = None

    @property
    def installed(self) -> bool:
        return self.uninstalled_at is None

    @property
    def in_cohort(self) -> Cohort:
        return Cohort(self.platform, self.cohort)


def _install(r: Row, sealer: Sealer | None = None) -> Install:
    """The row as an Install; its tokens decrypted with `sealer` (None: left as stored, for listings)."""
    reveal = sealer.open if sealer is not None else (lambda stored: stored)
    return Install(platform=r["platform"], cohort=r["cohort"], bot_token=reveal(r["bot_token"]), bot_id=r["bot_id"],
                   bot_user_id=r["bot_user_id"], bot_scopes=r["bot_scopes"], refresh_token=reveal(r["refresh_token"]),
                   token_expires_at=r["token_expires_at"], installer_id=r["installer_id"],
                   team_name=r["team_name"], app_id=r["app_id"], enterprise_id=r["enterprise_id"],
                   is_enterprise_install=bool(r["is_enterprise_install"]),
                   installed_at=datetime.fromisoformat(r["installed_at"]),
                   uninstalled_at=datetime.fromisoformat(r["uninstalled_at"]) if r["uninstalled_at"] else None)


def read_installs(c: Conn, sealer: Sealer | None = None) -> list[Install]:
    """Every install, uninstalled ones too (for `studybot check`, on a read-only connection: its tokens
    as stored unless a sealer is given)."""
    return [_install(r, sealer) for r in c.execute("SELECT * FROM installs ORDER BY platform, cohort").fetchall()]


class Installs:
    def __init__(self, engine: Engine, sealer: Sealer | None = None) -> None:
        self._engine = engine
        self._sealer = sealer or Sealer()

    async def save(self, install: Install) -> str:
        """Record an install (again) and return its installer: a reinstall replaces the tokens and
        clears the uninstall, but keeps the first installer and when it was first installed."""
        values = (install.platform, install.cohort, install.enterprise_id, int(install.is_enterprise_install),
                  install.team_name[:200], install.app_id, self._sealer.seal(install.bot_token), install.bot_id,
                  install.bot_user_id, install.bot_scopes, self._sealer.seal(install.refresh_token),
                  install.token_expires_at, install.installer_id,
                  iso(install.installed_at) if install.installed_at else self._engine.now())
        return str(await self._engine.write(lambda c: c.execute(SAVE, values).fetchone()[0]))

    async def rotated(self, platform: str, cohort: str, token: str, refresh_token: str | None,
                      expires_at: int | None) -> None:
        """A refreshed token replaces the installed one (an uninstalled workspace stays so)."""
        await self._engine.write(lambda c: c.execute(
            "UPDATE installs SET bot_token = ?, refresh_token = ?, token_expires_at = ?"
            " WHERE platform = ? AND cohort = ? AND uninstalled_at IS NULL",
            (self._sealer.seal(token), self._sealer.seal(refresh_token), expires_at, platform, cohort)))

    async def find(self, platform: str, cohort: str) -> Install | None:
        """The cohort's install while it is installed, else None."""
        rows = await self._engine.read("SELECT * FROM installs WHERE platform = ? AND cohort = ?"
                                       " AND uninstalled_at IS NULL", (platform, cohort))
        return _install(rows[0], self._sealer) if rows else None

    async def listed(self, platform: str | None = None) -> list[Install]:
        """Every install, uninstalled ones too, by platform and cohort."""
        found = await self._engine.run(read_installs, self._sealer)
        return [i for i in found if platform is None or i.platform == platform]

    async def reseal(self) -> int:
        """Encrypt the tokens stored in plaintext (or under an older key) with the first key: how many
        rows were written. Without a key, a warning says how many rows hold plaintext tokens."""
        sealer = self._sealer

        def run(c: Conn) -> int:
            rows = c.execute("SELECT platform, cohort, bot_token, refresh_token FROM installs"
                             " WHERE bot_token IS NOT NULL OR refresh_token IS NOT NULL").fetchall()
            if not sealer.keyed:
                for r in rows:
                    sealer.open(r["bot_token"])  # an encrypted one: StoreUnavailable says which key is missing
                return -len(rows)
            stale = [r for r in rows if sealer.stale(r["bot_token"]) or sealer.stale(r["refresh_token"])]
            for r in stale:
                c.execute("UPDATE installs SET bot_token = ?, refresh_token = ? WHERE platform = ? AND cohort = ?",
                          (sealer.seal(sealer.open(r["bot_token"])), sealer.seal(sealer.open(r["refresh_token"])),
                           r["platform"], r["cohort"]))
            return len(stale)

        written = await self._engine.write(run)
        if written < 0:
            log.warning("%d workspace(s) have their bot token stored unencrypted: set STUDYBOT_SECRET_KEY to "
                        "encrypt the stored tokens (see the README's Security section)", -written)
        elif written:
            log.info("encrypted the stored tokens of %d workspace(s) with the first key of STUDYBOT_SECRET_KEY",
                     written)
        return max(written, 0)

    async def uninstall(self, platform: str, cohort: str) -> bool:
        """The workspace removed studybot: its tokens are wiped now, its scores kept; False if it was
        not installed."""
        now = self._engine.now()

        def run(c: Conn) -> bool:
            return c.execute("UPDATE installs SET bot_token = NULL, refresh_token = NULL, token_expires_at = NULL,"
                             " uninstalled_at = ? WHERE platform = ? AND cohort = ? AND uninstalled_at IS NULL",
                             (now, platform, cohort)).rowcount > 0

        return await self._engine.write(run)

    async def purge_uninstalled(self, kept: timedelta) -> list[Cohort]:
        """Delete everything of the cohorts uninstalled longer than `kept` ago (learners and, by
        cascade, their answers and scores; rounds, prompts, lookups; the install row): one transaction."""
        before = iso(self._engine.clock.now() - kept)

        def run(c: Conn) -> list[Cohort]:
            gone = [Cohort(r["platform"], r["cohort"]) for r in c.execute(
                "SELECT platform, cohort FROM installs WHERE uninstalled_at IS NOT NULL AND uninstalled_at < ?",
                (before,)).fetchall()]
            for cohort in gone:
                for statement in PURGE:
                    c.execute(statement, (cohort.platform, cohort.id))
            return gone

        return await self._engine.write(run)

    # ------------------------------------------------------------ OAuth states

    async def issue_state(self, state: str, ttl: timedelta, most: int) -> bool:
        """Remember a state handed to an install in progress for `ttl`, unless `most` wait unused
        already (False); expired ones are dropped first."""
        now = self._engine.clock.now()

        def run(c: Conn) -> bool:
            c.execute("DELETE FROM oauth_states WHERE expires_at < ?", (iso(now),))
            if c.execute("SELECT count(*) FROM oauth_states").fetchone()[0] >= most:
                return False
            c.execute("INSERT INTO oauth_states (state, expires_at) VALUES (?, ?)", (state, iso(now + ttl)))
            return True

        return await self._engine.write(run)

    async def consume_state(self, state: str) -> bool:
        """Whether the state was issued and has not expired; either way it can never be used again."""
        now = self._engine.now()

        def run(c: Conn) -> bool:
            row = c.execute("DELETE FROM oauth_states WHERE state = ? RETURNING expires_at", (state,)).fetchone()
            return row is not None and row[0] >= now

        return await self._engine.write(run)
