"""Each command declared once, beside its handler: its name, its options, its help.

    @command(summary="A glossary term's plain-language definition",
             options=(Option("term", "the term", suggest=suggest_terms),))
    async def glossary(ctx, cmd): '''/glossary [term]: a term's definition; no term lists them all.'''

The router routes by the declaration; the docstring's usage lines (`/name words: what it does`)
are the one place each form of a command is written: `/help` prints them, and Slack's usage
hint is their words joined (`[term]`). The Discord adapter builds its command tree (options,
choices, autocomplete) from the options, and a test checks `slack_manifest.yaml` against the
summaries and hints. A platform whose
commands have no options (Slack, the console) passes the words typed after the command;
one with options (Discord) turns their values back into those words with `CommandSpec.args`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from bot.core.errors import StudyError
from bot.core.messages import Command, Reply

if TYPE_CHECKING:
    from bot.kit.context import Context

Handler = Callable[["Context", Command], Awaitable[list[Reply]]]
Suggest = Callable[["Context", str], list[str]]


@dataclass(frozen=True)
class Option:
    """One option of a command, in the order its words come in the typed form.

    `choices` maps each value a learner may pick to the words it stands for (an empty string
    for the default); without choices the value is typed freely (a whole number in a range when
    `number` says so), after `prefix` if given."""

    name: str
    description: str
    choices: Mapping[str, str] = field(default_factory=dict)
    prefix: str = ""
    suggest: Suggest | None = None
    number: tuple[int, int] | None = None  # a whole number from the first to the second

    def words(self, value: str | None) -> str:
        value = ("" if value is None else str(value)).strip()
        if self.choices:
            return self.choices.get(value, "")
        return f"{self.prefix} {value}".strip() if value and self.prefix else value


@dataclass(frozen=True)
class CommandSpec:
    name: str
    summary: str  # one line: Discord's description, Slack's manifest description
    options: tuple[Option, ...]
    handler: Handler
    usage: tuple[str, ...]  # the /help lines, from the handler's docstring

    @property
    def forms(self) -> tuple[str, ...]:
        """Each usage line's form, before its description: `/quiz round [lesson] [N]`."""
        return tuple(line.split(": ", 1)[0] for line in self.usage)

    @property
    def hint(self) -> str:
        """What follows the command, as Slack shows it: the forms' words (`[lesson] | round [lesson]`)."""
        return " | ".join(words for form in self.forms if (words := form.removeprefix(f"/{self.name}").strip()))

    def args(self, values: Mapping[str, str | None]) -> str:
        """The typed form of a command given as options (`mode: round, lesson: x` -> "round x")."""
        return " ".join(w for option in self.options if (w := option.words(values.get(option.name))))

    def option(self, name: str) -> Option | None:
        return next((o for o in self.options if o.name == name), None)


def command(*, summary: str, options: tuple[Option, ...] = (),
            name: str | None = None) -> Callable[[Handler], CommandSpec]:
    """Declare a command handler: the function's name (or `name`) is the command's; each line of its
    docstring that starts with `/` is a usage line."""

    def declare(handler: Handler) -> CommandSpec:
        doc = handler.__doc__ or ""
        usage = tuple(line.strip() for line in doc.splitlines() if line.strip().startswith("/"))
        return CommandSpec(name or handler.__name__, summary, options, handler, usage)

    return declare


FormHandler = Callable[["Context", Command, list[str]], Awaitable[list[Reply]]]
Misplaced = Callable[["Context", list[str]], "str | None"]


@dataclass(frozen=True)
class CommandForm:
    """A form of a command that another feature serves (`/quiz round …`, by rounds): the router hands
    the words after `word` to `handler`. `misplaced` says what to answer when that form's words were
    typed without its word (`/quiz 5`), or None."""

    command: str
    word: str
    handler: FormHandler
    misplaced: Misplaced | None = None


async def run_command(ctx: Context, spec: CommandSpec, cmd: Command, forms: Sequence[CommandForm]) -> list[Reply]:
    """A command, or one of its `forms` that another feature serves (`/quiz round …`)."""
    words = cmd.args.split()
    for form in forms:
        if words and words[0].lower() == form.word:
            return await form.handler(ctx, cmd, words[1:])
    for form in forms:
        if form.misplaced and (said := form.misplaced(ctx, words)):
            raise StudyError(said)
    return await spec.handler(ctx, cmd)
