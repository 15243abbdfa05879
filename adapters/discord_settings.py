"""Discord's settings and its entry in the platform registry (no SDK import)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from adapters.platform import Platform
from bot.core.config import Secret, Settings
from bot.core.errors import ConfigError


@dataclass(frozen=True)
class DiscordSettings:
    token: Secret | None = None
    api_url: str = "https://discord.com/api/v10"
    gateway_url: str = "wss://gateway.discord.gg/"
    sync_guilds: tuple[int, ...] = ()  # guilds to sync the commands to at start; none: global
    instructor_roles: frozenset[str] = frozenset()  # instructors.discord_roles: role ids, or names resolved per guild

    @classmethod
    def from_env(cls, environ: Mapping[str, str], settings: Settings | None = None) -> DiscordSettings:
        def get(name: str) -> str | None:
            return environ.get(name, "").strip() or None

        section = settings.section("discord", keys=("sync_guilds",)) if settings else {}
        guilds = section.get("sync_guilds") or []
        if not isinstance(guilds, list):
            raise _config_error(settings, "discord.sync_guilds",
                                "must be a list of server ids, like [123456789012345678]")
        for i, guild in enumerate(guilds):
            if isinstance(guild, bool) or not str(guild).isdecimal():
                raise _config_error(settings, f"discord.sync_guilds[{i}]",
                                    f"'{str(guild)[:20]}' is not a server id; write the server's number "
                                    "(Discord: Copy Server ID), like sync_guilds: [123456789012345678]")
        token = get("DISCORD_TOKEN")
        return cls(token=Secret(token) if token else None,
                   api_url=(get("DISCORD_API_URL") or cls.api_url).rstrip("/"),
                   gateway_url=get("DISCORD_GATEWAY_URL") or cls.gateway_url,
                   sync_guilds=tuple(int(g) for g in guilds),
                   instructor_roles=instructor_roles(settings) if settings else frozenset())


def instructor_roles(settings: Settings) -> frozenset[str]:
    """Discord's instructor rule: members holding one of `instructors.discord_roles` (ids or names)."""
    return settings.ids("instructors.discord_roles")


def _config_error(settings: Settings | None, key: str, message: str) -> ConfigError:
    return settings.config_error(key, message) if settings else ConfigError(f"STUDYBOT_CONFIG: {key}: {message}")


DISCORD = Platform(
    name="discord",
    variables=("DISCORD_TOKEN", "DISCORD_API_URL", "DISCORD_GATEWAY_URL"),
    secrets=(r"[MNO][A-Za-z0-9_-]{20,}\.[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{20,}",),
    noisy_loggers=("discord.http", "discord.gateway", "discord.webhook", "discord.client", "discord.state"),
    sections=("discord",),
    read=DiscordSettings.from_env,
    configured=lambda s: s.token is not None,
    instructor_keys=("discord_roles",),
    instructor_rule=instructor_roles,
    needs="DISCORD_TOKEN",
    adapter="adapters.discord_app:DiscordAdapter",
)
