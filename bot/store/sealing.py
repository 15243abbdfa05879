"""Tokens at rest: the bot and refresh tokens of installs are encrypted with Fernet (AES-128-CBC with
an HMAC) under STUDYBOT_SECRET_KEY before they are written, and decrypted as they are read.

The key may list several (comma-separated): the first encrypts, every one decrypts (MultiFernet),
so a key is rotated by putting the new one first; at start the store re-encrypts every row under it
(`Installs.reseal`), after which the old key can go. Without a key, tokens are stored as they come
(the database file is 0600) and a warning says so; rows stored before a key was set are read as they
are and encrypted at the next start with a key."""

from __future__ import annotations

from collections.abc import Sequence

from cryptography.fernet import Fernet, InvalidToken, MultiFernet

from bot.core.config import Secret
from bot.core.errors import StoreUnavailable

SEALED = "fernet:"  # the prefix of an encrypted value; a token without it was stored before a key was set


class Sealer:
    """Encrypts and decrypts stored tokens with the configured keys (none: stores them as they are)."""

    def __init__(self, keys: Sequence[Secret] = ()) -> None:
        fernets = [Fernet(k.reveal()) for k in keys]
        self._primary = fernets[0] if fernets else None
        self._fernet = MultiFernet(fernets) if fernets else None

    @property
    def keyed(self) -> bool:
        return self._fernet is not None

    def seal(self, value: str | None) -> str | None:
        """The value as stored: encrypted when there is a key."""
        if value is None or self._fernet is None:
            return value
        return SEALED + self._fernet.encrypt(value.encode()).decode("ascii")

    @staticmethod
    def is_sealed(stored: str | None) -> bool:
        return stored is not None and stored.startswith(SEALED)

    def open(self, stored: str | None) -> str | None:
        """The value as it was given; StoreUnavailable when it was encrypted with a key not configured."""
        if stored is None or not stored.startswith(SEALED):
            return stored
        if self._fernet is None:
            raise StoreUnavailable("the workspaces' tokens in the database are encrypted, and STUDYBOT_SECRET_KEY is "
                                   "not set: set it to the key they were stored with")
        try:
            return self._fernet.decrypt(stored[len(SEALED):].encode("ascii")).decode()
        except InvalidToken:
            raise StoreUnavailable("the workspaces' tokens in the database were encrypted with a key "
                                   "STUDYBOT_SECRET_KEY does not list: put that key back (after the new one, "
                                   "comma-separated)") from None

    def stale(self, stored: str | None) -> bool:
        """Whether a stored value should be written again: plaintext while there is a key, or encrypted
        with another key than the first."""
        if stored is None or self._primary is None:
            return False
        if not stored.startswith(SEALED):
            return True
        try:
            self._primary.decrypt(stored[len(SEALED):].encode("ascii"))
        except InvalidToken:
            return True
        return False
