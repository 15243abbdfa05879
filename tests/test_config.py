import subprocess
import sys

import pytest

from bot.config import ConfigError, Settings
from support import REPO


def test_from_env_reads_variables_and_hides_secrets(tmp_path) -> None:
    config = tmp_path / "studybot.yaml"
    config.write_text(
        "instructors: {slack: [U0TEACH1], discord_roles: [Instructor]}\n"
        "rounds: {seconds: 30, instructors_only: true}\n"
        "cohorts: {T0001: {timezone: Europe/Berlin, leaderboard: {channel: C0001, weekday: monday, time: '09:00'}}}\n"
        "discord: {sync_guilds: [2222]}\n"
    )
    s = Settings.from_env({"SLACK_BOT_TOKEN": "xoxb-real-secret", "SLACK_SIGNING_SECRET": "shh",
                           "STUDYBOT_HTTP_PORT": "4000", "STUDYBOT_CONFIG": str(config)})
    assert s.platforms == ["slack"] and s.http_port == 4000 and s.round_seconds == 30
    assert s.instructors.slack == {"U0TEACH1"} and s.rounds_instructors_only
    assert s.cohort("T0001").timezone.key == "Europe/Berlin" and s.cohort("T0001").leaderboard.weekday == 0
    assert s.discord_sync_guilds == (2222,)
    assert "xoxb-real-secret" not in repr(s) and "shh" not in repr(s) and "<secret>" in repr(s)
    assert s.slack_bot_token.reveal() == "xoxb-real-secret"


@pytest.mark.parametrize("text, message", [
    ("rounds: {seconds: many}", "rounds.seconds"),
    ("cohorts: {T1: {timezone: Mars/Base}}", "timezone is unknown"),
    ("instructors: {console: maybe}", "console must be true or false"),
])
def test_bad_config_names_the_key(tmp_path, text, message) -> None:
    config = tmp_path / "c.yaml"
    config.write_text(text)
    with pytest.raises(ConfigError, match=message):
        Settings.from_env({"STUDYBOT_CONFIG": str(config)})


def test_run_without_a_token_names_the_variables() -> None:
    env = {"PATH": "/usr/bin:/bin"}
    done = subprocess.run([sys.executable, "-m", "bot.cli", "run"], cwd=REPO, env=env, capture_output=True, text=True)
    assert done.returncode == 1
    assert "SLACK_BOT_TOKEN" in done.stderr and "DISCORD_TOKEN" in done.stderr
