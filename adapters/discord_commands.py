"""Slash commands: each of the core's command declarations as a discord.py app command."""

from __future__ import annotations

import inspect
from typing import Any, Literal, Optional, Protocol

import discord
from discord import app_commands

from adapters.discord_payloads import MAX_CHOICE_VALUE, choice_value
from bot.core import i18n
from bot.core.messages import fit
from bot.kit.commands import CommandSpec
from bot.runtime.app import StudyBot

MAX_AUTOCOMPLETE = 25  # Discord shows at most 25 suggestions
MAX_DESCRIPTION = 100  # Discord's limit on a command's or an option's description
TRANSLATED = (app_commands.TranslationContextLocation.command_description,
              app_commands.TranslationContextLocation.parameter_description)


class CatalogueTranslator(app_commands.Translator):
    """The commands' and options' descriptions from the catalogues, as `description_localizations`
    for each shipped language (Discord's es-ES and es-419 both read Spanish). Names and choices stay
    English: they are the words /help, the usage lines and the typed forms name, on every platform."""

    async def translate(self, string: app_commands.locale_str, locale: discord.Locale,
                        context: app_commands.TranslationContextTypes) -> str | None:
        language = i18n.language_of(locale.value)
        if context.location not in TRANSLATED or language in (None, i18n.SOURCE, i18n.PSEUDO):
            return None
        shown = i18n.translator(language).gettext(string.message)
        return fit(shown, MAX_DESCRIPTION) if shown != string.message else None


class Commanded(Protocol):
    """What a slash command calls: the adapter."""

    bot: StudyBot

    async def resolve_choice(self, spec: CommandSpec, option: str, value: str | None) -> str | None: ...

    async def on_command(self, interaction: discord.Interaction, name: str, args: str) -> None: ...


def slash_command(spec: CommandSpec, adapter: Commanded) -> app_commands.Command:
    """A slash command built from the core's declaration: each option a string parameter (its
    choices as a fixed list, its suggestions as autocomplete), turned back into the typed form."""

    async def callback(interaction: discord.Interaction, **options: str | None) -> None:
        resolved = {name: await adapter.resolve_choice(spec, name, value) for name, value in options.items()}
        await adapter.on_command(interaction, spec.name, spec.args(resolved))

    params = [inspect.Parameter("interaction", inspect.Parameter.POSITIONAL_OR_KEYWORD,
                                annotation=discord.Interaction)]
    for option in spec.options:
        kind: Any = (Literal[tuple(option.choices)] if option.choices
                     else app_commands.Range[int, option.number[0], option.number[1]] if option.number else str)
        params.append(inspect.Parameter(option.name, inspect.Parameter.KEYWORD_ONLY, default=None,
                                        annotation=Optional[kind]))  # noqa: UP045 (a runtime annotation)
    callback.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
    callback.__discord_app_commands_param_description__ = {  # type: ignore[attr-defined]
        o.name: o.description for o in spec.options}
    command: app_commands.Command = app_commands.Command(name=spec.name, description=spec.summary,
                                                         callback=callback)
    for option in spec.options:
        if option.suggest is not None:
            command.autocomplete(option.name)(_autocomplete(adapter, spec.name, option.name))
    return command


def _autocomplete(adapter: Commanded, command: str, option: str) -> Any:
    async def complete(interaction: discord.Interaction, current: str) -> list[app_commands.Choice[str]]:
        names = (await adapter.bot.suggest(command, option, current))[:MAX_AUTOCOMPLETE]
        return [app_commands.Choice(name=fit(n, MAX_CHOICE_VALUE), value=choice_value(n)) for n in names]

    return complete
