"""Reading YAML people write (lesson packs, the config file) as plain data, each problem with
where it is: studybot's one YAML validator.

A `Checker` reads one parsed document; each problem is a field path inside it and a message.
The lesson loader collects every problem, and turns paths into line numbers only when there
are problems to report; the config stops at the first (`stop_at_first`), which is raised as
`Invalid` for the config to name its file. Messages never quote a whole value: at most a
short scalar (`shown`).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator, Mapping
from typing import Any, NoReturn

from bot.core.suggest import did_you_mean
from bot.grading.rubric import Examples, KeyPoint, Rubric
from bot.grading.selfcheck import RubricIssue

FieldPath = tuple[str | int, ...]  # a location inside one YAML document


def describe(value: Any) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    if value is None:
        return "nothing"
    return type(value).__name__


def shown(value: Any) -> str:
    """A value as a message may show it: a short scalar, or what kind of thing it is."""
    if isinstance(value, str):
        return f"'{value[:20]}'"
    if isinstance(value, bool | int | float) or value is None:
        return "null" if value is None else str(value).lower() if isinstance(value, bool) else str(value)
    return "a list" if isinstance(value, list) else "a mapping"


def field_name(path: FieldPath) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else part)
    return out or "(document)"


class Invalid(Exception):
    """The first problem of a document read with `stop_at_first`."""

    def __init__(self, path: FieldPath, message: str) -> None:
        super().__init__(f"{field_name(path)}: {message}")
        self.path = path
        self.message = message


class Checker:
    """Reads one parsed document as plain data and collects (path, message) problems.

    `list_keys`: an unknown key's message lists the keys allowed there (the config, whose few
    keys people write by hand), instead of naming the key (a lesson pack's fields are many).
    `stop_at_first`: the first problem raises `Invalid` (the config is refused at its first)."""

    def __init__(self, *, list_keys: bool = False, stop_at_first: bool = False) -> None:
        self.problems: list[tuple[FieldPath, str]] = []
        self.warnings: list[tuple[FieldPath, str]] = []
        self.list_keys = list_keys
        self.stop_at_first = stop_at_first

    def fail(self, path: FieldPath, message: str) -> None:
        self.problems.append((path, message))
        if self.stop_at_first:
            raise Invalid(path, message)

    def stop(self, path: FieldPath, message: str) -> NoReturn:
        """A problem the reading cannot go on after."""
        self.problems.append((path, message))
        raise Invalid(path, message)

    def warn(self, path: FieldPath, message: str) -> None:
        self.warnings.append((path, message))

    def audited(self, path: FieldPath, issues: Iterable[RubricIssue]) -> None:
        """Report a rubric's self-check below `path`: mismatched examples fail, the rest warn."""
        for issue in issues:
            (self.warn if issue.warning else self.fail)(path + issue.where, issue.message)

    def mapping(self, value: Any, path: FieldPath, allowed: Collection[str] | None = None) -> dict | None:
        """The value as a mapping, reporting unknown keys when `allowed` is given."""
        if not isinstance(value, dict):
            self.fail(path, f"expected a mapping of fields, got {describe(value)}")
            return None
        if allowed is not None:
            self.known_keys(value, path, allowed)
        return value

    def known_keys(self, data: Mapping, path: FieldPath, allowed: Collection[str]) -> None:
        """Report every key outside `allowed`, with the closest allowed one."""
        for key in data:
            if key not in allowed:
                name = str(key)[:40]
                if self.list_keys:
                    where = f"under {field_name(path)}" if path else "here"
                    self.fail(path + (name,), f"unknown key{did_you_mean(name, allowed)}; "
                              f"the keys {where} are {', '.join(allowed)}")
                else:
                    self.fail(path + (str(key),), f"unknown key '{name}'{did_you_mean(name, allowed)}")

    def section(self, data: Mapping, key: str, path: FieldPath,
                allowed: Collection[str] | None = None) -> Mapping:
        """An optional mapping field (empty when absent), reporting unknown keys when `allowed` is given."""
        value = data.get(key) or {}
        if not isinstance(value, Mapping):
            self.fail(path + (key,), f"must be a mapping (indented key: value lines), not {shown(value)}")
            return {}
        if allowed is not None:
            self.known_keys(value, path + (key,), allowed)
        return value

    def ids(self, data: Mapping, key: str, path: FieldPath) -> frozenset[str]:
        """An optional list of ids (text, or numbers such as Discord's)."""
        value = data.get(key) or []
        if not isinstance(value, list) or any(isinstance(v, bool | list | dict) or v is None for v in value):
            self.fail(path + (key,), "must be a list of ids, like [U0TEACH1, U0TEACH2]")
            return frozenset()
        return frozenset(str(v) for v in value)

    def items(self, data: Mapping, key: str, path: FieldPath,
              allowed: Collection[str] | None = None) -> Iterator[tuple[FieldPath, dict]]:
        """The mappings in a required, non-empty list field."""
        value = data.get(key)
        if not isinstance(value, list) or not value:
            self.fail(path + (key,) if key in data else path, f"needs a non-empty list '{key}'")
            return
        for i, item in enumerate(value):
            if (checked := self.mapping(item, path + (key, i), allowed)) is not None:
                yield path + (key, i), checked

    def text(self, data: Mapping, key: str, path: FieldPath, required: bool = True) -> str:
        if key not in data or data[key] is None:
            if required:
                self.fail(path, f"missing required field '{key}'")
            return ""
        value = data[key]
        if not isinstance(value, str):
            shown = "" if isinstance(value, bool) or not isinstance(value, int | float) else f" ({value})"
            self.fail(path + (key,), f"expected text, got {describe(value)}{shown}; put the text in quotes")
            return ""
        if required and not value.strip():
            self.fail(path + (key,), "must not be empty")
        return value.strip()

    def texts(self, data: Mapping, key: str, path: FieldPath, required: bool = False) -> tuple[str, ...]:
        value = data.get(key)
        if value is None:
            if required:
                self.fail(path, f"missing required field '{key}'")
            return ()
        if not isinstance(value, list):
            self.fail(path + (key,), f"expected a list of text, got {describe(value)}")
            return ()
        out = []
        for i, item in enumerate(value):
            if isinstance(item, str) and item.strip():
                out.append(item.strip())
            else:
                self.fail(path + (key, i), f"expected text, got {describe(item)}; quote it")
        if required and not out:
            self.fail(path + (key,), "must list at least one entry")
        return tuple(out)

    def flag(self, data: Mapping, key: str, path: FieldPath, default: bool = False) -> bool:
        value = data.get(key, default)
        if not isinstance(value, bool):
            self.fail(path + (key,), f"must be true or false, not {shown(value)}")
            return default
        return value

    def whole_number(self, data: Mapping, key: str, path: FieldPath, low: int, high: int, default: int) -> int:
        value = data.get(key, default)
        if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
            self.fail(path + (key,), f"must be a whole number from {low} to {high}")
            return default
        return value

    def key_points(self, data: Mapping, key: str, path: FieldPath) -> tuple[KeyPoint, ...]:
        points = []
        for p_path, item in self.items(data, key, path, KEY_POINT_KEYS):
            points.append(KeyPoint(
                id=self.text(item, "id", p_path),
                point=self.text(item, "point", p_path),
                accept=self.texts(item, "accept", p_path, required=True),
                misconceptions=self.texts(item, "misconceptions", p_path),
            ))
        return tuple(points)

    def rubric(self, data: Mapping, points_key: str, path: FieldPath, default_needed: int | None = None,
               half_point: bool = True) -> Rubric:
        """Key points under `points_key` and `needed`: how many make an answer correct."""
        points = self.key_points(data, points_key, path)
        fallback = default_needed if default_needed is not None else len(points)
        needed = self.whole_number(data, "needed", path, 1, max(1, len(points)), max(1, fallback))
        return Rubric(needed, points, half_point)


    def examples(self, data: Mapping, path: FieldPath) -> Examples:
        """The optional `examples: {correct: [...], wrong: [...]}` of a rubric's question or prompt. An example
        is an answer, or `{answer: ..., kind: ...}` to say what it exercises (one of EXAMPLE_KINDS)."""
        if "examples" not in data:
            return Examples()
        found = self.mapping(data["examples"], path + ("examples",), EXAMPLE_KEYS)
        if found is None:
            return Examples()
        where = path + ("examples",)
        return Examples(self._answers(found, "correct", where), self._answers(found, "wrong", where),
                        self._answers(found, "partly", where))

    def _answers(self, data: Mapping, key: str, path: FieldPath) -> tuple[str, ...]:
        """The answers of a list of examples, each text or a tagged mapping."""
        value = data.get(key)
        if not isinstance(value, list):
            return self.texts(data, key, path)  # nothing, or the message for a value that is no list
        answers = []
        for i, item in enumerate(value):
            where = path + (key, i)
            if isinstance(item, dict):
                self.known_keys(item, where, TAGGED_EXAMPLE_KEYS)
                kind = self.text(item, "kind", where)
                if kind and kind not in EXAMPLE_KINDS:
                    self.fail(where + ("kind",), f"must be one of {', '.join(EXAMPLE_KINDS)}, not '{kind[:20]}'")
                if answer := self.text(item, "answer", where):
                    answers.append(answer)
            elif isinstance(item, str) and item.strip():
                answers.append(item.strip())
            else:
                self.fail(where, f"expected text, got {describe(item)}; quote it")
        return tuple(answers)

    def synonyms(self, data: Mapping, key: str, path: FieldPath) -> dict[str, str]:
        """A mapping of words to what they stand for (`DP: data parallelism`), text on both sides."""
        value = data.get(key)
        if value is None:
            return {}
        if not isinstance(value, dict):
            self.fail(path + (key,), f"expected a mapping such as 'DP: data parallelism', got {describe(value)}")
            return {}
        table = {}
        for said, meant in value.items():
            if isinstance(said, str) and isinstance(meant, str) and said.strip() and meant.strip():
                table[said.strip()] = meant.strip()
            else:
                self.fail(path + (key, str(said)), "each synonym maps a word to text; quote both sides")
        return table


KEY_POINT_KEYS = frozenset({"id", "point", "accept", "misconceptions"})
EXAMPLE_KEYS = frozenset({"correct", "wrong", "partly"})
TAGGED_EXAMPLE_KEYS = frozenset({"answer", "kind"})
# What a tagged example exercises: a shorthand of the pack's synonyms table, or a point in other words.
EXAMPLE_KINDS = ("shorthand", "paraphrase")
