"""A partly right short answer on the console, as a user meets it: `studybot console` in a subprocess.
The feedback names the missing point and earns nothing; "Add the missing point" asks for the follow-up
on the next line; the self-check choices and "Ask my instructor" stay under the verdict; the
point then shows on the leaderboard and in quiz_results.txt."""

import sqlite3
from pathlib import Path

from support import CORE_PACK
from test_console import Console, answer_until_short, numbered

from bot.content.loader import load_library

PARTLY = "FSDP shards the parameters, which costs communication"  # one point, and half of the other
ADDED = "It pays for it with extra communication."


def results_line(tmp_path: Path) -> list[str]:
    """The short answer's line of the learner's quiz_results.txt, split at its tabs."""
    written = tmp_path / "results" / "local" / "console-learner" / "quiz_results.txt"
    [line] = [x for x in written.read_text().splitlines() if x.startswith("core-q2\t")]
    return line.split("\t")


def recorded(tmp_path: Path) -> tuple[int, str]:
    """The short answer's points and verdict as the console's database holds them."""
    with sqlite3.connect(tmp_path / "db" / "studybot.db") as db:
        [row] = db.execute("SELECT points, verdict FROM answers WHERE question_id = 'core-q2'").fetchall()
    return row


def own_points(board: str) -> int:
    """The learner's points on /leaderboard (0 when they have none in the period)."""
    if "No points for you in this period yet." in board:
        return 0
    [mine] = [line for line in board.splitlines() if line.startswith("You: rank")]
    return int(mine.split(" with ", 1)[1].split()[0])


async def test_a_partly_right_answer_completed_once_on_the_next_line(tmp_path: Path) -> None:
    lesson = next(iter(load_library(CORE_PACK).lessons.values()))
    async with Console.running(tmp_path, CORE_PACK) as console:
        await console.type("/quiz")
        await answer_until_short(console, lesson)
        await console.type("/leaderboard")  # a command between: the question still takes the next line
        before = own_points(await console.reply())
        await console.type(PARTLY)
        feedback = await console.reply()
        assert "◑ Partly right, no point yet: 1 of 2 key points" in feedback
        assert 'Part of "It pays with extra communication" is there' in feedback
        for shown in ("Add the missing point", "I got it right", "Right, but it was hard", "I missed it",
                      "Ask my instructor", "Next question"):
            assert numbered(feedback, shown).isdigit()
        assert recorded(tmp_path) == (0, "partly")  # earns nothing yet

        await console.type(numbered(feedback, "Add the missing point"))
        assert "Add what is missing" in await console.reply()  # the form: the next line is the follow-up
        await console.type(ADDED)
        done = await console.reply()
        assert "✅ Graded correct: 2 of 2 key points" in done and "With what you added, that is the point." in done
        await console.type("/results")
        await console.reply()
        assert results_line(tmp_path)[2:] == ["correct"]
        await console.type("/leaderboard")
        after = own_points(await console.reply())
        assert after == before + 1, (before, after)

        assert recorded(tmp_path) == (1, "correct")
        assert "Add the missing point" not in done  # once only
        assert await console.quit() == 0
