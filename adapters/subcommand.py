"""A `studybot` subcommand as one declaration: its name, help, arguments and what it runs.

`adapters/cli.py` lists the declarations (`SUBCOMMANDS`); a subcommand may live in a module of its own
that defines one `Subcommand` and is listed there. What it runs is given the settings (from the
environment and `.env`) and the parsed arguments, and returns the exit status, or a coroutine that
returns it (run with `asyncio.run`). A failure raises a `SetupError` (or `ContentErrors`): the CLI
prints it as one line and exits 2.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import Any

from bot.core.config import Settings
from bot.core.errors import SetupError

Does = Callable[[Settings, argparse.Namespace], int | Coroutine[Any, Any, int]]


def no_arguments(parser: argparse.ArgumentParser) -> object:
    return None


def an_action(settings: Settings, args: argparse.Namespace) -> int:
    """A group run without one of its actions (argparse requires one, so this is never reached)."""
    raise SetupError(f"studybot {args.command} needs an action; see `studybot {args.command} --help`")


@dataclass(frozen=True)
class Subcommand:
    """`studybot NAME …`: `arguments` adds its arguments to its parser; `does` runs it. A group of
    subcommands (`studybot disputes export`) declares them as `actions` and does nothing itself."""

    name: str
    help: str
    does: Does = an_action
    arguments: Callable[[argparse.ArgumentParser], object] = no_arguments
    logs: bool = False  # logs at STUDYBOT_LOG_LEVEL (a service's INFO lines); else warnings only
    actions: tuple[Subcommand, ...] = ()

    def add_to(self, subparsers: Any) -> argparse.ArgumentParser:
        """Its parser under `subparsers` (argparse's sub-parsers action), the declaration its default."""
        parser: argparse.ArgumentParser = subparsers.add_parser(self.name, help=self.help)
        self.arguments(parser)
        parser.set_defaults(subcommand=self)
        if self.actions:
            actions = parser.add_subparsers(dest="action", required=True)
            for action in self.actions:
                action.add_to(actions)
        return parser
