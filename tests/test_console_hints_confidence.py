"""Hints and confidence on the console, as a user meets them: `studybot console` in a subprocess, with a
pack whose first question has two hints and a config whose console cohort asks how sure each answer was.
Each hint comes on its own line typed, above the question asked again; after the last, no Hint choice;
a hinted right answer earns no point, and Sure is kept with the answer."""

import sqlite3
from pathlib import Path

from support import HINTED, HINTS, hinted_pack
from test_console import Console, numbered


def lettered(text: str, choice: str) -> str:
    """The letter the console shows before a multiple-choice option."""
    return next(line.split(".", 1)[0].strip() for line in text.splitlines() if line.rstrip().endswith(choice))


def stored(tmp_path: Path, sql: str) -> list[tuple]:
    with sqlite3.connect(tmp_path / "db" / "studybot.db") as db:
        return db.execute(sql).fetchall()


async def test_hints_then_how_sure_on_the_console(tmp_path: Path) -> None:
    config = tmp_path / "studybot.yaml"
    config.write_text("cohorts:\n  local: {platform: console, confidence: true}\n")
    async with Console.running(tmp_path, hinted_pack(tmp_path), config=config) as console:
        await console.type("/quiz")
        asked = await console.expect("💡 Hint")  # the last choice of the question
        await console.type(numbered(asked, "💡 Hint"))
        first = await console.expect("💡 Another hint")
        assert f"💡 Hint 1 of 2: {HINTS['core-q1'][0]}" in first
        await console.type(numbered(first, "💡 Another hint"))
        second = await console.expect("I don't know")
        assert f"💡 Hint 2 of 2: {HINTS['core-q1'][1]}" in second
        assert "Another hint" not in second + await console.reply()  # after the last, no Hint choice

        await console.type(lettered(second, "The math inside each layer"))  # the right choice, from the hint
        feedback = await console.expect("Unsure")
        assert "How sure were you?" in feedback
        await console.type(numbered(feedback, "Sure"))
        assert "Noted: sure." in await console.expect("Noted: sure.")
        assert await console.quit() == 0
    assert stored(tmp_path, HINTED) == [(1, 0, 2)]
    assert stored(tmp_path, "SELECT sure FROM confidence") == [(1,)]
