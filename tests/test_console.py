"""The console chat as a user meets it: `studybot console` in a subprocess, typed lines in."""

import os
import subprocess
import sys
from pathlib import Path

from support import CONTENT, REPO

from bot.content.loader import load_library


def run_console(tmp_path: Path, lines: list[str]) -> str:
    env = {**os.environ, "STUDYBOT_DB": str(tmp_path / "db" / "studybot.db"),
           "STUDYBOT_RESULTS_DIR": str(tmp_path / "results"), "STUDYBOT_CONTENT": str(CONTENT)}
    done = subprocess.run([sys.executable, "-m", "adapters.cli", "console"], input="\n".join(lines) + "\n",
                          capture_output=True, text=True, cwd=REPO, env=env, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_glossary_lookups(tmp_path: Path) -> None:
    out = run_console(tmp_path, ["/glossary fsdp", "/glossary FDSP", "/glossary", "/quit"])
    assert "FSDP (Fully Sharded Data Parallel" in out and "Did you mean: FSDP" in out and "Glossary terms (" in out


def test_a_whole_quiz_then_teachback_then_results(tmp_path: Path) -> None:
    lesson = next(iter(load_library(CONTENT).lessons.values()))
    lines = ["/quiz"]
    for q in lesson.questions:
        # numbered choices answer multiple choice; a short answer is the next line
        lines.append(str(q.correct_index + 1) if q.kind == "mc" else q.model_answer)
        if q.kind == "short":
            lines.append("1")  # self-grade: I got it right
            lines.append("1")  # next question
        else:
            lines.append("1")  # next question
    prompt = lesson.prompts[0]
    lines += ["/teachback", ". ".join(k.accept[0] for k in prompt.key_points), "/results", "/quit"]
    out = run_console(tmp_path, lines)
    total = len(lesson.questions)
    assert f"Score: {total}/{total}" in out
    assert f"You covered {len(prompt.key_points)} of {len(prompt.key_points)} key points" in out
    assert f"score: {total}/{total} (100%)" in out
    written = tmp_path / "results" / "local" / "console-learner" / "quiz_results.txt"
    assert f"score: {total}/{total} (100%)" in written.read_text()
