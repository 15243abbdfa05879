"""No Docker engine runs here, so check that the Dockerfile, the compose file, .env.example, the
example config, the lock file, the Makefile and the CLI agree."""

import re
import shutil
import subprocess
import tomllib
from datetime import UTC, datetime
from urllib.parse import urlsplit

import pytest
import yaml
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from support import REPO

from adapters.cli import build_parser
from adapters.discord_settings import DiscordSettings
from adapters.platforms import PLATFORMS, settings_from_env
from bot.core.config import VARIABLES
from bot.store.processes import Process, shard_problems

ALL_VARIABLES = {*VARIABLES, *(v for p in PLATFORMS for v in p.variables)}

COMPOSE = yaml.safe_load((REPO / "docker-compose.yml").read_text())
DOCKERFILE = (REPO / "Dockerfile").read_text()
SERVICE = COMPOSE["services"]["studybot"]
LOCK = REPO / "requirements.lock"


def dockerfile_env() -> dict[str, str]:
    block = DOCKERFILE.split("ENV ", 1)[1].split("\n\n", 1)[0]
    return dict(re.findall(r"(\w+)=(\S+)", block))


def mounts() -> dict[str, str]:
    """Where each compose volume is mounted: target -> source."""
    return {entry.split(":")[1]: entry.split(":")[0] for entry in SERVICE["volumes"]}


def test_service_command_and_healthcheck_are_cli_commands() -> None:
    commands = build_parser()._subparsers._group_actions[0].choices
    assert SERVICE["command"][0] == "studybot" and SERVICE["command"][1] in commands
    test = SERVICE["healthcheck"]["test"]
    assert test[0] == "CMD" and test[1:] == ["studybot", "health"] and "health" in commands
    assert SERVICE["restart"] == "unless-stopped"
    assert re.search(r'^CMD \["studybot", "run"\]$', DOCKERFILE, re.M)


def test_the_volume_holds_the_database_and_results_and_the_user_owns_it() -> None:
    target = next(t for t, source in mounts().items() if source in COMPOSE["volumes"])
    env = {**dockerfile_env(), **SERVICE["environment"]}
    assert env["STUDYBOT_DB"].startswith(target + "/") and env["STUDYBOT_RESULTS_DIR"].startswith(target + "/")
    user_line = DOCKERFILE.index("USER studybot")
    assert DOCKERFILE.index("useradd") < user_line < DOCKERFILE.index("CMD [")
    assert re.search(rf"chown studybot:studybot {target}\b", DOCKERFILE[:user_line])
    assert env["STUDYBOT_CONTENT"] == "/app/content" and "COPY content ./content" in DOCKERFILE


def test_the_root_file_system_is_read_only_but_the_data_volume_and_tmp() -> None:
    assert SERVICE["read_only"] is True and SERVICE["tmpfs"] == ["/tmp"]
    writable = {t for t, source in mounts().items() if source in COMPOSE["volumes"]}
    assert writable == {"/app/data"}
    assert all(entry.endswith(":ro") for entry in SERVICE["volumes"] if entry.split(":")[0] not in COMPOSE["volumes"])


def test_ports_are_published_on_loopback_and_a_stop_has_time_to_finish() -> None:
    """The TLS proxy on the host reaches the container; nothing else does. /metrics listens on
    127.0.0.1 outside a container, on every address of the container inside it."""
    assert SERVICE["ports"] == ["127.0.0.1:3000:3000"]
    assert SERVICE["stop_grace_period"] == "15s"
    assert SERVICE["environment"]["STUDYBOT_METRICS_HOST"] == "0.0.0.0"
    assert settings_from_env({}).metrics_host == "127.0.0.1"
    assert settings_from_env({"STUDYBOT_METRICS_HOST": "0.0.0.0"}).metrics_host == "0.0.0.0"
    readme = (REPO / "README.md").read_text()
    assert "`STUDYBOT_METRICS_HOST`" in readme and "STUDYBOT_METRICS_HOST=" in (REPO / ".env.example").read_text()


def test_the_config_file_is_mounted_from_the_documented_path_and_the_example_is_accepted() -> None:
    config = SERVICE["environment"]["STUDYBOT_CONFIG"]
    assert config == "/app/config/studybot.yaml"
    folder, name = config.rsplit("/", 1)
    assert mounts()[folder] == "./config"
    example = REPO / "config" / "studybot.example.yaml"
    assert settings_from_env({"STUDYBOT_CONFIG": str(example)}).config  # read without a ConfigError
    assert f"config/{name}" in (REPO / "README.md").read_text() and f"config/{name}" in example.read_text()
    assert "config/*.yaml" in (REPO / ".gitignore").read_text()  # the operator's copy stays out of git
    assert "required under Compose" in (REPO / "README.md").read_text()  # else a missing copy is a restart loop


def test_environment_names_are_the_ones_the_bot_reads() -> None:
    example = set(re.findall(r"^([A-Z_]+)=", (REPO / ".env.example").read_text(), re.M)) - {"COMPOSE_PROFILES"}
    python = {"PYTHONDONTWRITEBYTECODE", "PYTHONUNBUFFERED", "PIP_NO_CACHE_DIR"}
    named = set(example) | set(SERVICE["environment"]) | set(dockerfile_env()) - python
    assert named <= ALL_VARIABLES, named - ALL_VARIABLES
    assert {"STUDYBOT_LOG_FORMAT", "STUDYBOT_METRICS_PORT"} <= set(example)


def read_in(path: str) -> set[str]:
    return set(re.findall(r'(?:get|secret)\("([A-Z_]+)"\)', (REPO / path).read_text()))


def test_each_module_declares_the_variables_it_reads() -> None:
    assert read_in("bot/core/config.py") == set(VARIABLES)
    for platform in PLATFORMS:
        assert read_in(f"adapters/{platform.name}_settings.py") == set(platform.variables), platform.name


def test_the_build_context_leaves_out_secrets_data_and_caches() -> None:
    ignored = set((REPO / ".dockerignore").read_text().split())
    assert {".venv/", "data/", "*.db", ".env", ".git", "__pycache__/", ".pytest_cache/", ".ruff_cache/",
            ".mypy_cache/"} <= ignored
    copied = re.findall(r"^COPY (.+) \./?\S*$", DOCKERFILE, re.M)
    for sources in copied:
        for source in sources.split():
            assert source.rstrip("/") + "/" not in ignored and source not in ignored, source


def test_the_image_installs_exactly_the_lock() -> None:
    assert "COPY requirements.lock ./" in DOCKERFILE
    assert re.search(r"^RUN pip install --no-deps -r requirements\.lock$", DOCKERFILE, re.M)
    assert re.search(r"^RUN pip install --no-deps --no-build-isolation \. ", DOCKERFILE, re.M)
    assert DOCKERFILE.index("-r requirements.lock") < DOCKERFILE.index("--no-build-isolation .")


def lock_problems(pyproject: str, lock: str) -> list[str]:
    """What makes the lock disagree with pyproject.toml's dependencies (and build requirements)."""
    project = tomllib.loads(pyproject)
    wanted = [Requirement(r) for r in (*project["project"]["dependencies"], *project["build-system"]["requires"])]
    pins = {canonicalize_name(n): v for n, v in re.findall(r"^([A-Za-z0-9._-]+)==(\S+)", lock, re.M)}
    direct = {canonicalize_name(n) for n, via in re.findall(r"^([A-Za-z0-9._-]+)==\S+\n((?:    #.*\n)+)", lock, re.M)
              if "studybot (pyproject.toml" in via}
    problems = []
    for requirement in wanted:
        name = canonicalize_name(requirement.name)
        if name not in pins:
            problems.append(f"{requirement.name} is not in requirements.lock")
        elif not requirement.specifier.contains(pins[name], prereleases=True):
            problems.append(f"{requirement.name}=={pins[name]} does not satisfy {requirement}")
    problems += [f"{name} is locked but no longer a dependency" for name in
                 sorted(direct - {canonicalize_name(r.name) for r in wanted})]
    return problems


def test_the_lock_matches_pyproject() -> None:
    assert lock_problems((REPO / "pyproject.toml").read_text(), LOCK.read_text()) == [], "run `make lock`"
    assert "pip-compile" in LOCK.read_text().split("\n\n", 1)[0]  # says how it was made


@pytest.mark.parametrize("change, problem", [
    (lambda t: t.replace('"PyYAML>=6,<7",', '"PyYAML>=6,<7",\n    "requests>=2",'), "requests is not in"),
    (lambda t: t.replace('"PyYAML>=6,<7",', '"PyYAML>=7,<8",'), "pyyaml==6"),
    (lambda t: t.replace('    "PyYAML>=6,<7",\n', ""), "pyyaml is locked but no longer a dependency"),
])
def test_the_lock_check_fails_when_pyproject_changes_alone(change, problem) -> None:
    pyproject = (REPO / "pyproject.toml").read_text()
    changed = change(pyproject)
    assert changed != pyproject
    assert any(problem in p.lower() for p in lock_problems(changed, LOCK.read_text()))


def test_make_run_leaves_the_choice_of_platform_to_the_cli() -> None:
    makefile = (REPO / "Makefile").read_text()
    recipe = makefile.split("\nrun:", 1)[1].split("\n\n", 1)[0]
    assert "studybot run --or-console" in recipe
    assert not re.search(r"TOKEN|SLACK|DISCORD", recipe)


def test_the_licence_changelog_and_contributing_guide_are_there() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    licence = (REPO / "LICENSE").read_text()
    assert project["license"] == "MIT" and licence.startswith("MIT License") and "the studybot authors" in licence
    changelog = (REPO / "CHANGELOG.md").read_text()
    assert "## [Unreleased]" in changelog and "keepachangelog.com" in changelog
    contributing = (REPO / "CONTRIBUTING.md").read_text()
    assert "make test" in contributing and "make bench" in contributing


# ------------------------------------------------------------ the postgres profile


REPLICAS = {name: service for name, service in COMPOSE["services"].items() if name.startswith("studybot-pg")}
POSTGRES = COMPOSE["services"]["postgres"]


def test_every_service_has_a_profile_and_the_example_picks_sqlite() -> None:
    """`docker compose up -d --build` (the upgrade) starts one profile's services: the single SQLite service
    never beside the replicas."""
    assert SERVICE["profiles"] == ["sqlite"]
    assert all(service.get("profiles") == ["postgres"] for service in (POSTGRES, *REPLICAS.values()))
    assert re.search(r"^COMPOSE_PROFILES=sqlite$", (REPO / ".env.example").read_text(), re.M)


def test_the_postgres_profile_runs_two_replicas_on_one_database_and_one_port() -> None:
    assert len(REPLICAS) == 2 and not any("deploy" in r for r in REPLICAS.values())  # no identical copies
    for replica in REPLICAS.values():
        assert replica["depends_on"] == {"postgres": {"condition": "service_healthy"}}
        env = replica["environment"]
        reads = settings_from_env({k: v for k, v in env.items() if k != "STUDYBOT_CONFIG"})
        assert env["STUDYBOT_REUSE_PORT"] == "1" and reads.database_url == env["STUDYBOT_DATABASE_URL"]
        # the replicas live in the database's network: PostgreSQL on loopback, and the Slack port published there
        assert replica["network_mode"] == "service:postgres" and "ports" not in replica
        url = urlsplit(env["STUDYBOT_DATABASE_URL"])
        assert url.hostname == "127.0.0.1" and "listen_addresses=127.0.0.1" in POSTGRES["command"]
        assert (url.username, url.path) == (POSTGRES["environment"]["POSTGRES_USER"],
                                            "/" + POSTGRES["environment"]["POSTGRES_DB"])
    assert POSTGRES["ports"] == SERVICE["ports"]  # the same Slack port as the single process
    assert POSTGRES["healthcheck"]["test"][1] == "pg_isready"


def test_each_replica_runs_its_own_discord_shards_name_and_metrics_port() -> None:
    envs = [r["environment"] for r in REPLICAS.values()]
    running = [Process(name, "host", 1, "discord", datetime.now(UTC), datetime.now(UTC),
                       shards=env["STUDYBOT_DISCORD_SHARDS"]) for name, env in zip(REPLICAS, envs, strict=True)]
    assert shard_problems(running) == []  # every shard in one replica, one total
    for env in envs:
        DiscordSettings.from_env({**env, "DISCORD_TOKEN": "x"})  # a setting the bot reads
    names = [env["STUDYBOT_PROCESS_NAME"] for env in envs]
    ports = [env["STUDYBOT_METRICS_PORT"] for env in envs]
    assert len(set(names)) == len(set(ports)) == len(envs)  # a port set in .env would stop the second one


def test_each_replicas_healthcheck_checks_itself() -> None:
    commands = build_parser()._subparsers._group_actions[0].choices
    for name, replica in REPLICAS.items():
        assert replica["healthcheck"]["test"] == ["CMD", "studybot", "health", "--self"]
        assert replica["environment"]["STUDYBOT_PROCESS_NAME"] == name
    assert commands["health"].parse_args(["--self"]).itself is True


def test_the_replicas_are_the_single_service_but_for_the_database() -> None:
    for replica in REPLICAS.values():
        for key in ("build", "command", "env_file", "volumes", "read_only", "tmpfs", "restart", "stop_grace_period"):
            assert replica[key] == SERVICE[key], key
        assert set(replica["environment"]) - set(SERVICE["environment"]) == {
            "STUDYBOT_DATABASE_URL", "STUDYBOT_REUSE_PORT", "STUDYBOT_PROCESS_NAME", "STUDYBOT_DISCORD_SHARDS",
            "STUDYBOT_METRICS_PORT"}
        assert set(replica["environment"]) <= ALL_VARIABLES
        source = POSTGRES["volumes"][0].split(":")[0]
        assert source in COMPOSE["volumes"] and source not in {m.split(":")[0] for m in replica["volumes"]}


def test_the_image_has_pg_dump_and_the_readme_a_compose_backup_recipe() -> None:
    assert re.search(r"apt-get install [^\n]*postgresql-client", DOCKERFILE)
    readme = (REPO / "README.md").read_text()
    assert "docker compose exec studybot-pg-1 studybot backup /app/data/" in readme
    assert "docker compose cp studybot-pg-1:/app/data/" in readme


def test_the_readme_shows_how_to_start_the_profile() -> None:
    readme = (REPO / "README.md").read_text()
    assert "COMPOSE_PROFILES=postgres" in readme
    assert "studybot migrate-db --to" in readme
    for name in REPLICAS:
        assert name in readme


@pytest.mark.skipif(subprocess.run(["docker", "compose", "version"], capture_output=True).returncode != 0
                    if shutil.which("docker") else True, reason="docker compose is not installed")
@pytest.mark.parametrize("profile", ["sqlite", "postgres"])
def test_docker_compose_reads_the_file(tmp_path, profile: str) -> None:
    (tmp_path / ".env").write_text(f"COMPOSE_PROFILES={profile}\n")
    done = subprocess.run(["docker", "compose", "--project-directory", str(REPO), "--env-file", str(tmp_path / ".env"),
                           "-f", str(REPO / "docker-compose.yml"), "config", "--services"],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    expected = {"studybot"} if profile == "sqlite" else {"postgres", *REPLICAS}
    assert set(done.stdout.split()) == expected
