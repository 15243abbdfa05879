"""A lesson pack with the worst-case content the checker allows, built in a test's tmp_path: the
core test pack, plus multiple-choice questions first with the most choices (10), long labels and
prompts full of the characters Slack escapes (&, <, >), a glossary term whose name is longer than
Discord's 100-character autocomplete values, and a learner-chosen display name that looks like
a mention."""

from __future__ import annotations

import shutil
from pathlib import Path

import yaml
from support import CORE_PACK

from bot.content.loader import check_library
from bot.questions.mc import MAX_OPTIONS

NASTY = "<!everyone> & <@U0001> <#C0001|x> <!subteam^S1> "
LONG_TERM = "Zero Redundancy Optimizer stage three with parameter partitioning across data parallel ranks & <offload>"


def _text(words: int) -> str:
    return (NASTY * (words // 6 + 1))[: words * 8].strip()


def worst_case_pack(root: Path, mc_questions: int = 12) -> Path:
    """The pack's folder; it passes check_library (the checker's limits are the limits)."""
    pack = root / "worst-case-pack"
    shutil.copytree(CORE_PACK, pack)
    lesson = pack / "basics"
    quiz = yaml.safe_load((lesson / "quiz.yaml").read_text())
    extra = []
    for q in range(mc_questions):
        choices = [{"text": f"{n} " + _text(40), "why_wrong": _text(60)} for n in range(MAX_OPTIONS)]
        choices[q % MAX_OPTIONS] = {"text": f"right {q} " + _text(40), "correct": True}
        extra.append({"id": f"worst-q{q}", "type": "mc", "goal": "splitting", "prompt": _text(400),
                      "choices": choices, "explanation": _text(300), "sources": ["S1"]})
    quiz["questions"] = extra + quiz["questions"]
    (lesson / "quiz.yaml").write_text(yaml.safe_dump(quiz, allow_unicode=True, sort_keys=False))
    glossary = yaml.safe_load((lesson / "glossary.yaml").read_text())
    glossary["terms"].append({"term": LONG_TERM, "definition": _text(300), "sources": ["S1"]})
    (lesson / "glossary.yaml").write_text(yaml.safe_dump(glossary, allow_unicode=True, sort_keys=False))
    report = check_library(pack)
    assert not report.problems, "\n".join(map(str, report.problems))
    return pack
