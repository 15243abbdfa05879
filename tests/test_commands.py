"""Each command is declared once (bot/runtime/commands.py, beside its handler): the router, /help, the
Discord command tree and the Slack manifest all agree with the declaration."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import yaml
from support import REPO, channel, learner

from bot.core.messages import Command
from bot.kit.commands import CommandSpec, command
from bot.runtime.app import declared_commands

MANIFEST = yaml.safe_load((REPO / "slack_manifest.yaml").read_text())
COMMANDS = declared_commands()


def manifest_mismatches(specs: Iterable[CommandSpec], manifest: Mapping[str, Any]) -> list[str]:
    """How a Slack app manifest's slash commands differ from the declared commands."""
    listed = {c["command"].lstrip("/"): c for c in manifest["features"]["slash_commands"]}
    declared = {spec.name: spec for spec in specs}
    problems = [f"/{name} is declared but not in the manifest" for name in declared.keys() - listed.keys()]
    problems += [f"/{name} is in the manifest but not declared" for name in listed.keys() - declared.keys()]
    for name in declared.keys() & listed.keys():
        spec, entry = declared[name], listed[name]
        if entry.get("description") != spec.summary:
            problems.append(f"/{name}: description {entry.get('description')!r}, declared {spec.summary!r}")
        if entry.get("usage_hint", "") != spec.hint:
            problems.append(f"/{name}: usage_hint {entry.get('usage_hint', '')!r}, declared {spec.hint!r}")
    return sorted(problems)


def test_the_slack_manifest_lists_exactly_the_declared_commands() -> None:
    assert manifest_mismatches(COMMANDS, MANIFEST) == []


def test_the_manifest_check_fails_when_a_command_is_dropped_from_the_declaration() -> None:
    without_review = [spec for spec in COMMANDS if spec.name != "review"]
    assert manifest_mismatches(without_review, MANIFEST) == ["/review is in the manifest but not declared"]


def test_every_declaration_fits_discord_and_slack() -> None:
    for spec in COMMANDS:
        assert spec.name.islower() and len(spec.name) <= 32, spec.name
        assert 1 <= len(spec.summary) <= 100, spec.name  # Discord's limit for a description
        assert spec.usage and all(line.startswith(f"/{spec.name}") for line in spec.usage), spec.name
        for option in spec.options:
            assert option.name.islower() and 1 <= len(option.description) <= 100, (spec.name, option.name)
            assert len(option.choices) <= 25, (spec.name, option.name)


def test_slacks_usage_hint_is_made_of_the_forms_help_shows() -> None:
    """The docstring's usage lines are the one place a command's forms are written."""

    @command(summary="A demo")
    async def demo(ctx, cmd):
        """/demo [lesson]: one thing.
        /demo round [lesson] [seconds:S]: another; not /demo this."""

    assert demo.forms == ("/demo [lesson]", "/demo round [lesson] [seconds:S]")
    assert demo.hint == "[lesson] | round [lesson] [seconds:S]"


async def test_help_prints_every_declared_usage_line(bot) -> None:
    replies = await bot.handle(Command("help", "", learner(), channel()))
    lines = "\n".join(r.text for r in replies).splitlines()
    assert lines[0] == "Commands:"
    assert lines[1:] == ["• " + line for spec in COMMANDS for line in spec.usage]


async def test_the_router_serves_each_declared_command(bot) -> None:
    assert set(bot.commands) == {spec.name for spec in COMMANDS}
    for spec in COMMANDS:
        replies = await bot.handle(Command(spec.name, "", learner(), channel()))
        assert replies and not any("There is no command" in r.text for r in replies), spec.name
