"""What the README and docs/ show works as shown: every YAML sample loads as a STUDYBOT_CONFIG file,
every config key they name exists, and every command they show (`studybot …`, `/…`, `make …`) is one."""

from __future__ import annotations

import re
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from support import REPO

from adapters.cli import build_parser
from adapters.platforms import settings_from_env
from bot.runtime.app import declared_commands

DOCS = [REPO / "README.md", REPO / "CONTRIBUTING.md", *sorted((REPO / "docs").glob("*.md"))]
FENCE = re.compile(r"^( *)```(\w*)\n(.*?)^ *```", re.S | re.M)
INLINE = re.compile(r"(?<!`)`([^`\n]+)`(?!`)")
LOG_SENTENCES = {"is"}  # `studybot is running on slack`, quoted from the log
NOT_COMMANDS = {"quit", "exit", "invite", "metrics", "tmp"}  # the console's own, Slack's own, and paths
CONFIG_SECTIONS = ("instructors", "rounds", "cohorts", "leaderboard", "discord")
FILE_NAME = re.compile(r"\.(py|md|ya?ml|txt|csv|html)\b")  # `leaderboard.py` is a module, not a key


def blocks(text: str, language: str) -> list[str]:
    return [textwrap.dedent(m.group(3)) for m in FENCE.finditer(text) if m.group(2) == language]


def code(text: str) -> Iterator[str]:
    """Every piece of code the page shows: the lines of its fenced blocks (but sample output, in
    `text` blocks), and its inline spans."""
    for match in FENCE.finditer(text):
        if match.group(2) != "text":
            yield from match.group(3).splitlines()
    yield from INLINE.findall(FENCE.sub("", text))


def yaml_samples() -> list[tuple[str, str]]:
    return [(f"{page.name}#{n}", block) for page in DOCS
            for n, block in enumerate(blocks(page.read_text(), "yaml"), start=1)]


def load_config(tmp_path: Path, sample: str) -> None:
    path = tmp_path / "studybot.yaml"
    path.write_text(sample)
    settings_from_env({"STUDYBOT_CONFIG": str(path)})


@pytest.mark.parametrize(("where", "sample"), yaml_samples(), ids=[w for w, _ in yaml_samples()])
def test_every_yaml_sample_is_a_config_the_loader_accepts(tmp_path: Path, where: str, sample: str) -> None:
    load_config(tmp_path, sample)


def test_the_yaml_samples_are_found_and_a_broken_one_fails(tmp_path: Path) -> None:
    """The check above can fail: the old Discord sample (instructors listed straight under
    instructors.discord) is refused."""
    assert {"README.md#1", "discord.md#1"} <= {where for where, _ in yaml_samples()}
    with pytest.raises(Exception, match="instructors.discord"):
        load_config(tmp_path, "instructors:\n  discord: [444444444444444444]\n")


def _key_paths(data: object, prefix: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    if isinstance(data, dict):
        for key, value in data.items():
            here = (*prefix, "*" if prefix == ("cohorts",) else str(key))
            yield here
            yield from _key_paths(value, here)


def known_keys() -> set[tuple[str, ...]]:
    """Every key of the README's full config sample (a cohort id is any id)."""
    full = next(b for b in blocks((REPO / "README.md").read_text(), "yaml") if "cohorts:" in b)
    return set(_key_paths(yaml.safe_load(full)))


def named_keys(text: str) -> set[str]:
    """Config keys named in prose, like `rounds.instructors_only` or `cohorts.<id>.daily`."""
    return {span.split(":")[0] for span in INLINE.findall(text) if not FILE_NAME.search(span)
            and re.fullmatch(rf"({'|'.join(CONFIG_SECTIONS)})(\.[\w<> -]+)+(:.*)?", span)}


def config_key_problems(text: str, known: set[tuple[str, ...]]) -> list[str]:
    def exists(key: str) -> bool:
        parts = ["*" if part.startswith("<") else part for part in key.split(".")]
        return any(len(parts) <= len(path) and all(p in ("*", k) or k == "*" for p, k in zip(parts, path, strict=False))
                   for path in known)

    return sorted(key for key in named_keys(text) if not exists(key))


def test_every_config_key_the_docs_name_exists() -> None:
    known = known_keys()
    assert ("instructors", "everywhere", "slack") in known and ("cohorts", "*", "instructors") in known
    assert config_key_problems("under `instructors.slack` in", known) == ["instructors.slack"]  # it can fail
    for page in DOCS:
        assert config_key_problems(page.read_text(), known) == [], page.name


def _cli_options() -> tuple[set[str], dict[str, set[str]]]:
    parser = build_parser()
    sub = next(a for a in parser._actions if a.choices and isinstance(a.choices, dict))
    main = {o for a in parser._actions for o in a.option_strings}
    return main, {name: {o for a in p._actions for o in a.option_strings} for name, p in sub.choices.items()}


def cli_problems(lines: list[str]) -> list[str]:
    """`studybot …` invocations naming a subcommand or an option the CLI does not have."""
    main, subcommands = _cli_options()
    problems = []
    for line in lines:
        words = re.split(r"\s+", re.split(r"\s(?:#|&&|;|\|)\s?|[)]", line)[0].strip())
        # the program starts the line, or follows Compose's service of the same name (`exec studybot studybot …`)
        starts = [0] + [i + 1 for i, word in enumerate(words[:-1]) if word == "studybot"]
        for i in starts:
            word = words[i] if i < len(words) else ""
            if not (word == "studybot" or word.endswith("/studybot")) or i + 1 == len(words):
                continue
            rest = words[i + 1:]
            if rest[0] == "studybot":
                continue
            name = next((w for w in rest if not w.startswith("-")), None)
            if name is None:
                problems += [f"{line}: {w}" for w in rest if w not in main]
                continue
            if name.isupper() or name in LOG_SENTENCES:  # a placeholder (`studybot --debug COMMAND`), a log line
                continue
            if name not in subcommands:
                problems.append(f"{line}: no subcommand {name}")
                continue
            problems += [f"{line}: {w}" for w in rest if w.startswith("-") and w not in main | subcommands[name]]
    return problems


def chat_problems(spans: list[str]) -> list[str]:
    """`/command word option:value` spans naming a command or a (Discord) option that does not exist."""
    specs = {spec.name: spec for spec in declared_commands()}
    problems = []
    for span in spans:
        match = re.fullmatch(r"/([a-z]+)((?: .*)?)", span)
        if not match or match.group(1) in NOT_COMMANDS:
            continue
        spec = specs.get(match.group(1))
        if spec is None:
            problems.append(f"{span}: no command /{match.group(1)}")
            continue
        for option in re.findall(r"\b([a-z]+):\S", match.group(2)):
            if spec.option(option) is None and option != "seconds":  # seconds:S is typed, on every platform
                problems.append(f"{span}: /{spec.name} has no option {option}")
    return problems


def make_problems(lines: list[str]) -> list[str]:
    targets = set(re.findall(r"^([\w.-]+):", (REPO / "Makefile").read_text(), re.M))
    return [line for line in lines for target in re.findall(r"\bmake ([a-z][\w-]*)", line) if target not in targets]


def test_every_command_the_docs_show_exists() -> None:
    assert cli_problems(["studybot chek", "studybot check --debugg"]) == [
        "studybot chek: no subcommand chek", "studybot check --debugg: --debugg"]  # the checks can fail
    assert chat_problems(["/quizz", "/leaderboard actoin:post"]) == [
        "/quizz: no command /quizz", "/leaderboard actoin:post: /leaderboard has no option actoin"]
    assert make_problems(["make tset"]) == ["make tset"]
    for page in DOCS:
        shown = list(code(page.read_text()))
        assert cli_problems(shown) == [], page.name
        assert chat_problems(shown) == [], page.name
        assert make_problems(shown) == [], page.name


TABLE_FORM = re.compile(r"^\| `(/[^`]+)` \|", re.M)


def help_form_mismatches(page: str, specs: list) -> list[str]:
    """Where the command forms a page's tables list (`| `/quiz [lesson]` | …`) and the forms /help shows
    differ; a row ending in `…` points elsewhere (`/insights …`)."""
    listed = {form.replace("\\|", "|") for form in TABLE_FORM.findall(page) if not form.endswith("…")}
    shown = {form for spec in specs for form in spec.forms}
    return sorted([f"{form}: in the README, not in /help" for form in listed - shown]
                  + [f"{form}: in /help, not in the README" for form in shown - listed])


def test_the_readme_lists_exactly_the_forms_help_shows() -> None:
    specs = declared_commands()
    readme = (REPO / "README.md").read_text()
    assert help_form_mismatches("| `/quiz round [lesson] [N]` | anyone |", specs[:1]) == [  # the check can fail
        "/quiz [lesson]: in /help, not in the README", "/quiz round [lesson] [N]: in the README, not in /help",
        "/quiz round [lesson] [practice] [N] [seconds:S]: in /help, not in the README",
        "/quiz round resume: in /help, not in the README", "/quiz round stop: in /help, not in the README"]
    assert help_form_mismatches(readme, specs) == []
