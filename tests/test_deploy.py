"""No Docker engine runs here, so check that the compose file, the Dockerfile and the CLI agree."""

import re

import yaml
from support import REPO

from adapters.cli import build_parser
from adapters.platforms import PLATFORMS
from bot.config import VARIABLES

ALL_VARIABLES = {*VARIABLES, *(v for p in PLATFORMS for v in p.variables)}

COMPOSE = yaml.safe_load((REPO / "docker-compose.yml").read_text())
DOCKERFILE = (REPO / "Dockerfile").read_text()
SERVICE = COMPOSE["services"]["studybot"]


def dockerfile_env() -> dict[str, str]:
    block = DOCKERFILE.split("ENV ", 1)[1].split("\n\n", 1)[0]
    return dict(re.findall(r"(\w+)=(\S+)", block))


def test_service_command_and_healthcheck_are_cli_commands() -> None:
    commands = build_parser()._subparsers._group_actions[0].choices
    assert SERVICE["command"][0] == "studybot" and SERVICE["command"][1] in commands
    test = SERVICE["healthcheck"]["test"]
    assert test[0] == "CMD" and test[1:] == ["studybot", "health"] and "health" in commands
    assert SERVICE["restart"] == "unless-stopped"
    assert re.search(r'^CMD \["studybot", "run"\]$', DOCKERFILE, re.M)


def test_the_volume_holds_the_database_and_results_and_the_user_owns_it() -> None:
    [volume] = SERVICE["volumes"]
    name, target = volume.split(":")
    assert name in COMPOSE["volumes"]
    env = {**dockerfile_env(), **SERVICE["environment"]}
    assert env["STUDYBOT_DB"].startswith(target + "/") and env["STUDYBOT_RESULTS_DIR"].startswith(target + "/")
    user_line = DOCKERFILE.index("USER studybot")
    assert DOCKERFILE.index("useradd") < user_line
    assert f"chown studybot:studybot {target}" in DOCKERFILE[:user_line]
    assert env["STUDYBOT_CONTENT"] == "/app/content" and "COPY content ./content" in DOCKERFILE


def test_environment_names_are_the_ones_the_bot_reads() -> None:
    example = re.findall(r"^([A-Z_]+)=", (REPO / ".env.example").read_text(), re.M)
    python = {"PYTHONDONTWRITEBYTECODE", "PYTHONUNBUFFERED", "PIP_NO_CACHE_DIR"}
    named = set(example) | set(SERVICE["environment"]) | set(dockerfile_env()) - python
    assert named <= ALL_VARIABLES, named - ALL_VARIABLES


def read_in(path: str) -> set[str]:
    return set(re.findall(r'(?:get|secret)\("([A-Z_]+)"\)', (REPO / path).read_text()))


def test_each_module_declares_the_variables_it_reads() -> None:
    assert read_in("bot/config.py") == set(VARIABLES)
    for platform in PLATFORMS:
        assert read_in(f"adapters/{platform.name}_settings.py") == set(platform.variables), platform.name
