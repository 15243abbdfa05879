"""The settings: environment variables and the STUDYBOT_CONFIG file, and the one-line message
that names the file, the key and what to write instead for each mistake an operator makes."""

import os
from dataclasses import replace
from datetime import time

import pytest
from support import CORE_PACK, REPO

from adapters.cli import configured_platforms
from adapters.discord_settings import DiscordSettings
from adapters.platforms import settings_from_env
from adapters.slack_settings import SlackSettings
from bot.core.config import CohortSettings, ConfigError, DailyQuestion, Settings
from bot.core.messages import Cohort
from bot.runtime.app import StudyBot

EXAMPLE = REPO / "config" / "studybot.example.yaml"


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
           "STUDYBOT_CONFIG": str(config), "STUDYBOT_LOG_FORMAT": "JSON", "STUDYBOT_METRICS_PORT": "9100"}
    s = settings_from_env(env)
    slack, discord = SlackSettings.from_env(env, s), DiscordSettings.from_env(env, s)
    assert [p.name for p in configured_platforms(s, env)] == ["slack"]
    assert slack.http_port == 4000 and s.round_seconds == 30
    assert s.log_format == "json" and s.metrics_port == 9100
    assert s.instructors.listed(Cohort("slack", "T0001"), "U0TEACH1") and s.rounds_instructors_only
    assert not s.instructors.listed(Cohort("slack", "T0002"), "U0TEACH1")  # an instructor of one cohort only
    assert s.instructors.listed(Cohort("discord", "123"), "77")  # listed everywhere, on purpose
    berlin = s.cohort(Cohort("slack", "T0001"))
    assert berlin.timezone.key == "Europe/Berlin" and berlin.leaderboard.weekday == 0
    assert s.cohort(Cohort("discord", "T0001")).leaderboard is None  # a cohort is named with its platform
    assert discord.sync_guilds == (2222,)
    assert "xoxb-real-secret" not in repr(slack) and "shh" not in repr(slack) and "<secret>" in repr(slack)
    assert slack.bot_token.reveal() == "xoxb-real-secret"


def test_the_example_config_is_accepted_as_it_is_shipped_and_with_its_example_cohort(tmp_path) -> None:
    settings = settings_from_env({"STUDYBOT_CONFIG": str(EXAMPLE)})
    DiscordSettings.from_env({}, settings)
    assert settings.config and settings.round_seconds >= 5
    uncommented = tmp_path / "studybot.yaml"
    uncommented.write_text("\n".join(line.replace("#  ", "  ", 1) if line.startswith("#  ") else line
                                     for line in EXAMPLE.read_text().splitlines()))
    cohort = settings_from_env({"STUDYBOT_CONFIG": str(uncommented)}).cohort(Cohort("slack", "T0001"))
    assert cohort.timezone.key == "Europe/Berlin" and cohort.leaderboard and cohort.instructors == {"U0TEACH1"}
    assert cohort.gradebook == {"U0LEARN1": "s1234567", "U0LEARN2": "s7654321"}


# Each mistake: the config text, then what its one line must say (the key, the advice).
MISTAKES = [
    ("rounds: {seconds: many}", "rounds.seconds: must be a whole number of seconds from 5 to 3600, not 'many'"),
    ("cohorts: {T1: {platform: slack, timezone: Mars/Base}}", "cohorts.T1.timezone: 'Mars/Base' is unknown; use a"),
    ("cohorts: {T1: {timezone: UTC}}", "cohorts.T1.platform: is missing: say which platform"),
    ("cohorts: {T1: {platform: slak}}", "cohorts.T1.platform: 'slak' is not a platform (did you mean 'slack'?)"),
    ("instructors: {console: maybe}", "instructors.console: must be true or false, not 'maybe'"),
    ("instructor: {slack: [U1]}", "instructor: unknown key (did you mean 'instructors'?); the keys here are"),
    ("instructors: {slack: [U1]}", "instructors.slack: is not a setting; list instructors per cohort under "
                                   "cohorts.<id>.instructors, or for every cohort under instructors.everywhere.slack"),
    ("instructors: {slack_admin: true}", "instructors.slack_admin: unknown key (did you mean 'slack_admins'?); the "
                                         "keys under instructors are everywhere, slack_admins, slack_installer, "
                                         "discord_roles, console"),
    ("instructors: {everywhere: {slak: [U1]}}", "instructors.everywhere.slak: unknown key (did you mean 'slack'?)"),
    ("cohorts: {T1: {platform: slack, instructors: U1}}", "cohorts.T1.instructors: must be a list of ids"),
    ("cohorts: {T1: {platform: slack, instructor: [U1]}}",
     "cohorts.T1.instructor: unknown key (did you mean 'instructors'?)"),
    ("rounds: {second: 30}", "rounds.second: unknown key (did you mean 'seconds'?)"),
    ("cohorts: {T1: {platform: slack, gradebook: [s1]}}",
     "cohorts.T1.gradebook: must map chat user ids to LMS ids, like {U0001: s1234567}"),
    ("cohorts: {T1: {platform: slack, gradebook: {U1: s1, U2: s1}}}",
     "cohorts.T1.gradebook.U2: 's1' is already the id of another learner"),
    ("cohorts: {T1: {platform: slack, gradebook: {U1: }}}", "cohorts.T1.gradebook.U1: null is not an LMS id"),
    ("cohorts: {T1: {platform: slack, teams: {red: [U1, U2], blue: [U2]}}}",
     "cohorts.T1.teams.blue: U2 is already in team red; a learner is in one team only"),
    ("cohorts: {T1: {platform: slack, teams: {Red Team: [U1]}}}", "cohorts.T1.teams.Red Team: is not a team name"),
    ("cohorts: {T1: {platform: slack, teams: {red: U1}}}",
     "cohorts.T1.teams.red: must list the team's members by user id, like [U1, U2], not 'U1'"),
    ("cohorts: {T1: {platform: slack, teams: [red, blue]}}", "cohorts.T1.teams: must map team names to user ids"),
    ("cohorts: {T1: {platform: slack, streaks: no please}}", "cohorts.T1.streaks: must be true or false"),
    ("cohorts: {T1: {platform: slack, team_join: 1}}", "cohorts.T1.team_join: must be true or false, not 1"),
    ("cohorts: {T1: {platform: slack, streak: false}}", "cohorts.T1.streak: unknown key (did you mean 'streaks'?)"),
    ("cohorts: {T1: {platform: slack, gradebok: {U1: s1}}}",
     "cohorts.T1.gradebok: unknown key (did you mean 'gradebook'?)"),
    ("cohorts: {T1: {platform: slack, timezon: UTC}}", "cohorts.T1.timezon: unknown key (did you mean 'timezone'?)"),
    ("cohorts: {T1: {platform: slack, leaderboard: {chanel: C1}}}",
     "cohorts.T1.leaderboard.chanel: unknown key (did you mean 'channel'?)"),
    ("discord: {sync_guild: [1]}", "discord.sync_guild: unknown key (did you mean 'sync_guilds'?)"),
    ("discord: {sync_guilds: [abc]}", "discord.sync_guilds[0]: 'abc' is not a server id; write the server's number"),
    ("discord: {sync_guilds: 123}", "discord.sync_guilds: must be a list of server ids"),
    ("cohorts: {T1: {platform: slack, leaderboard: {channel: C1, time: 20:00}}}",
     'cohorts.T1.leaderboard.time: YAML reads an unquoted 20:00 as the number 1200; quote it: time: "20:00"'),
    ("cohorts: {T1: {platform: slack, leaderboard: {channel: C1, time: 9:30}}}",
     'quote it: time: "09:30"'),
    ("cohorts: {T1: {platform: slack, leaderboard: {channel: C1, time: '25:00'}}}",
     "cohorts.T1.leaderboard.time: '25:00' is not a time of day; write it in quotes"),
    ("cohorts: {T1: {platform: slack, leaderboard: {channel: null}}}",
     "cohorts.T1.leaderboard.channel: is empty; write the channel's id, like channel: C0123456789"),
    ("cohorts: {T1: {platform: slack, leaderboard: {channel: C1, weekday: mondey}}}",
     "cohorts.T1.leaderboard.weekday: 'mondey' is not a weekday (did you mean 'monday'?)"),
    ("cohorts: {T1: {platform: slack, daily: {channel: C1, time: '09:00', reveal: '08:00'}}}",
     "cohorts.T1.daily.reveal: 08:00 is not after the question is posted (time: 09:00); write a later time of "
     "that day, or leave reveal out to reveal each question at the next day's post"),
    ("cohorts: {T1: {platform: slack, daily: {channel: C1, reveal: '09:00'}}}",
     "cohorts.T1.daily.reveal: 09:00 is not after the question is posted (time: 09:00)"),
    ("cohorts: {T1: {platform: slack, daily: {time: '09:00'}}}",
     "cohorts.T1.daily.channel: is empty; write the channel's id"),
    ("leaderboard: {self_graded: marked}", "leaderboard.self_graded: 'marked' is not a policy (did you mean 'mark'?)"),
    ("leaderboard: {selfgraded: mark}", "leaderboard.selfgraded: unknown key (did you mean 'self_graded'?)"),
    ("- just a list", "(document): must be a mapping of settings"),
    ("rounds: [1, 2]", "rounds: must be a mapping"),
    ("base: &b {seconds: 30}\nrounds: *b\n", "line 1: uses a YAML anchor or alias (&name, *name)"),
    ("rounds: {seconds: 30\n", "not valid YAML"),
    ("cohorts:\n  T1:\n    platform: slack\n    teams:\n      red: [U1]\n      red: [U2]\n",
     "line 6: 'red' is given twice in one mapping (first on line 5)"),
]


@pytest.mark.parametrize("text, message", MISTAKES, ids=[m[1][:40] for m in MISTAKES])
def test_each_config_mistake_names_the_file_the_key_and_the_fix(tmp_path, text, message) -> None:
    config = tmp_path / "c.yaml"
    config.write_text(text)
    with pytest.raises(ConfigError) as caught:
        settings = settings_from_env({"STUDYBOT_CONFIG": str(config)})
        DiscordSettings.from_env({}, settings)
    line = str(caught.value)
    assert "\n" not in line and line.startswith(str(config) + ": "), line
    assert message in line, line


def test_a_yaml_alias_bomb_in_the_config_is_refused_at_once(tmp_path) -> None:
    """Nine levels of nine aliases would be 387 million strings once walked."""
    lines = ['a0: &a0 ["lol"]'] + [f"a{n}: &a{n} [{', '.join([f'*a{n - 1}'] * 9)}]" for n in range(1, 10)]
    config = tmp_path / "bomb.yaml"
    config.write_text("\n".join(lines) + "\nrounds: {seconds: *a9}\n")
    with pytest.raises(ConfigError, match="line 1: uses a YAML anchor or alias"):
        settings_from_env({"STUDYBOT_CONFIG": str(config)})


@pytest.mark.parametrize("make, message", [
    (lambda p: os.mkfifo(p), "is not a regular file"),
    (lambda p: p.write_bytes("rounds: {seconds: 30}  # café\n".encode("latin-1")), "is not UTF-8 text (byte 0xe9"),
    (lambda p: p.write_bytes(b"# " + b"x" * 3_000_000), "is larger than 2 MB"),
    (lambda p: None, "does not exist; create it (start from config/studybot.example.yaml)"),
])
def test_a_config_file_that_cannot_be_read_says_why(tmp_path, make, message) -> None:
    config = tmp_path / "studybot.yaml"
    make(config)
    with pytest.raises(ConfigError, match=message.replace("(", r"\(").replace(")", r"\)")):
        settings_from_env({"STUDYBOT_CONFIG": str(config)})


@pytest.mark.parametrize("env, message", [
    ({"STUDYBOT_HTTP_PORT": "70000"}, "STUDYBOT_HTTP_PORT: '70000' is not a port number; set a free port"),
    ({"STUDYBOT_HTTP_PORT": "99999"}, "STUDYBOT_HTTP_PORT: '99999' is not a port number"),
    ({"STUDYBOT_HTTP_PORT": "http"}, "STUDYBOT_HTTP_PORT: 'http' is not a port number"),
    ({"STUDYBOT_HTTP_PORT": "²"}, "STUDYBOT_HTTP_PORT: '²' is not a port number"),
    ({"STUDYBOT_METRICS_PORT": "0"}, "STUDYBOT_METRICS_PORT: '0' is not a port number"),
    ({"STUDYBOT_LOG_FORMAT": "jsn"}, "STUDYBOT_LOG_FORMAT: 'jsn' is not a format (did you mean 'json'?)"),
    ({"STUDYBOT_LOG_LEVEL": "LOUD"}, "STUDYBOT_LOG_LEVEL: 'LOUD' is not a level"),
])
def test_a_bad_variable_names_itself(env, message) -> None:
    with pytest.raises(ConfigError) as caught:
        settings = settings_from_env(env)
        configured_platforms(settings, {"SLACK_BOT_TOKEN": "xoxb-1", "SLACK_SIGNING_SECRET": "s", **env})
    assert message in str(caught.value)


async def test_a_question_of_the_day_from_a_lesson_the_packs_lack_is_refused_at_start_and_reload(tmp_path) -> None:
    base = Settings(db_path=tmp_path / "bot.db", content_dir=CORE_PACK, config_source=str(tmp_path / "s.yaml"))
    wrong = {Cohort("slack", "T0001"): CohortSettings(daily=DailyQuestion("C0001", time(9), "core-basix"))}
    with pytest.raises(ConfigError) as refused:
        await StudyBot.start(replace(base, cohorts=wrong))
    assert str(refused.value) == (f"{tmp_path / 's.yaml'}: cohorts.T0001.daily.lesson: there is no lesson "
                                  "'core-basix'; write one of core-basics")
    bot = await StudyBot.start(base)
    try:
        bot.ctx.settings = replace(base, cohorts=wrong)  # as if the packs lost the lesson the config names
        report = await bot.reload()
        assert [str(p) for p in report.problems] == [
            f"{tmp_path / 's.yaml'}: cohorts.T0001.daily.lesson: there is no lesson 'core-basix'; write one of "
            "core-basics"]
    finally:
        await bot.close()


@pytest.mark.parametrize("written", ["2027-02-30", "2027-13-01"])
def test_an_unquoted_date_that_is_no_day_gets_the_keys_one_line_message(tmp_path, written) -> None:
    """YAML reads an unquoted 2027-02-30 as a date and cannot make one: the operator is told which key, not
    shown a traceback."""
    config = tmp_path / "studybot.yaml"
    config.write_text(f"cohorts:\n  T0001:\n    platform: slack\n    review: {{exam: {written}}}\n")
    with pytest.raises(ConfigError) as caught:
        settings_from_env({"STUDYBOT_CONFIG": str(config)})
    assert f"cohorts.T0001.review.exam: '{written}' is not a date; write it as year-month-day" in str(caught.value)
