import subprocess
import sys

import pytest
from support import REPO

from adapters.cli import configured_platforms
from adapters.discord_settings import DiscordSettings
from adapters.platforms import PLATFORMS
from adapters.slack_settings import SlackSettings
from bot.config import ConfigError, Settings
from bot.messages import Cohort

SECTIONS = [s for p in PLATFORMS for s in p.sections]


def test_from_env_reads_variables_and_hides_secrets(tmp_path) -> None:
    config = tmp_path / "studybot.yaml"
    config.write_text(
        "instructors: {everywhere: {discord: ['77']}, discord_roles: [Instructor]}\n"
        "rounds: {seconds: 30, instructors_only: true}\n"
        "cohorts: {T0001: {platform: slack, timezone: Europe/Berlin, instructors: [U0TEACH1],"
        " leaderboard: {channel: C0001, weekday: monday, time: '09:00'}}}\n"
        "discord: {sync_guilds: [2222]}\n"
    )
    env = {"SLACK_BOT_TOKEN": "xoxb-real-secret", "SLACK_SIGNING_SECRET": "shh", "STUDYBOT_HTTP_PORT": "4000",
           "STUDYBOT_CONFIG": str(config)}
    s = Settings.from_env(env, SECTIONS)
    slack, discord = SlackSettings.from_env(env, s), DiscordSettings.from_env(env, s)
    assert [p.name for p in configured_platforms(s, env)] == ["slack"]
    assert slack.http_port == 4000 and s.round_seconds == 30
    assert s.instructors.listed(Cohort("slack", "T0001"), "U0TEACH1") and s.rounds_instructors_only
    assert not s.instructors.listed(Cohort("slack", "T0002"), "U0TEACH1")  # an instructor of one cohort only
    assert s.instructors.listed(Cohort("discord", "123"), "77")  # listed everywhere, on purpose
    berlin = s.cohort(Cohort("slack", "T0001"))
    assert berlin.timezone.key == "Europe/Berlin" and berlin.leaderboard.weekday == 0
    assert s.cohort(Cohort("discord", "T0001")).leaderboard is None  # a cohort is named with its platform
    assert discord.sync_guilds == (2222,)
    assert "xoxb-real-secret" not in repr(slack) and "shh" not in repr(slack) and "<secret>" in repr(slack)
    assert slack.bot_token.reveal() == "xoxb-real-secret"


@pytest.mark.parametrize("text, message", [
    ("rounds: {seconds: many}", "rounds.seconds"),
    ("cohorts: {T1: {platform: slack, timezone: Mars/Base}}", "timezone is unknown"),
    ("cohorts: {T1: {timezone: UTC}}", "cohorts.T1.platform is missing: say which platform"),
    ("instructors: {console: maybe}", "console must be true or false"),
    ("instructor: {slack: [U1]}", "unknown key 'instructor' \\(did you mean 'instructors'\\?\\)"),
    ("instructors: {slack: [U1]}", "instructors.slack is not a setting; list instructors per cohort under "
                                   "cohorts.<id>.instructors, or for every cohort under instructors.everywhere.slack"),
    ("instructors: {slack_admin: true}", "unknown key instructors.slack_admin \\(did you mean 'slack_admins'\\?\\)"),
])
def test_bad_config_names_the_key(tmp_path, text, message) -> None:
    config = tmp_path / "c.yaml"
    config.write_text(text)
    with pytest.raises(ConfigError, match=message):
        Settings.from_env({"STUDYBOT_CONFIG": str(config)}, SECTIONS)


def test_run_without_a_token_names_the_variables() -> None:
    env = {"PATH": "/usr/bin:/bin"}
    done = subprocess.run([sys.executable, "-m", "adapters.cli", "run"], cwd=REPO, env=env, capture_output=True,
                          text=True)
    assert done.returncode == 1
    assert "SLACK_BOT_TOKEN" in done.stderr and "DISCORD_TOKEN" in done.stderr
