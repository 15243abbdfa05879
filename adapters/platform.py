"""What each platform registers in one place: how it reads its settings, what its secrets
look like (masked in every log line), which of its SDK's loggers print request bodies, its own
rule of who is an instructor (its keys under `instructors` in the config file), and the adapter
that serves it (imported only when the platform starts)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from importlib import import_module
from typing import Any, NamedTuple

from bot.core.config import Settings


class Listen(NamedTuple):
    """An address a platform listens on, the variable that sets its port, and whether processes on
    one machine share it (SO_REUSEPORT)."""

    host: str
    port: int
    variable: str
    shared: bool = False


@dataclass(frozen=True)
class Platform:
    name: str
    variables: tuple[str, ...]  # the environment variables it reads
    secrets: tuple[str, ...]  # regular expressions of its credentials
    noisy_loggers: tuple[str, ...]  # loggers that print whole request bodies at DEBUG
    sections: tuple[str, ...]  # its sections of the STUDYBOT_CONFIG file
    read: Callable[[Mapping[str, str], Settings], Any]  # its settings (ConfigError when set wrong)
    configured: Callable[[Any], bool]  # whether its credentials are set
    needs: str  # what an operator sets to use it
    adapter: str  # "module:Class", built as Class(bot, its settings)
    listens: Callable[[Any], tuple[Listen, ...]] = lambda settings: ()
    instructor_keys: tuple[str, ...] = ()  # its keys under `instructors` in the config file
    instructor_rule: Callable[[Settings], Any] = lambda settings: None  # those keys read (ConfigError when wrong)

    def adapter_class(self) -> Any:
        module, _, name = self.adapter.partition(":")
        return getattr(import_module(module), name)
