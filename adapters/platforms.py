"""The platforms studybot can serve: one line each."""

from __future__ import annotations

from collections.abc import Mapping

from adapters.discord_settings import DISCORD
from adapters.platform import Platform
from adapters.slack_settings import SLACK
from bot.core.config import Settings

PLATFORMS: tuple[Platform, ...] = (
    SLACK,
    DISCORD,
)


def settings_from_env(environ: Mapping[str, str]) -> Settings:
    """The core settings, with the config file checked against every platform's sections, names
    and instructor rules."""
    settings = Settings.from_env(environ, sections=[s for p in PLATFORMS for s in p.sections],
                                 platforms=[p.name for p in PLATFORMS],
                                 instructor_keys=[k for p in PLATFORMS for k in p.instructor_keys])
    for platform in PLATFORMS:
        platform.instructor_rule(settings)
    return settings
