"""Lesson packs: load every pack under a folder into dataclasses, or list every problem.

Fast path: each file is parsed once with PyYAML's C loader and checked as plain data.
Only a file that has a problem is parsed again as a node tree, to give each problem
its line number.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import yaml

try:
    _Loader = yaml.CSafeLoader
except AttributeError:  # PyYAML built without libyaml
    _Loader = yaml.SafeLoader

LESSON_FILE, QUIZ_FILE, GLOSSARY_FILE, TEACHBACK_FILE = (
    "lesson.yaml",
    "quiz.yaml",
    "glossary.yaml",
    "teachback.yaml",
)
QUESTION_TYPES = ("mc", "short")


# ---------------------------------------------------------------- the dataclasses


@dataclass(frozen=True)
class Goal:
    id: str
    text: str


@dataclass(frozen=True)
class KeyPoint:
    """One idea a good answer states, recognised by any of its accepted phrasings."""

    id: str
    point: str
    accept: tuple[str, ...]
    misconceptions: tuple[str, ...] = ()


@dataclass(frozen=True)
class Rubric:
    needed: int
    points: tuple[KeyPoint, ...]


@dataclass(frozen=True)
class Option:
    text: str
    correct: bool
    why_wrong: str = ""


@dataclass(frozen=True)
class Question:
    id: str
    lesson_id: str
    type: str  # "mc" or "short"
    goal: str
    prompt: str
    explanation: str
    sources: tuple[str, ...]
    choices: tuple[Option, ...] = ()
    model_answer: str = ""
    rubric: Rubric | None = None

    @property
    def correct_index(self) -> int:
        return next(i for i, option in enumerate(self.choices) if option.correct)


@dataclass(frozen=True)
class Term:
    term: str
    definition: str
    lesson_id: str
    aliases: tuple[str, ...] = ()
    related: tuple[str, ...] = ()
    sources: tuple[str, ...] = ()


@dataclass(frozen=True)
class TeachbackPrompt:
    id: str
    lesson_id: str
    prompt: str
    key_points: tuple[KeyPoint, ...]
    goal: str = ""


@dataclass(frozen=True)
class Lesson:
    id: str
    title: str
    summary: str
    goals: tuple[Goal, ...]
    path: Path
    questions: tuple[Question, ...] = ()
    prompts: tuple[TeachbackPrompt, ...] = ()
    terms: tuple[Term, ...] = ()


@dataclass
class Library:
    lessons: dict[str, Lesson] = field(default_factory=dict)
    questions: dict[str, Question] = field(default_factory=dict)
    prompts: dict[str, TeachbackPrompt] = field(default_factory=dict)
    terms: list[Term] = field(default_factory=list)

    def lesson(self, name: str | None) -> Lesson | None:
        """A lesson by id (or unique id prefix); with no name, the only or first lesson."""
        if not self.lessons:
            return None
        if not name:
            return next(iter(self.lessons.values()))
        name = name.lower()
        if name in self.lessons:
            return self.lessons[name]
        matches = [lesson for key, lesson in self.lessons.items() if name in key]
        return matches[0] if len(matches) == 1 else None


# ---------------------------------------------------------------- problems


@dataclass(frozen=True)
class ContentError:
    file: str
    line: int
    field: str
    message: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.field}: {self.message}"


class ContentErrors(Exception):
    def __init__(self, problems: list[ContentError]) -> None:
        super().__init__("\n".join(map(str, problems)))
        self.problems = problems


Path_ = tuple[str | int, ...]  # a location inside one YAML document


def _describe(value: Any) -> str:
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


def _field_name(path: Path_) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else part)
    return out or "(document)"


class _Checker:
    """Reads one parsed file as plain data and collects (path, message) problems."""

    def __init__(self) -> None:
        self.problems: list[tuple[Path_, str]] = []

    def fail(self, path: Path_, message: str) -> None:
        self.problems.append((path, message))

    def mapping(self, value: Any, path: Path_) -> dict | None:
        if isinstance(value, dict):
            return value
        self.fail(path, f"expected a mapping of fields, got {_describe(value)}")
        return None

    def items(self, data: dict, key: str, path: Path_) -> Iterator[tuple[Path_, dict]]:
        """The mappings in a required list field."""
        value = data.get(key)
        if not isinstance(value, list) or not value:
            self.fail(path + (key,) if key in data else path, f"needs a non-empty list '{key}'")
            return
        for i, item in enumerate(value):
            if (checked := self.mapping(item, path + (key, i))) is not None:
                yield path + (key, i), checked

    def text(self, data: dict, key: str, path: Path_, required: bool = True) -> str:
        if key not in data or data[key] is None:
            if required:
                self.fail(path, f"missing required field '{key}'")
            return ""
        value = data[key]
        if not isinstance(value, str):
            shown = "" if isinstance(value, bool) else f" ({value})"
            self.fail(path + (key,), f"expected text, got {_describe(value)}{shown}; put the text in quotes")
            return ""
        if required and not value.strip():
            self.fail(path + (key,), "must not be empty")
        return value.strip()

    def texts(self, data: dict, key: str, path: Path_, required: bool = False) -> tuple[str, ...]:
        value = data.get(key)
        if value is None:
            if required:
                self.fail(path, f"missing required field '{key}'")
            return ()
        if not isinstance(value, list):
            self.fail(path + (key,), f"expected a list of text, got {_describe(value)}")
            return ()
        out = []
        for i, item in enumerate(value):
            if isinstance(item, str) and item.strip():
                out.append(item.strip())
            else:
                self.fail(path + (key, i), f"expected text, got {_describe(item)}; quote it")
        if required and not out:
            self.fail(path + (key,), "must list at least one entry")
        return tuple(out)

    def key_points(self, data: dict, key: str, path: Path_) -> tuple[KeyPoint, ...]:
        points = []
        for p_path, item in self.items(data, key, path):
            points.append(
                KeyPoint(
                    id=self.text(item, "id", p_path),
                    point=self.text(item, "point", p_path),
                    accept=self.texts(item, "accept", p_path, required=True),
                    misconceptions=self.texts(item, "misconceptions", p_path),
                )
            )
        return tuple(points)


# ---------------------------------------------------------------- the four files


def _read_lesson(c: _Checker, data: dict, folder: Path) -> Lesson:
    goals = tuple(
        Goal(c.text(g, "id", p), c.text(g, "text", p)) for p, g in c.items(data, "goals", ())
    )
    return Lesson(
        id=c.text(data, "id", ()),
        title=c.text(data, "title", ()),
        summary=c.text(data, "summary", ()),
        goals=goals,
        path=folder,
    )


def _read_questions(c: _Checker, data: dict, lesson: Lesson) -> list[tuple[Path_, Question]]:
    goal_ids = {g.id for g in lesson.goals}
    out = []
    for path, q in c.items(data, "questions", ()):
        kind = c.text(q, "type", path)
        if kind and kind not in QUESTION_TYPES:
            c.fail(path + ("type",), f"must be one of {', '.join(QUESTION_TYPES)}, not '{kind}'")
        goal = c.text(q, "goal", path)
        if goal and goal_ids and goal not in goal_ids:
            c.fail(path + ("goal",), f"'{goal}' is not a goal id of lesson '{lesson.id}'")
        choices: tuple[Option, ...] = ()
        rubric = None
        model_answer = ""
        if kind == "mc":
            options = []
            for o_path, o in c.items(q, "choices", path):
                correct = o.get("correct", False)
                if not isinstance(correct, bool):
                    c.fail(o_path + ("correct",), "must be true or false")
                    correct = False
                why_wrong = c.text(o, "why_wrong", o_path, required=not correct)
                options.append(Option(c.text(o, "text", o_path), correct, why_wrong))
            if options and sum(o.correct for o in options) != 1:
                c.fail(path + ("choices",), "exactly one choice must have correct: true")
            choices = tuple(options)
        elif kind == "short":
            model_answer = c.text(q, "model_answer", path)
            r = c.mapping(q.get("rubric"), path + ("rubric",)) if "rubric" in q else None
            if "rubric" not in q:
                c.fail(path, "missing required field 'rubric'")
            if r is not None:
                points = c.key_points(r, "points", path + ("rubric",))
                needed = r.get("needed", len(points))
                if not isinstance(needed, int) or isinstance(needed, bool) or not 1 <= needed <= max(1, len(points)):
                    c.fail(path + ("rubric", "needed"), f"must be a whole number from 1 to {len(points)}")
                    needed = len(points)
                rubric = Rubric(needed, points)
        question = Question(
            id=c.text(q, "id", path),
            lesson_id=lesson.id,
            type=kind,
            goal=goal,
            prompt=c.text(q, "prompt", path),
            explanation=c.text(q, "explanation", path),
            sources=c.texts(q, "sources", path),
            choices=choices,
            model_answer=model_answer,
            rubric=rubric,
        )
        out.append((path, question))
    return out


def _read_terms(c: _Checker, data: dict, lesson: Lesson) -> list[tuple[Path_, Term]]:
    return [
        (
            path,
            Term(
                term=c.text(t, "term", path),
                definition=c.text(t, "definition", path),
                lesson_id=lesson.id,
                aliases=c.texts(t, "aliases", path),
                related=c.texts(t, "related", path),
                sources=c.texts(t, "sources", path),
            ),
        )
        for path, t in c.items(data, "terms", ())
    ]


def _read_prompts(c: _Checker, data: dict, lesson: Lesson) -> list[tuple[Path_, TeachbackPrompt]]:
    return [
        (
            path,
            TeachbackPrompt(
                id=c.text(p, "id", path),
                lesson_id=lesson.id,
                prompt=c.text(p, "prompt", path),
                key_points=c.key_points(p, "key_points", path),
                goal=c.text(p, "goal", path, required=False),
            ),
        )
        for path, p in c.items(data, "prompts", ())
    ]


# ---------------------------------------------------------------- loading


class _Loading:
    """One run of the loader: the library so far, and every problem found."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.library = Library()
        self.problems: list[ContentError] = []
        self.seen: dict[str, tuple[str, Path_]] = {}  # id -> where it was first defined
        self._finders: dict[Path, _LineFinder] = {}

    def lines(self, file: Path) -> _LineFinder:
        """The line finder of a file: each file with problems is parsed for lines at most once."""
        return self._finders.setdefault(file, _LineFinder(file))

    def name(self, file: Path) -> str:
        try:
            return str(file.relative_to(self.root.parent if self.root.is_dir() else self.root))
        except ValueError:
            return str(file)

    def parse(self, file: Path) -> Any:
        try:
            text = file.read_text(encoding="utf-8")
        except OSError as exc:
            self.problems.append(ContentError(self.name(file), 1, "file", f"cannot read: {exc.strerror}"))
            return None
        try:
            return yaml.load(text, Loader=_Loader)
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
            line = mark.line + 1 if mark else 1
            problem = getattr(exc, "problem", None) or str(exc)
            self.problems.append(ContentError(self.name(file), line, "yaml", f"not valid YAML: {problem}"))
            return None

    def report(self, file: Path, checker: _Checker) -> None:
        if not checker.problems:
            return
        lines = self.lines(file)
        for path, message in checker.problems:
            self.problems.append(ContentError(self.name(file), lines.line(path), _field_name(path), message))

    def load_pack(self, folder: Path) -> None:
        lesson_file = folder / LESSON_FILE
        data = self.parse(lesson_file)
        if data is None:
            return
        c = _Checker()
        if (mapping := c.mapping(data, ())) is None:
            self.report(lesson_file, c)
            return
        lesson = _read_lesson(c, mapping, folder)
        self.report(lesson_file, c)
        parts: dict[str, list] = {"questions": [], "prompts": [], "terms": []}
        readers = (
            (QUIZ_FILE, _read_questions, "questions", "question", "id"),
            (TEACHBACK_FILE, _read_prompts, "prompts", "teach-back prompt", "id"),
            (GLOSSARY_FILE, _read_terms, "terms", "term", "term"),
        )
        for file_name, reader, part, kind, id_field in readers:
            file = folder / file_name
            if not file.exists():
                continue
            data = self.parse(file)
            if data is None:
                continue
            c = _Checker()
            if (mapping := c.mapping(data, ())) is not None:
                for path, item in reader(c, mapping, lesson):
                    key = getattr(item, id_field)
                    fresh = self._unique(kind, key, file, path, id_field, c)
                    if kind == "term":
                        for i, alias in enumerate(item.aliases):
                            self._unique(kind, alias, file, path + ("aliases", i), None, c)
                    if fresh:
                        parts[part].append(item)
            self.report(file, c)
        if lesson.id and self._unique("lesson", lesson.id, lesson_file, (), "id", None):
            lesson = Lesson(**{**lesson.__dict__, **{k: tuple(v) for k, v in parts.items()}})
            self.library.lessons[lesson.id] = lesson
            self.library.questions.update((q.id, q) for q in lesson.questions)
            self.library.prompts.update((p.id, p) for p in lesson.prompts)
            self.library.terms.extend(lesson.terms)

    def _unique(self, kind: str, key: str, file: Path, path: Path_, field_name: str | None,
                checker: _Checker | None) -> bool:
        """Remember an id; a second use of it anywhere in the library is a problem."""
        if not key:
            return False
        slot = f"{kind}:{key.lower()}"
        where = self.seen.get(slot)
        full_path = path + (field_name,) if field_name else path
        if where is None:
            self.seen[slot] = (self.name(file), full_path)
            return True
        first_file, first_path = where
        first_line = self.lines(self.root_file(first_file)).line(first_path)
        message = f"duplicate {kind} '{key}' (first at {first_file}:{first_line})"
        if checker is not None:
            checker.fail(full_path, message)
        else:
            self.problems.append(ContentError(self.name(file), self.lines(file).line(full_path),
                                              _field_name(full_path), message))
        return False

    def root_file(self, name: str) -> Path:
        base = self.root.parent if self.root.is_dir() else self.root
        return base / name

    def check_links(self) -> None:
        """Related terms must name terms of the library."""
        names = {t.term.lower() for t in self.library.terms}
        for lesson in self.library.lessons.values():
            file = lesson.path / GLOSSARY_FILE
            c = _Checker()
            for i, term in enumerate(lesson.terms):
                for j, related in enumerate(term.related):
                    if related.lower() not in names:
                        c.fail(("terms", i, "related", j), f"'{related}' is not a term of the library")
            self.report(file, c)


class _LineFinder:
    """Turns a path inside a YAML document into a 1-based line, parsing only when asked."""

    def __init__(self, file: Path) -> None:
        self.file = file

    def line(self, path: Path_) -> int:
        node = self._root
        if node is None:
            return 1
        line = node.start_mark.line + 1
        for part in path:
            child = None
            if isinstance(node, yaml.MappingNode) and isinstance(part, str):
                child = next((v for k, v in node.value if k.value == part), None)
            elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and part < len(node.value):
                child = node.value[part]
            if child is None:
                break
            node = child
            line = node.start_mark.line + 1
        return line

    @cached_property
    def _root(self) -> Any:
        try:
            return yaml.compose(self.file.read_text(encoding="utf-8"), Loader=_Loader)
        except (OSError, yaml.YAMLError):
            return None


def pack_folders(root: Path) -> list[Path]:
    """Every folder under root (or root itself) that holds a lesson.yaml, in a stable order."""
    if (root / LESSON_FILE).is_file():
        return [root]
    return sorted(p.parent for p in root.rglob(LESSON_FILE))


def check_library(root: Path) -> tuple[Library, list[ContentError]]:
    """Load what can be loaded, and every problem found on the way."""
    root = Path(root)
    loading = _Loading(root)
    if not root.is_dir():
        return loading.library, [ContentError(str(root), 1, "folder", "no such folder of lesson packs")]
    folders = pack_folders(root)
    if not folders:
        return loading.library, [ContentError(str(root), 1, "folder", f"no {LESSON_FILE} found")]
    for folder in folders:
        loading.load_pack(folder)
    loading.check_links()
    return loading.library, loading.problems


def load_library(root: Path) -> Library:
    """The whole library, or ContentErrors listing every problem as file:line: field: message."""
    library, problems = check_library(root)
    if problems:
        raise ContentErrors(problems)
    return library
