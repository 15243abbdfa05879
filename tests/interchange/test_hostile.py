"""A malformed or hostile file is refused in one line naming the file and what is wrong, and nothing
is written: no pack, no half-written folder beside it."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from adapters.cli import main
from bot.interchange import readers
from bot.interchange.model import ImportRefused

LAUGHS = b"""<?xml version="1.0"?>
<!DOCTYPE quiz [<!ENTITY a "lol"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;"><!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;">]>
<quiz><question type="shortanswer"><questiontext><text>&c;</text></questiontext></question></quiz>"""


def _zip(path: Path, members: dict[str, bytes]) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return path


def hostile(tmp_path: Path) -> dict[str, tuple[Path, str]]:
    """Each hostile file, with what its refusal must say."""
    wide = tmp_path / "wide.gift"
    wide.write_bytes(b"::Q:: " + b"x" * 10_000_000 + b" {=a ~b}\n")
    latin = tmp_path / "latin.gift"
    latin.write_bytes("::Q:: Café au lait? {=oui ~non}\n".encode("latin-1"))
    laughs = tmp_path / "laughs.xml"
    laughs.write_bytes(LAUGHS)
    return {
        "bomb": (_zip(tmp_path / "bomb.apkg", {"collection.anki2": b"\0" * 30_000_000}), "zip bomb"),
        "slip": (_zip(tmp_path / "slip.zip", {"../../evil.xml": b"<quiz/>"}), "outside the package"),
        "absolute": (_zip(tmp_path / "absolute.zip", {"/etc/evil.xml": b"<quiz/>"}), "outside the package"),
        "laughs": (laughs, "entities"),
        "wide": (wide, "line 1: 10,000,014 characters long"),
        "latin": (latin, "not UTF-8"),
        "notzip": (_write(tmp_path / "fake.apkg", b"not a zip at all"), "not a zip package"),
    }


def _write(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


@pytest.mark.parametrize("case", ["bomb", "slip", "absolute", "laughs", "wide", "latin", "notzip"])
def test_a_hostile_file_is_refused_naming_the_file(tmp_path: Path, case: str) -> None:
    path, says = hostile(tmp_path)[case]
    with pytest.raises(ImportRefused) as refused:
        readers.read(path)
    assert str(path) in str(refused.value) and says in str(refused.value)
    assert "\n" not in str(refused.value)


@pytest.mark.parametrize("case", ["bomb", "slip", "laughs", "wide", "latin"])
def test_the_cli_writes_nothing_for_a_hostile_file(tmp_path: Path, case: str, capsys: pytest.CaptureFixture[str],
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    path, says = hostile(tmp_path)[case]
    good = _write(tmp_path / "good.gift", b"::G:: Which colour is the sky on a clear day? {=blue ~green#Grass is.}\n")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as ended:
        main(["import", str(good), str(path), "--pack", "content/course"])
    err = capsys.readouterr().err
    assert ended.value.code == 2
    assert err.count("\n") == 1 and err.startswith("studybot: ") and says in err
    assert not (tmp_path / "content").exists()


def test_an_existing_pack_is_left_alone_without_merge_or_replace(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    first = _write(tmp_path / "a.gift", b"::A:: Which colour is the sky on a clear day? {=blue ~green#Grass is.}\n")
    second = _write(tmp_path / "b.gift", b"::B:: Which planet is the largest? {=Jupiter ~Mars#It is small.}\n")
    with pytest.raises(SystemExit) as ended:
        main(["import", str(first), "--pack", "content/course"])
    assert ended.value.code == 0
    before = {p.name: p.read_bytes() for p in (tmp_path / "content/course").iterdir()}
    with pytest.raises(SystemExit) as ended:
        main(["import", str(second), "--pack", "content/course"])
    assert ended.value.code == 2 and "--merge" in capsys.readouterr().err
    assert {p.name: p.read_bytes() for p in (tmp_path / "content/course").iterdir()} == before
    with pytest.raises(SystemExit) as ended:
        main(["import", str(second), "--pack", "content/course", "--merge"])
    assert ended.value.code == 0
    quiz = (tmp_path / "content/course/quiz.yaml").read_text()
    assert "Which colour is the sky" in quiz and "Which planet is the largest" in quiz
    with pytest.raises(SystemExit) as ended:
        main(["import", str(second), "--pack", "content/course", "--replace"])
    quiz = (tmp_path / "content/course/quiz.yaml").read_text()
    assert "Which colour is the sky" not in quiz and "Which planet is the largest" in quiz
    assert sorted(p.name for p in (tmp_path / "content").iterdir()) == ["course"]  # nothing staged left behind
    with pytest.raises(SystemExit) as ended:
        main(["validate", "content"])
    assert ended.value.code == 0


def test_terminal_escapes_in_a_file_never_reach_the_terminal(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    bank = _write(tmp_path / "esc.gift", b"::\x1b[2J\x1b]0;owned\x07Q::Essay? {}\n\n"
                                         b"::Sky:: Which colour is the sky on a clear day? {=blue ~green#Grass.}\n")
    with pytest.raises(SystemExit):
        main(["import", str(bank), "--pack", "content/course"])
    out = capsys.readouterr().out
    assert "skipped: an essay" in out and "\x1b" not in out and "\x07" not in out


def test_a_pack_that_cannot_be_read_is_not_merged_into(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    bank = _write(tmp_path / "a.gift", b"::A:: Which colour is the sky on a clear day? {=blue ~green#Grass is.}\n")
    with pytest.raises(SystemExit):
        main(["import", str(bank), "--pack", "content/course"])
    (tmp_path / "content/course/quiz.yaml").write_text("questions: {not: a list}\n")
    before = {p.name: p.read_bytes() for p in (tmp_path / "content/course").iterdir()}
    with pytest.raises(SystemExit) as ended:
        main(["import", str(bank), "--pack", "content/course", "--merge"])
    err = capsys.readouterr().err
    assert ended.value.code == 2 and err.count("\n") == 1 and "has no list 'questions:' to merge into" in err
    assert {p.name: p.read_bytes() for p in (tmp_path / "content/course").iterdir()} == before


def test_every_item_not_written_is_listed(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """Two cards of one term, and a merge of the same file again: each item left out is said, with why."""
    monkeypatch.chdir(tmp_path)
    cards = _write(tmp_path / "cards.tsv", b"osmosis\twater crossing a membrane\nOsmosis\tanother definition\n")
    bank = _write(tmp_path / "a.gift", b"::A:: Which colour is the sky on a clear day? {=blue ~green#Grass is.}\n")
    with pytest.raises(SystemExit):
        main(["import", str(cards), str(bank), "--pack", "content/course"])
    out = capsys.readouterr().out
    assert "cards.tsv: line 2: skipped: the term 'Osmosis' is in the glossary already" in out
    assert "practice.yaml" not in {p.name for p in (tmp_path / "content/course").iterdir()}
    with pytest.raises(SystemExit):
        main(["import", str(bank), "--pack", "content/course", "--merge"])
    out = capsys.readouterr().out
    assert "a.gift: 'A' (line 1): skipped: the pack has a question with this prompt already" in out
    assert (tmp_path / "content/course/notes.md").read_text().count("a.gift") == 1
