"""Load every lesson pack under a folder into the lesson model, or list every problem.

Fast path: each file is parsed once with PyYAML's C loader and checked as plain data.
Only a file that has a problem is parsed again as a node tree, to give each problem its
line number. Warnings (a quiz.md missing or stale) are reported but do not stop the bot.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path
from typing import Any

import yaml

from bot.content.model import Goal, Lesson, Library, TeachbackPrompt, Term
from bot.content.render import render_quiz
from bot.core import yamlfile
from bot.core.errors import ContentErrors, ContentProblem
from bot.core.suggest import did_you_mean
from bot.core.yamlcheck import Checker, FieldPath, field_name
from bot.grading.languages import ENGLISH, GRADED, answers_in
from bot.grading.reading import Synonyms
from bot.grading.scoring import teachback_needed
from bot.grading.selfcheck import audit_rubric
from bot.questions.base import Question
from bot.questions.registry import TYPES

LESSON_FILE, QUIZ_FILE, GLOSSARY_FILE, TEACHBACK_FILE = "lesson.yaml", "quiz.yaml", "glossary.yaml", "teachback.yaml"
PRACTICE_FILE = "practice.yaml"  # optional: questions outside the quiz, for /review and practice rounds
NOTES_FILE, QUIZ_MD = "notes.md", "quiz.md"
PACK_FILES = (LESSON_FILE, QUIZ_FILE, GLOSSARY_FILE, TEACHBACK_FILE, PRACTICE_FILE)

LESSON_KEYS = frozenset({"id", "title", "summary", "goals", "synonyms", "language"})
GOAL_KEYS = frozenset({"id", "text"})
QUESTION_KEYS = frozenset({"id", "type", "goal", "prompt", "explanation", "sources", "hints"})
MOST_HINTS = 3  # hints one question may offer
TERM_KEYS = frozenset({"term", "definition", "aliases", "related", "sources"})
PROMPT_KEYS = frozenset({"id", "goal", "prompt", "key_points", "needed", "needed_because", "sources", "examples"})
_SOURCE_HEADING = re.compile(r"^##\s+([A-Za-z][A-Za-z0-9_.-]*)\b[ \t]*(?:[—–-][ \t]*)?(.*)$", re.MULTILINE)
_SOURCE_LINK = re.compile(r"^-\s*Link:\s*(\S+)", re.MULTILINE)


@dataclass
class Report:
    """What a check of the library found: problems stop the bot, warnings do not."""

    library: Library
    problems: list[ContentProblem] = field(default_factory=list)
    warnings: list[ContentProblem] = field(default_factory=list)


def shown(file: Path) -> str:
    """A file as messages name it, so that it opens from where the command ran: relative to the current
    directory when it is under it, else absolute (however the folder of packs was given)."""
    try:
        full, here = Path(os.path.abspath(file)), Path.cwd()
    except OSError:  # the current directory was deleted
        return str(file)
    return str(full.relative_to(here)) if full.is_relative_to(here) else str(full)


# ---------------------------------------------------------------- the four files


def _read_lesson(c: Checker, data: dict, folder: Path) -> Lesson:
    c.known_keys(data, (), LESSON_KEYS)
    goals = tuple(Goal(c.text(g, "id", p), c.text(g, "text", p)) for p, g in c.items(data, "goals", (), GOAL_KEYS))
    language = data.get("language", ENGLISH)
    if language not in GRADED:
        c.fail(("language",), f"{str(language)[:20]!r} is not a language studybot grades; write one of "
               f"{', '.join(GRADED)} (default {ENGLISH})")
        language = ENGLISH
    return Lesson(id=c.text(data, "id", ()), title=c.text(data, "title", ()), summary=c.text(data, "summary", ()),
                  goals=goals, path=folder, synonyms=Synonyms(c.synonyms(data, "synonyms", ())), language=language)


def _read_questions(c: Checker, data: dict, lesson: Lesson) -> list[tuple[FieldPath, Question]]:
    c.known_keys(data, (), {"questions"})
    goal_ids = {g.id for g in lesson.goals}
    out: list[tuple[FieldPath, Question]] = []
    for path, q in c.items(data, "questions", ()):
        kind = c.text(q, "type", path)
        question_type = TYPES.get(kind)
        if question_type is None and kind:
            c.fail(path + ("type",), f"must be one of {', '.join(TYPES)}, not '{kind[:20]}'")
        goal = c.text(q, "goal", path)
        if goal and goal_ids and goal not in goal_ids:
            c.fail(path + ("goal",), f"'{goal[:40]}' is not a goal id of lesson '{lesson.id}'")
        common = dict(id=c.text(q, "id", path), lesson_id=lesson.id, goal=goal, prompt=c.text(q, "prompt", path),
                      explanation=c.text(q, "explanation", path), sources=c.texts(q, "sources", path),
                      hints=_hints(c, q, path))
        if question_type is not None:  # without a type, its own keys are unknown: check the common ones only
            c.known_keys(q, path, QUESTION_KEYS | question_type.keys)
            question = question_type.read(c, q, path, common)
            c.audited(path, question.audit(lesson.synonyms))
            out.append((path, question))
    return out


def _hints(c: Checker, question: dict, path: FieldPath) -> tuple[str, ...]:
    """A question's optional hints: a short list of text, each given at the learner's asking, in order."""
    hints = c.texts(question, "hints", path)
    if len(hints) > MOST_HINTS:
        c.fail(path + ("hints",), f"at most {MOST_HINTS} hints per question, not {len(hints)}; keep the best ones")
    if isinstance(question.get("hints"), list) and not question["hints"]:
        c.fail(path + ("hints",), "is an empty list; give one or more hints, or leave the key out")
    return hints[:MOST_HINTS]


def _read_terms(c: Checker, data: dict, lesson: Lesson) -> list[tuple[FieldPath, Term]]:
    c.known_keys(data, (), {"terms"})
    return [
        (path, Term(term=c.text(t, "term", path), definition=c.text(t, "definition", path), lesson_id=lesson.id,
                    aliases=c.texts(t, "aliases", path), related=c.texts(t, "related", path),
                    sources=c.texts(t, "sources", path)))
        for path, t in c.items(data, "terms", (), TERM_KEYS)
    ]


def _read_prompts(c: Checker, data: dict, lesson: Lesson) -> list[tuple[FieldPath, TeachbackPrompt]]:
    c.known_keys(data, (), {"prompts"})
    out = []
    for path, p in c.items(data, "prompts", (), PROMPT_KEYS):
        size = len(p["key_points"]) if isinstance(p.get("key_points"), list) else 0
        rubric = c.rubric(p, "key_points", path, default_needed=teachback_needed(size))
        item = TeachbackPrompt(id=c.text(p, "id", path), lesson_id=lesson.id, prompt=c.text(p, "prompt", path),
                               rubric=rubric, goal=c.text(p, "goal", path, required=False),
                               sources=c.texts(p, "sources", path), examples=c.examples(p, path),
                               needed_because=_needed_because(c, p, path))
        examples = item.examples
        issues = audit_rubric(rubric, item.prompt, examples.correct, examples.wrong, lesson.synonyms,
                              partly_examples=examples.partly)
        c.audited(path, [replace(i, where=_in_prompt(i.where)) for i in issues])
        out.append((path, item))
    return out


def _needed_because(c: Checker, prompt: dict, path: FieldPath) -> str:
    """The author's one-line reason for a teach-back's `needed`; it explains a `needed` that is set."""
    reason = c.text(prompt, "needed_because", path, required=False)
    if "\n" in reason:
        c.fail(path + ("needed_because",), "must be one line: say in a sentence why that many key points are needed")
    if "needed_because" in prompt and "needed" not in prompt:
        c.fail(path + ("needed_because",), "explains `needed`, which is not set; set it or drop the reason")
    return reason


def _in_prompt(where: FieldPath) -> FieldPath:
    """A rubric path as a teach-back prompt writes it: its key points are `key_points`, not `rubric.points`."""
    if where[:2] == ("rubric", "points"):
        return ("key_points", *where[2:])
    return ("key_points",) if where[:1] == ("rubric",) else where


@dataclass(frozen=True)
class _Part:
    """One of a pack's item files: how to read it and how its items are named."""

    file: str
    read: Callable[[Checker, dict, Lesson], Iterable[tuple[FieldPath, Any]]]
    kind: str  # how a duplicate is named: "question", "term" ...
    id_field: str
    lesson_field: str  # where the items go in the Lesson


PARTS = (
    _Part(QUIZ_FILE, _read_questions, "question", "id", "questions"),
    _Part(TEACHBACK_FILE, _read_prompts, "teach-back prompt", "id", "prompts"),
    _Part(GLOSSARY_FILE, _read_terms, "term", "term", "terms"),
    _Part(PRACTICE_FILE, _read_questions, "question", "id", "practice"),
)


def pack_items(library: Library) -> dict[str, tuple[str, str]]:
    """Every question and teach-back prompt by id: the pack file it is written in, and its prompt."""
    return {item.id: (part.file, item.prompt) for lesson in library.lessons.values() for part in PARTS
            if part.id_field == "id" for item in getattr(lesson, part.lesson_field)}


# ---------------------------------------------------------------- loading


class _AnySource(dict):
    """The sources of a notes.md that could not be read: every citation is taken as listed."""

    def __contains__(self, item: object) -> bool:
        return True


class _Loading:
    """One run of the loader: the library so far, and every problem found."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.report = Report(Library())
        self.seen: dict[str, tuple[Path, FieldPath]] = {}  # id -> where it was first defined
        self._finders: dict[Path, _LineFinder] = {}
        self._texts: dict[Path, str] = {}  # each file as read, for its line finder

    def lines(self, file: Path) -> _LineFinder:
        """The line finder of a file: each file with problems is parsed for lines at most once."""
        if file not in self._finders:
            self._finders[file] = _LineFinder(self._texts.get(file))
        return self._finders[file]

    def problem(self, file: Path, line: int, where: str, message: str) -> None:
        self.report.problems.append(ContentProblem(shown(file), line, where, message))

    def parse(self, file: Path) -> Any:
        """The file's YAML as plain data; None (with the problem reported) when it cannot be used:
        only regular UTF-8 files inside the root, of bounded size, without anchors or aliases."""
        try:
            text = self._texts[file] = yamlfile.read_text(file, root=self.root)
            data = yamlfile.load(text)
        except yamlfile.FileRefused as exc:
            self.problem(file, exc.line, "file", exc.message)
            return None
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
            problem = getattr(exc, "problem", None) or str(exc)
            self.problem(file, mark.line + 1 if mark else 1, "yaml", f"not valid YAML: {problem}")
            return None
        if data is None:
            self.problem(file, 1, "file", "the file is empty; write its fields (see content/README.md) or delete it")
        return data

    def check(self, file: Path, checker: Checker) -> None:
        """Turn a checker's problems and warnings into located ContentErrors."""
        if not checker.problems and not checker.warnings:
            return
        lines = self.lines(file)
        for path, message in checker.problems:
            self.problem(file, lines.line(path), field_name(path), message)
        for path, message in checker.warnings:
            self.report.warnings.append(ContentProblem(shown(file), lines.line(path), field_name(path),
                                                     f"warning: {message}"))

    def load_pack(self, folder: Path) -> None:
        lesson_file = folder / LESSON_FILE
        self.unknown_files(folder)
        data = self.parse(lesson_file)
        if data is None:
            return
        c = Checker()
        if (mapping := c.mapping(data, ())) is None:
            self.check(lesson_file, c)
            return
        lesson = _read_lesson(c, mapping, folder)
        self.check(lesson_file, c)
        parts: dict[str, list[Any]] = {part.lesson_field: [] for part in PARTS}  # questions, prompts, terms, practice
        sources = self.source_ids(folder)
        with answers_in(lesson.language):  # its rubrics are read, and their examples graded, in its language
            self._load_parts(folder, lesson, parts, sources)
        if lesson.id and self._unique("lesson", lesson.id, lesson_file, ("id",), None):
            self.report.library.add(replace(lesson, questions=tuple(parts["questions"]),
                                            prompts=tuple(parts["prompts"]), terms=tuple(parts["terms"]),
                                            practice=tuple(parts["practice"]), sources=dict(sources or {})))

    def _load_parts(self, folder: Path, lesson: Lesson, parts: dict[str, list[Any]],
                    sources: dict[str, str] | None) -> None:
        for part in PARTS:
            file = folder / part.file
            if not file.exists() or (data := self.parse(file)) is None:
                continue
            c = Checker()
            if (mapping := c.mapping(data, ())) is not None:
                for path, item in part.read(c, mapping, lesson):
                    self.cited(c, path, item.sources, sources)
                    fresh = self._unique(part.kind, getattr(item, part.id_field), file, path + (part.id_field,), c)
                    for i, alias in enumerate(getattr(item, "aliases", ())):
                        self._unique(part.kind, alias, file, path + ("aliases", i), c)
                    if fresh:
                        parts[part.lesson_field].append(item)
            self.check(file, c)

    def unknown_files(self, folder: Path) -> None:
        """A misspelt pack file would silently be left out: name it."""
        for file in sorted(folder.glob("*.y*ml")):
            if file.name not in PACK_FILES:
                self.problem(file, 1, "file", f"not a lesson-pack file{did_you_mean(file.name, PACK_FILES)}; "
                             f"a pack holds {', '.join(PACK_FILES)}")

    def source_ids(self, folder: Path) -> dict[str, str] | None:
        """The sources that head sections of the pack's notes.md, by id: each one's title, and its
        link when the section gives one (`- Link: URL`). None: no notes.md."""
        notes = folder / NOTES_FILE
        if not notes.exists():
            return None
        try:
            text = yamlfile.read_text(notes, root=self.root)
            found: dict[str, str] = {}
            for heading in _SOURCE_HEADING.finditer(text):
                section = text[heading.end():].split("\n## ", 1)[0]
                title = heading.group(2).strip() or heading.group(1)
                link = _SOURCE_LINK.search(section)
                found.setdefault(heading.group(1), f"{title} <{link.group(1)}>" if link else title)
            return found
        except yamlfile.FileRefused as exc:
            self.problem(notes, exc.line, "file", exc.message)
            return _AnySource()  # reported once here, not again for every citation

    def cited(self, c: Checker, path: FieldPath, cited: tuple[str, ...], known: Mapping[str, str] | None) -> None:
        for i, source in enumerate(cited):
            if known is None:
                c.fail(path + ("sources", i), f"cites '{source[:20]}', but the pack has no {NOTES_FILE} to list it")
            elif source not in known:
                c.fail(path + ("sources", i), f"'{source[:20]}' is not a source heading (## {source[:20]} — …) "
                       f"of {NOTES_FILE}")

    def _unique(self, kind: str, key: str, file: Path, path: FieldPath, checker: Checker | None) -> bool:
        """Remember an id; a second use of it anywhere in the library is a problem."""
        if not key:
            return False
        slot = f"{kind}:{key.lower()}"
        if (where := self.seen.get(slot)) is None:
            self.seen[slot] = (file, path)
            return True
        first_file, first_path = where
        message = f"duplicate {kind} '{key[:40]}' (first at {shown(first_file)}:" \
                  f"{self.lines(first_file).line(first_path)})"
        if checker is not None:
            checker.fail(path, message)
        else:
            self.problem(file, self.lines(file).line(path), field_name(path), message)
        return False

    def check_links(self) -> None:
        """Related terms must name terms of the library."""
        names = {t.term.lower() for t in self.report.library.terms}
        for lesson in self.report.library.lessons.values():
            c = Checker()
            for i, term in enumerate(lesson.terms):
                for j, related in enumerate(term.related):
                    if related.lower() not in names:
                        c.fail(("terms", i, "related", j), f"'{related[:40]}' is not a term of the library")
            self.check(lesson.path / GLOSSARY_FILE, c)

    def links(self) -> None:
        """A linked folder that leads out of the root is not read: say so, rather than drop it."""
        for path in sorted(self.root.rglob("*")):
            if path.is_symlink() and path.is_dir() and not yamlfile.inside(path, self.root):
                self.problem(path, 1, "folder", f"is a link to {path.resolve()}, outside {self.root}; "
                             f"copy the pack into {self.root} instead")

    def orphans(self) -> None:
        """Pack files in a folder without lesson.yaml would vanish without a word: report the folder."""
        for folder in sorted({f.parent for name in PACK_FILES[1:] for f in self.root.rglob(name)}):
            if (folder / LESSON_FILE).is_file():
                continue
            names = sorted(p.name for p in folder.glob("*.y*ml"))
            misspelt = [n for n in names if n not in PACK_FILES and did_you_mean(n, [LESSON_FILE])]
            hint = f" ({misspelt[0]}: did you mean '{LESSON_FILE}'?)" if misspelt else ""
            self.problem(folder, 1, "folder", f"has {', '.join(names)} but no {LESSON_FILE}{hint}; "
                         "every pack needs one (see content/README.md)")


class _LineFinder:
    """Turns a path inside a YAML document (its text, None when unread) into a 1-based line,
    parsing only when asked."""

    def __init__(self, text: str | None) -> None:
        self.text = text

    def line(self, path: FieldPath) -> int:
        node = self._root
        if node is None:
            return 1
        line = node.start_mark.line + 1
        for part in path:
            if isinstance(node, yaml.MappingNode) and isinstance(part, str):
                pair = next(((k, v) for k, v in node.value if k.value == part), None)
                if pair is None:
                    break
                key, node = pair
                line = key.start_mark.line + 1  # the key's line, also when its value starts below it
            elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and part < len(node.value):
                node = node.value[part]
                line = node.start_mark.line + 1
            else:
                break
        return line

    @cached_property
    def _root(self) -> Any:
        try:
            return yaml.compose(self.text, Loader=yamlfile.Loader) if self.text is not None else None
        except yaml.YAMLError:
            return None


def pack_folders(root: Path) -> list[Path]:
    """Every folder under root (or root itself) that holds a lesson.yaml, in a stable order."""
    if (root / LESSON_FILE).is_file():
        return [root]
    return sorted(p.parent for p in root.rglob(LESSON_FILE))


def check_library(root: Path) -> Report:
    """Load what can be loaded, and every problem and warning found on the way."""
    root = Path(root)
    loading = _Loading(root)
    if not root.is_dir():
        loading.problem(root, 1, "folder", "no such folder of lesson packs; set STUDYBOT_CONTENT or pass a folder")
        return loading.report
    loading.links()
    loading.orphans()
    folders = pack_folders(root)
    if not folders and not loading.report.problems:
        loading.problem(root, 1, "folder", f"no {LESSON_FILE} found; a lesson pack is a folder with one")
    for folder in folders:
        loading.load_pack(folder)
    loading.check_links()
    for lesson in loading.report.library.lessons.values():
        if (warning := quiz_md_warning(lesson)) is not None:
            loading.report.warnings.append(warning)
    return loading.report


def quiz_md_warning(lesson: Lesson) -> ContentProblem | None:
    """A lesson's quiz.md (its questions and answer key, for reading) missing while it has questions, or
    not what `studybot render` would write: a warning, never a problem.

    Compared by content, not modification time: a fresh clone gives every file a new time."""
    target = lesson.path / QUIZ_MD
    if not target.exists():
        return ContentProblem(shown(target), 0, "file", "warning: missing; run `studybot render` to write it (the "
                              "questions and answer key)") if lesson.questions else None
    try:
        stale = yamlfile.read_text(target) != render_quiz(lesson)
    except yamlfile.FileRefused:
        stale = True
    return ContentProblem(shown(target), 1, "file", f"warning: {QUIZ_MD} does not match {QUIZ_FILE}; run "
                          "`studybot render` to update it") if stale else None


def load_library(root: Path) -> Library:
    """The whole library, or ContentErrors listing every problem."""
    report = check_library(root)
    if report.problems:
        raise ContentErrors(report.problems)
    return report.library
