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
    shard_ids: tuple[int, ...] = ()  # STUDYBOT_DISCORD_SHARDS: the shards this process runs; none: one connection
    shard_count: int | None = None

    @property
    def sharded(self) -> bool:
        return self.shard_count is not None

    @property
    def syncs_commands(self) -> bool:
        """Only one process syncs the command tree: the one with shard 0 (which also gets the DMs)."""
        return not self.sharded or 0 in self.shard_ids

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
        shard_ids, shard_count = shards(get("STUDYBOT_DISCORD_SHARDS"))
        return cls(token=Secret(token) if token else None,
                   shard_ids=shard_ids, shard_count=shard_count,
                   api_url=(get("DISCORD_API_URL") or cls.api_url).rstrip("/"),
                   gateway_url=get("DISCORD_GATEWAY_URL") or cls.gateway_url,
                   sync_guilds=tuple(int(g) for g in guilds),
                   instructor_roles=instructor_roles(settings) if settings else frozenset())


def shards(value: str | None) -> tuple[tuple[int, ...], int | None]:
    """STUDYBOT_DISCORD_SHARDS, like `0,1/4`: this process runs shards 0 and 1 of 4 (unset: no sharding)."""
    if value is None:
        return (), None
    how = ("write this process's shard ids and the total, like 0,1/4 (shards 0 and 1 of 4); every shard id "
           "from 0 to the total minus one must run in exactly one process")
    ids_text, slash, count_text = value.replace(" ", "").partition("/")
    ids = ids_text.split(",")
    if not (slash and count_text.isdecimal() and all(i.isdecimal() for i in ids)):
        raise ConfigError(f"STUDYBOT_DISCORD_SHARDS: '{value[:40]}' is not a list of shards; {how}")
    count, numbers = int(count_text), tuple(int(i) for i in ids)
    if not 1 <= count <= 10_000 or len(set(numbers)) != len(numbers) or any(n >= count for n in numbers):
        raise ConfigError(f"STUDYBOT_DISCORD_SHARDS: '{value[:40]}' names a shard twice or one past the total "
                          f"({count_text[:8]}); {how}")
    return tuple(sorted(numbers)), count


def instructor_roles(settings: Settings) -> frozenset[str]:
    """Discord's instructor rule: members holding one of `instructors.discord_roles` (ids or names)."""
    return settings.ids("instructors.discord_roles")


def _config_error(settings: Settings | None, key: str, message: str) -> ConfigError:
    return settings.config_error(key, message) if settings else ConfigError(f"STUDYBOT_CONFIG: {key}: {message}")


DISCORD = Platform(
    name="discord",
    variables=("DISCORD_TOKEN", "DISCORD_API_URL", "DISCORD_GATEWAY_URL", "STUDYBOT_DISCORD_SHARDS"),
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
