"""Lesson-pack files that used to hang, exhaust memory, crash or read outside the content folder:
each is now one located problem that says what to do, and the rest of the library still loads."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from support import CORE_PACK, REPO

from adapters.cli import render
from bot.content.loader import check_library
from bot.core.errors import SetupError


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A content folder holding a copy of the core pack (its id is core-basics), run from the folder
    above it (so problems name content/…)."""
    shutil.copytree(CORE_PACK, tmp_path / "content")
    monkeypatch.chdir(tmp_path)
    return tmp_path / "content"


def pack(root: Path, name: str) -> Path:
    """A second, minimal pack beside the core one."""
    folder = root / name
    folder.mkdir()
    (folder / "lesson.yaml").write_text(f"id: {name}\ntitle: T\nsummary: S\ngoals: [{{id: g, text: G}}]\n")
    return folder


def problems(root: Path) -> list[str]:
    return [str(p) for p in check_library(root).problems]


def test_an_alias_bomb_in_a_text_field_is_one_problem_not_gigabytes(root: Path) -> None:
    folder = pack(root, "bomb")
    levels = ['a0: &a0 "lol lol lol lol lol lol lol lol"']
    levels += [f"a{n}: &a{n} [{', '.join([f'*a{n - 1}'] * 9)}]" for n in range(1, 10)]  # 9**9 strings once walked
    (folder / "glossary.yaml").write_text("\n".join(levels) + "\nterms:\n  - term: Bomb\n    definition: *a9\n")
    found = problems(root)
    assert found == ["content/bomb/glossary.yaml:1: file: uses a YAML anchor or alias (&name, *name), which studybot "
                     "does not read; write the value out in full"]


def test_a_latin_1_file_names_the_file_and_line(root: Path) -> None:
    folder = pack(root, "latin")
    (folder / "glossary.yaml").write_bytes("terms:\n  - term: Cafe\n    definition: \"Un café\"\n".encode("latin-1"))
    assert problems(root) == ["content/latin/glossary.yaml:3: file: is not UTF-8 text (byte 0xe9 on line 3); "
                              "save it as UTF-8"]


def test_a_file_over_the_size_bound_is_not_read(root: Path) -> None:
    folder = pack(root, "huge")
    (folder / "glossary.yaml").write_text("terms: []\n" + "#" * 2_100_000)
    assert problems(root) == ["content/huge/glossary.yaml:1: file: is larger than 2 MB; split it into smaller files"]


def test_links_out_of_the_content_folder_are_refused(root: Path, tmp_path: Path) -> None:
    outside = tmp_path / "private"
    outside.mkdir()
    (outside / "glossary.yaml").write_text("terms:\n  - term: Secret\n    definition: \"Read from outside.\"\n")
    shutil.copytree(root / "basics", outside / "pack")
    (outside / "pack" / "lesson.yaml").write_text("id: elsewhere\ntitle: T\nsummary: S\ngoals: [{id: g, text: G}]\n")
    folder = pack(root, "linked")
    (folder / "glossary.yaml").symlink_to(outside / "glossary.yaml")
    (root / "borrowed").symlink_to(outside / "pack", target_is_directory=True)
    report = check_library(root)
    found = [str(p) for p in report.problems]
    assert found == [
        f"content/borrowed:1: folder: is a link to {outside / 'pack'}, outside {root}; copy the pack into {root} "
        "instead",
        f"content/linked/glossary.yaml:1: file: is a link to {outside / 'glossary.yaml'}, outside {root}; copy the "
        f"file into {root} instead",
    ]
    assert "Secret" not in {t.term for t in report.library.terms}


def test_a_link_inside_the_content_folder_is_read(root: Path) -> None:
    folder = pack(root, "shared")
    (root / "common-terms.txt").write_text("terms:\n  - term: Shared term\n    definition: \"Kept once.\"\n")
    (folder / "glossary.yaml").symlink_to(root / "common-terms.txt")
    (folder / "notes.md").symlink_to(root / "basics" / "notes.md")
    report = check_library(root)
    assert report.problems == [] and "Shared term" in {t.term for t in report.library.terms}


def test_render_does_not_write_through_a_linked_quiz_md(root: Path, tmp_path: Path) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me\n")
    quiz_md = root / "basics" / "quiz.md"
    quiz_md.unlink()
    quiz_md.symlink_to(victim)
    with pytest.raises(SetupError, match="quiz.md: is a link or not a regular file; studybot render writes only"):
        render(root)
    assert victim.read_text() == "keep me\n"


def test_render_replaces_quiz_md_whole(root: Path) -> None:
    quiz_md = root / "basics" / "quiz.md"
    quiz_md.write_text("stale\n")
    assert render(root) == 0
    assert quiz_md.read_text().startswith("<!-- Generated") and check_library(root).warnings == []
    assert sorted(p.name for p in quiz_md.parent.iterdir() if p.name.startswith(".")) == []


def test_a_fifo_and_a_device_as_pack_files_neither_hang_nor_crash(root: Path) -> None:
    """`studybot validate` in a subprocess, so that a read that blocks fails the test by its timeout."""
    os.mkfifo(pack(root, "fifo") / "glossary.yaml")
    (pack(root, "zero") / "glossary.yaml").symlink_to("/dev/zero")
    os.mkfifo(root / "basics" / "notes.md.tmp")  # not a pack file: never opened
    (root / "basics" / "quiz.md").unlink()
    os.mkfifo(root / "basics" / "quiz.md")  # read to see whether it is stale
    done = subprocess.run([sys.executable, "-m", "adapters.cli", "validate", str(root)], cwd=root.parent,
                          capture_output=True, text=True, timeout=30, env={**os.environ, "PYTHONPATH": str(REPO)})
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr
    lines = done.stdout.splitlines()
    assert "content/fifo/glossary.yaml:1: file: is not a regular file (a device, pipe or socket); make it a plain " \
           "text file" in lines
    assert f"content/zero/glossary.yaml:1: file: is a link to /dev/zero, outside {root}; copy the file into {root} " \
           "instead" in lines
    assert any(line.startswith("content/basics/quiz.md:1: file: warning:") for line in lines)
