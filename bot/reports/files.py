"""Where results files live and how they are written: one folder per learner and one per cohort
under STUDYBOT_RESULTS_DIR, every id made safe as a path component, each file written whole or not
at all."""

from __future__ import annotations

import errno
import hashlib
import os
import re
import shutil
import tempfile
from pathlib import Path

from bot.core.errors import SetupError, StudyError
from bot.core.messages import Actor, Cohort

FILENAME = "quiz_results.txt"
COHORT_FOLDER = "@cohort"  # after the platform; '@' is escaped in every id, so no learner's folder is named so
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")
LONGEST = 64  # characters of a path component
FULL = (errno.ENOSPC, errno.EDQUOT)


def _safe(part: str) -> str:
    """A path component that names one id only: characters outside [A-Za-z0-9_-] are written as
    %XX of their UTF-8 bytes (so "a.b" and "a_b" stay apart), and a long id keeps a hash of itself."""
    safe = _UNSAFE.sub(lambda m: "".join(f"%{b:02X}" for b in m.group().encode()), part) or "%"
    if len(safe) > LONGEST:
        safe = safe[: LONGEST - 13] + "~" + hashlib.sha256(part.encode()).hexdigest()[:12]
    return safe


def learner_dir(root: Path, actor: Actor) -> Path:
    return root / _safe(actor.cohort) / f"{_safe(actor.platform)}-{_safe(actor.user_id)}"


def cohort_dir(root: Path, cohort: Cohort) -> Path:
    return root / _safe(cohort.id) / f"{_safe(cohort.platform)}{COHORT_FOLDER}"


def write_atomically(folder: Path, content: bytes, filename: str = FILENAME) -> Path:
    """`content` as `folder/filename`, whole or not at all (a temporary file, then a rename)."""
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / filename
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{filename}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(content)
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return target


def write_file(folder: Path, content: bytes, filename: str = FILENAME) -> Path:
    """write_atomically, with a full disk told to the learner rather than reported as a bug."""
    what = "your results file" if filename == FILENAME else filename
    try:
        return write_atomically(folder, content, filename)
    except OSError as exc:
        if exc.errno in FULL:
            raise StudyError(f"The disk is full, so {what} could not be written. Try again later; "
                             "tell your instructor if it keeps happening.") from exc
        raise


def check_folder(root: Path) -> Path:
    """The results folder, made if missing and proven writable (a file written and removed);
    SetupError, one line, when it cannot be."""
    try:
        root.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=root, prefix=".studybot-check."):
            pass
    except OSError as exc:
        raise SetupError(f"STUDYBOT_RESULTS_DIR: cannot write results files in {root} ({exc.strerror}); make it "
                         "writable by this user, or set STUDYBOT_RESULTS_DIR to a folder that is") from exc
    return root


def delete_files(root: Path, actor: Actor) -> None:
    """A learner's results files, and the cohort's export, which lists them too."""
    shutil.rmtree(learner_dir(root, actor), ignore_errors=True)
    shutil.rmtree(cohort_dir(root, actor.in_cohort), ignore_errors=True)
