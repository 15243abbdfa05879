"""Every kind of failure studybot tells apart, in one tree.

Callers match on the type, never on the message text:

    StudyError            a user's mistake; the message is shown to them and says what to do
      StoreBusy           the database was locked or full; nothing was recorded, retry
      RoundAlreadyOpen    a channel already has a running round
    SetupError            the operator's to fix before studybot can run; the message names what
      ConfigError         a setting or config key
      StoreUnavailable    the database file or its folder
      ContentErrors       the lesson packs (every problem, each as file:line: field: message)
      PlatformRejected    a platform refused the credentials (the message names the variable)
    PlatformUnreachable   a platform could not be reached; worth retrying with backoff
    DeliveryFailed        a post or edit did not reach its channel (permanent: retrying cannot help)

Anything else is a bug: it is logged with a reference id and the user gets a generic reply.
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from dataclasses import dataclass

from bot.core import i18n


class StudyError(Exception):
    """A user's mistake. Its message is shown to them, so it says what to do."""

    def __init__(self, user_message: str) -> None:
        super().__init__(user_message)
        self.user_message = user_message


class TextRefused(StudyError):
    """A typed answer refused as it stands (empty, too long, too short, malformed): nothing was
    recorded, and the form that took it takes the text again."""


class StoreBusy(StudyError):
    """The database was locked or full; nothing was recorded, the user may retry."""

    def __init__(self) -> None:
        super().__init__(i18n.current().gettext(
            "The bot is busy and nothing was recorded. Please try again in a moment."))


class RoundAlreadyOpen(StudyError):
    """A channel has one open round at a time."""

    def __init__(self) -> None:
        super().__init__(i18n.current().gettext(
            "A round is already running in this channel. Answer it, or wait for it to end."))


class SetupError(Exception):
    """Something the operator must fix; the message names it and says what to do."""


class ConfigError(SetupError):
    """The settings cannot be used; the message names the variable or key to fix."""


class StoreUnavailable(SetupError):
    """The database cannot be opened or used; the message says what to fix."""


class PlatformRejected(SetupError):
    """A platform refused the credentials at start-up; the message names the variable to fix."""


class PlatformUnreachable(Exception):
    """A platform could not be reached (network, outage); starting again later may work."""


class DeliveryFailed(Exception):
    """A reply did not reach its channel or recipient; the message says why (never a token).

    `permanent` when trying again cannot help (no access, channel gone, no such platform)."""

    def __init__(self, reason: str, *, permanent: bool = False) -> None:
        super().__init__(reason)
        self.permanent = permanent


@dataclass(frozen=True)
class ContentProblem:
    """One problem in a lesson pack, located to its file and line."""

    file: str
    line: int
    field: str
    message: str

    def __str__(self) -> str:  # line 0: the file as a whole (or a config file, read as a mapping)
        return f"{self.file}{f':{self.line}' if self.line else ''}: {self.field}: {self.message}"


class ContentErrors(SetupError):
    """The lesson packs have problems; `problems` lists every one."""

    def __init__(self, problems: Sequence[ContentProblem]) -> None:
        super().__init__("\n".join(map(str, problems)))
        self.problems = list(problems)


def reference_id() -> str:
    """A short id that links a generic error reply to its log line."""
    return secrets.token_hex(4)
