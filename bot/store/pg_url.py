"""A PostgreSQL URL's password kept out of sight: the URL as shown (never its password), every message
built from it or from a connection error masked, a URL whose password needs percent-encoding refused
before libpq reads it (libpq would quote the bad part), and the password handed to pg_dump and
pg_restore through their environment (PGPASSWORD), never their argument list."""

from __future__ import annotations

import re
from collections.abc import Callable
from urllib.parse import unquote

from psycopg.conninfo import conninfo_to_dict, make_conninfo

from bot.core.errors import StoreUnavailable

SCHEMES = ("postgresql://", "postgres://")
MASK = "***"
# In a URL's password, these end the password or start an escape: they must be percent-encoded.
_RESERVED = re.compile(r"[/@:?#\[\] ]|%(?![0-9A-Fa-f]{2})")
_PIECES = re.compile(r"[/@:?#%\[\] ]+")
_QUOTED = re.compile(r"""["']([^"']{2,})["']""")
_KEYWORD_PASSWORD = re.compile(r"(password\s*=\s*)('(?:[^'\\]|\\.)*'|\S+)", re.I)
SHORTEST_PIECE = 3  # a password's pieces at least this long are masked wherever they appear


def _split(url: str) -> tuple[str, str, str]:
    """(scheme, user information, the rest) of a URL as written; the user information ends at the
    last '@' (a password may hold '@' unencoded: the split then hides more, never less)."""
    for scheme in SCHEMES:
        if url.startswith(scheme):
            after = url[len(scheme):]
            userinfo, at, rest = after.rpartition("@")
            return (scheme, userinfo, rest) if at else (scheme, "", after)
    return "", "", url


def raw_password(url: str) -> str:
    """The password as written in the URL (not decoded); '' when there is none."""
    _, userinfo, _ = _split(url)
    return userinfo.partition(":")[2]


def problem(url: str, given_in: str = "STUDYBOT_DATABASE_URL") -> str | None:
    """Why the URL cannot be read as intended, said without quoting it (None: it can)."""
    scheme, userinfo, rest = _split(url)
    if not scheme:
        return f"{given_in} is not a PostgreSQL URL; write postgresql://user:password@host:port/database"
    user, _, password = userinfo.partition(":")
    if _RESERVED.search(password) or _RESERVED.search(user):
        return (f"the password (or user) in {given_in} holds a character that must be percent-encoded in a URL: "
                "write %25 for %, %2F for /, %40 for @, %3A for :, %3F for ?, %23 for # (Python: "
                "urllib.parse.quote(password, safe=''))")
    try:
        conninfo_to_dict(url)
    except Exception:  # libpq's message quotes the part it could not read: never shown
        return f"{given_in} is not a PostgreSQL URL libpq can read; write postgresql://user:password@host:port/database"
    return None


def redacted(url: str) -> str:
    """The URL for messages and logs: user, host, port and database, never the password."""
    if problem(url) is not None:
        return "STUDYBOT_DATABASE_URL"
    info = conninfo_to_dict(url)
    user = f"{info['user']}@" if info.get("user") else ""
    return f"postgresql://{user}{info.get('host') or 'localhost'}:{info.get('port') or 5432}/{info.get('dbname', '')}"


def secrets_of(url: str | None) -> list[str]:
    """What of the URL must never be shown: its password as written and decoded, and each piece of
    it (libpq may quote a piece as a host, a port or a database name)."""
    if not url:
        return []
    password = raw_password(url)
    if not password:
        return []
    found = {password, unquote(password)}
    found |= {piece for piece in _PIECES.split(password) if len(piece) >= SHORTEST_PIECE}
    return sorted(found, key=len, reverse=True)


def masked(text: str, *urls: str | None) -> str:
    """`text` with every password of `urls` (and each quoted part of one) replaced by ***."""
    for url in urls:
        password = raw_password(url) if url else ""
        if not password:
            continue
        text = _QUOTED.sub(_quoted_masker(password), text)
        for secret in secrets_of(url):
            text = text.replace(secret, MASK)
    return _KEYWORD_PASSWORD.sub(lambda m: m.group(1) + MASK, text)


def _quoted_masker(password: str) -> Callable[[re.Match[str]], str]:
    """A quoted part of a message that is a piece of the password, masked (libpq quotes what it could not read)."""
    return lambda m: m.group(0).replace(m.group(1), MASK) if m.group(1) in password else m.group(0)


def for_tools(url: str) -> tuple[str, dict[str, str]]:
    """The connection string for pg_dump or pg_restore's `--dbname`, without the password, and the
    environment that carries it (PGPASSWORD): what `ps` shows of them holds no secret."""
    info = conninfo_to_dict(url)
    password = info.pop("password", None)
    return make_conninfo("", **info), ({"PGPASSWORD": str(password)} if password else {})


def readable(url: str, given_in: str = "STUDYBOT_DATABASE_URL") -> str:
    """The URL, once it is known that libpq reads it as written (StoreUnavailable says what to fix,
    without quoting it)."""
    if (unreadable := problem(url, given_in)) is not None:
        raise StoreUnavailable(unreadable)
    return url


def explain(url: str, exc: Exception, given_in: str = "STUDYBOT_DATABASE_URL") -> str:
    """One line saying why PostgreSQL cannot be used, and what to do (to the URL `given_in`, where the
    user gave it)."""
    if (unreadable := problem(url, given_in)) is not None:
        return unreadable
    where = redacted(url)
    text = masked(" ".join(str(exc).split()), url)
    info = conninfo_to_dict(url)
    if "password authentication failed" in text or "no password supplied" in text:
        return (f"PostgreSQL at {where} refused the password of user {info.get('user', '')!r}; "
                f"put the right password in {given_in}")
    if "does not exist" in text and "database" in text:
        db = info.get("dbname", "")
        return (f"the database {db!r} does not exist on {where}; create it (createdb {db}) or point {given_in} at "
                "an existing database")
    if "role" in text and "does not exist" in text:
        return f"PostgreSQL at {where} has no user {info.get('user', '')!r}; create it, or fix {given_in}"
    if any(w in text.lower() for w in ("connection refused", "could not connect", "timeout", "could not translate",
                                       "no route", "connection failed", "server closed")):
        return (f"cannot reach PostgreSQL at {where} ({text[:120]}); start it, or fix the host and port in "
                f"{given_in}")
    return f"cannot use PostgreSQL at {where}: {text[:160]}; check {given_in}"
