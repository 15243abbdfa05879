"""The two kinds of failure: a user's mistake, and everything else (a bug)."""

from __future__ import annotations

import secrets


class StudyError(Exception):
    """A user's mistake. Its message is shown to them, so it says what to do."""

    def __init__(self, user_message: str) -> None:
        super().__init__(user_message)
        self.user_message = user_message


class StoreBusy(StudyError):
    """The database was locked or full; nothing was recorded, the user may retry."""

    def __init__(self) -> None:
        super().__init__("The bot is busy and nothing was recorded. Please try again in a moment.")


def reference_id() -> str:
    """A short id that links a generic error reply to its log line."""
    return secrets.token_hex(4)
