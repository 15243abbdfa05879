"""Neutral items into a lesson pack a person can edit: lesson.yaml, quiz.yaml, glossary.yaml (or
practice.yaml), notes.md (the source files) and quiz.md, staged in a hidden folder beside the pack,
checked with the loader, then renamed into place (nothing is half-written).

A short answer's rubric starts from the accepted answers: one key point, its phrasings the answers.
Whatever the loader finds wrong with an imported item is reported with the source file and item."""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from bot.content.loader import (
    GLOSSARY_FILE,
    LESSON_FILE,
    NOTES_FILE,
    PRACTICE_FILE,
    QUIZ_FILE,
    QUIZ_MD,
    check_library,
    pack_folders,
)
from bot.content.render import render_quiz
from bot.core import yamlfile
from bot.interchange.model import Found, ImportRefused, Item, Skipped, printable

_FIELD = re.compile(r"^(questions|terms)\[(\d+)\]")


@dataclass
class Written:
    """What an import wrote, and what the loader found wrong with it, by source item."""

    folder: Path
    counts: dict[str, int] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)  # "source: item: field: message"
    skipped: list[Skipped] = field(default_factory=list)  # items the pack already had
    warnings: list[str] = field(default_factory=list)


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:40] or "imported"


DUMPER: type[yaml.SafeDumper] = getattr(yaml, "CSafeDumper", yaml.SafeDumper)  # SafeDumper without libyaml


def _dump(data: Any) -> str:
    return yaml.dump(data, Dumper=DUMPER, allow_unicode=True, sort_keys=False, width=1000)


def _load(path: Path, key: str | None = None) -> Any:
    """A pack file to merge into, as data (its `key` list when given); ImportRefused when it cannot be read."""
    if not path.exists():
        return [] if key else None
    try:
        data = yamlfile.load(yamlfile.read_text(path))
    except (yamlfile.FileRefused, yaml.YAMLError) as exc:
        raise ImportRefused(f"{path}: cannot be read to merge into ({printable(str(exc), 120)}); fix it (studybot "
                            "validate) or write the pack anew with --replace") from exc
    if key is None:
        return data if isinstance(data, dict) else None
    items = data.get(key) if isinstance(data, dict) else None
    if not isinstance(items, list):
        raise ImportRefused(f"{path}: has no list '{key}:' to merge into; fix it or write the pack anew with --replace")
    return items


def _notes(path: Path) -> str:
    try:
        return yamlfile.read_text(path)
    except yamlfile.FileRefused as exc:
        raise ImportRefused(f"{path}: cannot be read to merge into ({exc.message}); fix it or write the pack anew "
                            "with --replace") from exc


def _question(item: Item, qid: str, goal: str, source_id: str) -> dict[str, Any]:
    base: dict[str, Any] = {"id": qid, "type": item.kind if item.kind != "card" else "short", "goal": goal,
                            "prompt": item.prompt}
    if item.kind == "mc":
        right = next((c.text for c in item.choices if c.correct), "")
        base["choices"] = [{"text": c.text, "correct": True} if c.correct else
                           {"text": c.text, "why_wrong": c.feedback or f"The answer is “{right}”."}
                           for c in item.choices]
        explanation = item.explanation or next((c.feedback for c in item.choices if c.correct and c.feedback),
                                               f"The answer is “{right}”.")
    elif item.kind == "order":
        base["steps"] = list(item.answers)
        explanation = item.explanation or "The steps in their right order: " + "; ".join(item.answers) + "."
    else:  # short, or a flashcard asked as a short answer
        base["model_answer"] = item.answers[0]
        base["rubric"] = {"needed": 1, "points": [{"id": "answer", "point": item.answers[0],
                                                   "accept": list(dict.fromkeys(item.answers))}]}
        explanation = item.explanation or f"The answer: {item.answers[0]}"
    base["explanation"] = explanation
    base["sources"] = [source_id]
    return base


@dataclass
class _Plan:
    """The pack's files as data, with which source item each new entry came from."""

    lesson: dict[str, Any]
    quiz: list[dict[str, Any]]
    practice: list[dict[str, Any]]
    terms: list[dict[str, Any]]
    notes: str
    origin: dict[tuple[str, int], Item] = field(default_factory=dict)  # (file, index) -> item
    skipped: list[Skipped] = field(default_factory=list)  # items the pack already has


def _plan(found: Found, folder: Path, cards: str, merge: bool) -> _Plan:
    lesson_id = slug(folder.name)
    old_lesson = _load(folder / LESSON_FILE) if merge else None
    lesson = old_lesson or {"id": lesson_id, "title": folder.name.replace("-", " ").capitalize(),
                            "summary": "Imported questions and terms; edit this summary.", "goals": []}
    lesson_id = str(lesson.get("id", lesson_id))
    quiz = list(_load(folder / QUIZ_FILE, "questions")) if merge else []
    practice = list(_load(folder / PRACTICE_FILE, "questions")) if merge else []
    terms = list(_load(folder / GLOSSARY_FILE, "terms")) if merge else []
    notes = _notes(folder / NOTES_FILE) if merge and (folder / NOTES_FILE).exists() else \
        "# Reading log\n\nThe files these questions were imported from.\n"
    plan = _Plan(lesson, quiz, practice, terms, notes)
    ids = {str(q.get("id")) for q in quiz + practice if isinstance(q, dict)}
    prompts = {str(q.get("prompt")) for q in quiz + practice if isinstance(q, dict)}
    known_terms = {str(t.get("term", "")).lower() for t in terms if isinstance(t, dict)}
    goals = lesson.setdefault("goals", [])
    if not isinstance(goals, list) or not all(isinstance(g, dict) for g in goals):
        raise ImportRefused(f"{folder / LESSON_FILE}: its goals are not a list of id and text to merge into; fix it "
                            "(studybot validate) or write the pack anew with --replace")
    counter = len(ids)
    for source in dict.fromkeys(i.source for i in found.items):
        goal = slug(Path(source.split(":")[0]).stem)
        if goal not in {g.get("id") for g in goals}:
            goals.append({"id": goal, "text": f"Answer the questions imported from {source}."})
        source_id = _source_id(plan, source)
        for item in (i for i in found.items if i.source == source):
            if item.kind == "card" and cards == "glossary":
                if item.prompt.lower() in known_terms:
                    plan.skipped.append(Skipped(item.source, item.ref, f"the term '{item.prompt[:40]}' is in the "
                                                                       "glossary already"))
                    continue
                known_terms.add(item.prompt.lower())
                plan.origin[GLOSSARY_FILE, len(terms)] = item
                terms.append({"term": item.prompt, "definition": item.answers[0], "sources": [source_id]})
                continue
            if item.prompt in prompts:  # merging a file again: its questions are in the pack
                plan.skipped.append(Skipped(item.source, item.ref, "the pack has a question with this prompt already"))
                continue
            while (qid := f"{lesson_id}-q{counter + 1:03d}") in ids:
                counter += 1
            counter += 1
            ids.add(qid)
            target, name = (practice, PRACTICE_FILE) if item.kind == "card" else (quiz, QUIZ_FILE)
            plan.origin[name, len(target)] = item
            target.append(_question(item, qid, goal, source_id))
    return plan


def _source_id(plan: _Plan, source: str) -> str:
    """The notes.md source id of a file: the one it had (a merge of the same file), else the next one."""
    if (known := re.search(rf"^## (S[0-9]+) — {re.escape(source)}$", plan.notes, re.MULTILINE)) is not None:
        return known.group(1)
    source_id = f"S{len(re.findall(r'^## S[0-9]+ ', plan.notes, re.MULTILINE)) + 1}"
    plan.notes += f"\n## {source_id} — {source}\n"
    return source_id


def _stage(plan: _Plan, staged: Path) -> None:
    staged.mkdir(parents=True)
    (staged / LESSON_FILE).write_text(_dump(plan.lesson), encoding="utf-8")
    (staged / NOTES_FILE).write_text(plan.notes, encoding="utf-8")
    for name, key, entries in ((QUIZ_FILE, "questions", plan.quiz), (PRACTICE_FILE, "questions", plan.practice),
                               (GLOSSARY_FILE, "terms", plan.terms)):
        if entries:
            (staged / name).write_text(_dump({key: entries}), encoding="utf-8")


def _where(problem_file: str, field_name: str, plan: _Plan) -> str:
    name = Path(problem_file).name
    m = _FIELD.match(field_name)
    item = plan.origin.get((name, int(m.group(2)))) if m else None
    if item is None:
        return f"{name}: {field_name}"
    return f"{item.source}: {item.ref}: {name} {field_name}"


def write_pack(found: Found, folder: Path, root: Path, *, cards: str = "glossary", merge: bool = False,
               replace: bool = False) -> Written:
    """Write (or merge into) the pack at `folder`, checked as part of the library at `root`."""
    if folder.exists() and not (merge or replace):
        raise ImportRefused(f"{folder}: the pack exists; nothing was written. Add --merge to add to it, or --replace "
                            "to write it anew")
    if folder.exists() and not (folder / LESSON_FILE).is_file():
        raise ImportRefused(f"{folder}: exists but is not a lesson pack (no {LESSON_FILE}); choose another --pack")
    plan = _plan(found, folder, cards, merge and folder.exists())
    staged = folder.with_name(f".{folder.name}.importing")
    shutil.rmtree(staged, ignore_errors=True)
    try:
        _stage(plan, staged)
        written = _checked(plan, staged, folder, root)
        written.skipped = plan.skipped
        _swap(staged, folder)
    finally:
        shutil.rmtree(staged, ignore_errors=True)
    return written


def _checked(plan: _Plan, staged: Path, folder: Path, root: Path) -> Written:
    """Check the staged pack, and its ids against the rest of the library at `root` (ids are unique across
    it); write its quiz.md; name every problem by the source item it came from."""
    report = check_library(staged)
    written = Written(folder, {"questions": len(plan.quiz), "practice": len(plan.practice), "terms": len(plan.terms)})
    for problem in report.problems:
        written.problems.append(printable(f"{_where(problem.file, problem.field, plan)}: {problem.message}", 600))
    written.warnings = [str(w) for w in report.warnings if not w.file.endswith(QUIZ_MD)]
    written.problems += _clashes(plan, (folder, staged), root)
    lesson = next(iter(report.library.lessons.values()), None)
    if lesson is not None and lesson.questions:
        (staged / QUIZ_MD).write_text(render_quiz(lesson), encoding="utf-8")
    return written


def _clashes(plan: _Plan, mine: tuple[Path, ...], root: Path) -> list[str]:
    """Ids and terms of the new pack that another pack of the library (not `mine`) already uses."""
    if not root.is_dir():
        return []
    target = {p.resolve() for p in mine}
    used: dict[str, str] = {}
    others = [f for f in pack_folders(root) if f.resolve() not in target]
    for lesson in (les for f in others for les in check_library(f).library.lessons.values()):
        used[f"lesson:{lesson.id.lower()}"] = lesson.id
        used.update((f"question:{q.id.lower()}", lesson.id) for q in lesson.review_questions)
        used.update((f"term:{t.term.lower()}", lesson.id) for t in lesson.terms)
    out = []
    if f"lesson:{str(plan.lesson.get('id', '')).lower()}" in used:
        out.append(f"{LESSON_FILE}: id: duplicate lesson '{plan.lesson.get('id')}' (another pack has it)")
    for name, entries, kind, key in ((QUIZ_FILE, plan.quiz, "question", "id"),
                                     (PRACTICE_FILE, plan.practice, "question", "id"),
                                     (GLOSSARY_FILE, plan.terms, "term", "term")):
        for index, entry in enumerate(entries):
            if (other := used.get(f"{kind}:{str(entry.get(key, '')).lower()}")) is not None:
                out.append(f"{_where(name, f'{_entries_key(name)}[{index}].{key}', plan)}: duplicate {kind} "
                           f"'{str(entry.get(key))[:40]}' (lesson {other} has it)")
    return out


def _entries_key(name: str) -> str:
    return "terms" if name == GLOSSARY_FILE else "questions"


def _swap(staged: Path, folder: Path) -> None:
    """Put the staged pack in place of the folder by renaming: a reader never sees a half-written pack (only,
    between the two renames of a --merge or --replace, none)."""
    old = folder.with_name(f".{folder.name}.old")
    shutil.rmtree(old, ignore_errors=True)
    if folder.exists():
        os.rename(folder, old)
    os.rename(staged, folder)
    shutil.rmtree(old, ignore_errors=True)


def counted(found: Found) -> str:
    kinds: dict[str, int] = {}
    for item in found.items:
        kinds[item.kind] = kinds.get(item.kind, 0) + 1
    return ", ".join(f"{n} {k}" for k, n in kinds.items()) or "nothing"


def report_lines(found: Sequence[tuple[str, Found]]) -> list[str]:
    """One line per source file, then each item skipped, then the media not copied."""
    lines = []
    for source, each in found:
        lines.append(printable(f"{source}: {len(each.items)} imported ({counted(each)}), {len(each.skipped)} skipped"))
    for _, each in found:
        lines += [str(s) for s in each.skipped]
    media = list(dict.fromkeys(m for _, each in found for m in each.media))
    if media:
        lines.append(printable(f"media not copied ({len(media)}): {', '.join(media[:20])}"
                               + (" …" if len(media) > 20 else ""), 2000))
    return lines
