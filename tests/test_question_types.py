"""A question type is one module and one registry line: a throwaway fourth type, written in a copy
of bot/, is read, checked, asked, graded, revealed and rendered with nothing else changed."""

from __future__ import annotations

import difflib
import shutil
import subprocess
import sys
from pathlib import Path

from support import REPO

TRUE_FALSE = '''"""True or false (`type: truefalse`): a statement and two buttons."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from bot.core.yamlcheck import Checker, FieldPath
from bot.core.messages import Audience, Choice, Place, Reply
from bot.questions.base import Arrangement, Question, Verdict

WORDS = {"t": "True", "f": "False"}


@dataclass(frozen=True, kw_only=True)
class TrueFalse(Question):
    kind: ClassVar[str] = "truefalse"
    label: ClassVar[str] = "true or false"
    keys: ClassVar[frozenset[str]] = frozenset({"answer"})

    answer: bool

    @classmethod
    def read(cls, c: Checker, data: Mapping[str, Any], path: FieldPath, common: dict[str, Any]) -> TrueFalse:
        return cls(answer=c.flag(data, "answer", path), **common)

    def ask(self, prompt_id: str, header: str, audience: Audience, arrangement: Arrangement, *,
            extra: tuple[Choice, ...] = (), tag: str | None = None, place: Place | None = None) -> Reply:
        buttons = tuple(Choice(word, f"{prompt_id}.{key}") for key, word in WORDS.items())
        return Reply(f"{header}\\n{self.prompt}", audience, choices=buttons + extra, tag=tag, place=place)

    def grade_choice(self, suffix: str, arrangement: Arrangement) -> Verdict | None:
        if suffix not in WORDS:
            return None
        right = (suffix == "t") == self.answer
        return Verdict(right, ("Right." if right else f"No: it is {str(self.answer).lower()}.",))

    def answer_lines(self, arrangement: Arrangement) -> list[str]:
        return [f"It is {str(self.answer).lower()}."]

    def markdown_question(self) -> list[str]:
        return ["True or false?"]

    def markdown_key(self) -> list[str]:
        return [f"**Answer: {str(self.answer).lower()}.**"]


TYPE = TrueFalse
'''

PACK = {
    "lesson.yaml": 'id: tf\ntitle: "T F"\nsummary: "s"\ngoals:\n  - id: g\n    text: "a goal"\n',
    "quiz.yaml": 'questions:\n  - id: tf-q1\n    type: truefalse\n    goal: g\n    prompt: "FSDP shards."\n'
                 '    answer: true\n    explanation: "It does."\n    sources: []\n',
}

SCRIPT = """
import asyncio, sys
from pathlib import Path
from bot.runtime.app import StudyBot
from bot.core.clock import FixedClock
from bot.core.config import Settings
from bot.core.messages import Actor, ChoiceMade, Command, MessageRef, Place, TimerFired, TimerKey
from bot.content.render import render_quiz

async def main():
    tmp = Path(sys.argv[1])
    bot = await StudyBot.start(Settings(db_path=tmp / "db.sqlite", content_dir=tmp / "pack"), FixedClock())
    try:
        await use(bot)
    finally:
        await bot.close()

async def use(bot):
    who, place = Actor("console", "local", "me"), Place("console", "local", "console")
    [asked] = await bot.handle(Command("quiz", "", who, place))
    print("ASKED", [c.label for c in asked.choices])
    [graded] = await bot.handle(ChoiceMade(asked.choices[0].token, who, place))
    print("GRADED", graded.text.splitlines()[0])
    print("MD", "true or false" in render_quiz(bot.library.lessons["tf"]))
    [started, posted] = await bot.handle(Command("quiz", "round", who, place))
    await bot.message_posted(posted.tag, MessageRef("console", "console", "1"))
    await bot.handle(ChoiceMade(posted.choices[-1].token, who, place))  # Next: the reveal is due now
    due = TimerFired(TimerKey.parse("round:1:0"), bot.ctx.clock.now())
    print("REVEAL", [r.text.splitlines()[3] for r in await bot.fire(due) if "answered," in r.text])
    print("STORED", await bot.store.count("answers"))

asyncio.run(main())
"""


def test_a_fourth_type_needs_its_module_and_one_registry_line(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    shutil.copytree(REPO / "bot", tree / "bot", ignore=shutil.ignore_patterns("__pycache__"))
    registry = tree / "bot" / "questions" / "registry.py"
    lines = registry.read_text().splitlines(keepends=True)
    last = max(i for i, line in enumerate(lines) if line.strip().startswith('"bot.questions.'))
    lines.insert(last + 1, '    "bot.questions.truefalse",\n')
    registry.write_text("".join(lines))
    (tree / "bot" / "questions" / "truefalse.py").write_text(TRUE_FALSE)

    changed = sorted(str(p.relative_to(tree)) for p in (tree / "bot").rglob("*.py")
                     if not (REPO / p.relative_to(tree)).exists()
                     or (REPO / p.relative_to(tree)).read_text() != p.read_text())
    assert changed == ["bot/questions/registry.py", "bot/questions/truefalse.py"]
    diff = [d for d in difflib.unified_diff((REPO / "bot/questions/registry.py").read_text().splitlines(),
                                            registry.read_text().splitlines(), lineterm="", n=0)
            if d[:1] in "+-" and not d.startswith(("+++", "---"))]
    assert diff == ['+    "bot.questions.truefalse",']

    (tmp_path / "pack").mkdir()
    for name, text in PACK.items():
        (tmp_path / "pack" / name).write_text(text)
    env = {"PYTHONPATH": str(tree), "PATH": "/usr/bin:/bin"}
    done = subprocess.run([sys.executable, "-c", SCRIPT, str(tmp_path)], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["ASKED ['True', 'False']", "GRADED Right.", "MD True",
                                        "REVEAL ['It is true.']", "STORED 1"]

    unchanged = subprocess.run([sys.executable, "-c", SCRIPT, str(tmp_path)], cwd=tmp_path,
                               env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"}, capture_output=True, text=True,
                               timeout=60)
    assert "must be one of mc, short, order, not 'truefalse'" in unchanged.stderr  # the real tree has no such type
