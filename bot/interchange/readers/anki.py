"""Anki packages (.apkg, .colpkg): a zip holding a SQLite collection, `collection.anki2` (schema 11),
`collection.anki21`, or `collection.anki21b` (zstd-compressed, schema 18; read with `zstandard`).
The newest of them is read: an Anki 2.1 export keeps only a stub note in `collection.anki2`.

Notes of studybot's own note types (`exporters/anki.py`) come back as the questions they were; a
note whose card asks to type the answer becomes a short answer; a cloze note is skipped; any other
note is a flashcard of its first two fields."""

from __future__ import annotations

import json
import sqlite3
import tempfile
from collections.abc import Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass
from pathlib import Path

import zstandard

from bot.interchange.markup import to_markdown
from bot.interchange.model import Choice, Found, ImportRefused, Item
from bot.interchange.safety import MAX_UNZIPPED, Package, open_package

COLLECTIONS = ("collection.anki21b", "collection.anki21", "collection.anki2")
MODEL_MC, MODEL_SHORT, MODEL_ORDER, MODEL_TERM = ("studybot multiple choice", "studybot short answer",
                                                  "studybot put in order", "studybot glossary term")
LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"


@dataclass(frozen=True)
class NoteType:
    name: str
    fields: tuple[str, ...]
    cloze: bool
    typed: str | None  # the field a card asks to type, if any


@dataclass(frozen=True)
class Collection:
    """What a collection holds: its note types by id, its notes (id, type id, fields), and its card count."""

    types: dict[int, NoteType]
    notes: list[tuple[int, int, list[str]]]
    cards: int


def _typed_field(templates: list[str]) -> str | None:
    for template in templates:
        start = template.find("{{type:")
        if start >= 0:
            return template[start + 7: template.find("}}", start)].split(":")[-1].strip()
    return None


def _legacy_types(db: sqlite3.Connection) -> dict[int, NoteType]:
    (models,) = db.execute("SELECT models FROM col").fetchone()
    out = {}
    for key, model in (json.loads(models or "{}") or {}).items():
        templates = [t.get("qfmt", "") + t.get("afmt", "") for t in model.get("tmpls", [])]
        out[int(key)] = NoteType(str(model.get("name", "")), tuple(f.get("name", "") for f in model.get("flds", [])),
                                 model.get("type") == 1 or any("{{cloze:" in t for t in templates),
                                 _typed_field(templates))
    return out


def _new_types(db: sqlite3.Connection) -> dict[int, NoteType]:
    """Schema 18 keeps note types in tables, each template's text inside a protobuf blob: read as bytes."""
    out = {}
    for ntid, name in db.execute("SELECT id, name FROM notetypes"):
        fields = tuple(n for (n,) in db.execute("SELECT name FROM fields WHERE ntid = ? ORDER BY ord", (ntid,)))
        templates = [bytes(c).decode("utf-8", "replace") for (c,) in
                     db.execute("SELECT config FROM templates WHERE ntid = ? ORDER BY ord", (ntid,))]
        out[int(ntid)] = NoteType(name, fields, any("{{cloze:" in t for t in templates), _typed_field(templates))
    return out


def read_collection(path: Path) -> Collection:
    """A SQLite collection file's note types, notes and number of cards."""
    try:
        with closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as db:
            if db.execute("PRAGMA quick_check").fetchone()[0] != "ok":
                raise ImportRefused(f"{path.name}: the collection's database is damaged")
            tables = {n for (n,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
            types = _new_types(db) if "notetypes" in tables else _legacy_types(db)
            notes = [(int(i), int(m), str(f).split("\x1f")) for i, m, f in
                     db.execute("SELECT id, mid, flds FROM notes ORDER BY id")]
            (cards,) = db.execute("SELECT COUNT(*) FROM cards").fetchone()
    except sqlite3.DatabaseError as exc:
        raise ImportRefused(f"{path.name}: not an Anki collection ({exc})") from exc
    return Collection(types, notes, int(cards))


@contextmanager
def unpacked(package: Package) -> Iterator[tuple[Path, str]]:
    """The package's newest collection as a SQLite file in a temporary folder, and its member name."""
    names = set(package.names())
    member = next((n for n in COLLECTIONS if n in names), None)
    if member is None:
        raise ImportRefused(f"{package.name}: not an Anki package (no {', '.join(COLLECTIONS)} inside)")
    data = package.read(member)
    if member.endswith("b"):
        try:
            with zstandard.ZstdDecompressor().stream_reader(data) as stream:
                data = stream.read(MAX_UNZIPPED + 1)
        except zstandard.ZstdError as exc:
            raise ImportRefused(f"{package.name}: {member} is not zstd-compressed ({exc})") from exc
        if len(data) > MAX_UNZIPPED:
            raise ImportRefused(f"{package.name}: refused: {member} unpacks to more than {MAX_UNZIPPED:,} bytes")
    with tempfile.TemporaryDirectory(prefix="studybot-anki-") as folder:
        target = Path(folder) / "collection.sqlite"
        target.write_bytes(data)
        yield target, member


def _media_names(package: Package) -> list[str]:
    if "media" not in package.names():
        return []
    try:
        mapping = json.loads(package.read("media").decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return []  # the newer packages keep this map as protobuf: the notes still name their media
    return [str(v) for v in mapping.values()] if isinstance(mapping, dict) else []


def read(path: Path, source: str) -> Found:
    found = Found()
    with open_package(path) as package, unpacked(package) as (file, _member):
        collection = read_collection(file)
        packed_media = _media_names(package)
    for note_id, type_id, fields in collection.notes:
        note_type = collection.types.get(type_id)
        _note(note_id, note_type, fields, source, found)
    found.media += [m for m in packed_media if m not in found.media and not m.startswith("_")]
    return found


def _md(text: str, found: Found) -> str:
    out, media = to_markdown(text)
    found.media += [m for m in media if m not in found.media]
    return out


def _lines(text: str, found: Found) -> list[str]:
    return [line for line in _md(text, found).split("\n") if line.strip()]


def _labelled(text: str, found: Found, mark: str) -> dict[str, str]:
    """Entries written one per line as `A. text` (mark ".") or `B: text` (mark ":"), by letter; a line
    without a label continues the entry before it (an entry of several lines or paragraphs)."""
    entries: dict[str, list[str]] = {}
    last = None
    for line in _md(text, found).split("\n"):
        if len(line) > 2 and line[0] in LETTERS and line[1:3] == f"{mark} ":
            last = line[0]
            entries[last] = [line[3:]]
        elif last is not None:
            entries[last].append(line)
    return {k: "\n".join(v).strip() for k, v in entries.items()}


def _note(note_id: int, note_type: NoteType | None, fields: list[str], source: str, found: Found) -> None:
    ref = f"note {note_id}"
    name = note_type.name if note_type else ""
    if note_type is not None and note_type.cloze:
        found.skip(source, ref, "a cloze note: studybot asks one question at a time")
    elif name in (MODEL_MC, MODEL_SHORT, MODEL_ORDER, MODEL_TERM):
        _own(name, fields, source, ref, found)
    elif note_type is not None and note_type.typed and note_type.typed in note_type.fields:
        prompt = _md(fields[0], found)
        answer = _md(fields[note_type.fields.index(note_type.typed)], found)
        if not prompt or not answer:
            found.skip(source, ref, "its question or answer is empty (or only an image or sound)")
        else:
            found.items.append(Item("short", source, ref, prompt, answers=(answer,)))
    elif len(fields) < 2:
        found.skip(source, ref, "a note of one field: a card needs a front and a back")
    else:
        front, back = _md(fields[0], found), _md(fields[1], found)
        if not front or not back:
            found.skip(source, ref, f"its {'front' if not front else 'back'} is empty (or only an image or sound)")
        else:
            found.items.append(Item("card", source, ref, front, answers=(back,)))


def _own(name: str, fields: list[str], source: str, ref: str, found: Found) -> None:
    """A note studybot exported: its fields are the question's, one item a line."""
    fields = fields + [""] * (6 - len(fields))
    if name == MODEL_TERM:
        found.items.append(Item("card", source, ref, _md(fields[0], found), answers=(_md(fields[1], found),)))
        return
    prompt = _md(fields[0], found)
    if name == MODEL_MC:
        choices, key, why = _labelled(fields[1], found, "."), _md(fields[2], found).strip(), \
            _labelled(fields[3], found, ":")
        found.items.append(Item("mc", source, ref, prompt, tuple(
            Choice(text, letter == key, why.get(letter, "")) for letter, text in choices.items()),
            explanation=_md(fields[4], found)))
    elif name == MODEL_SHORT:
        accepted = tuple(_lines(fields[2], found))
        found.items.append(Item("short", source, ref, prompt, answers=(_md(fields[1], found), *accepted),
                                explanation=_md(fields[3], found)))
    else:
        found.items.append(Item("order", source, ref, prompt, answers=tuple(_lines(fields[1], found)),
                                explanation=_md(fields[2], found)))
