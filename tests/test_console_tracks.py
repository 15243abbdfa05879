"""A track on the console, as a user meets it: `studybot console` in a subprocess with a cohort track.
The first /progress starts the learner's track; the steps due today arrive as direct messages from the
scheduler; /progress and /track then show the step to come, and a restart sends nothing again."""

from pathlib import Path

from support import CONTENT
from test_console import Console

TRACK = """cohorts:
  local:
    platform: console
    track:
      - {day: 0, time: "00:00", message: "Welcome to the course track."}
      - {day: 0, time: "00:00", quiz: meta-llm-scale}
      - {day: 3, time: "09:00", teachback: meta-tb1}
"""


async def arrived(console: Console, *texts: str) -> None:
    """Read until every one of `texts` was printed, in any order."""
    start = console.read_up_to
    for text in texts:
        if text not in console.seen[start:]:
            console.read_up_to = start
            await console.expect(text)
    console.read_up_to = max(console.seen.index(text, start) + len(text) for text in texts)


async def test_a_track_starts_on_first_use_and_its_due_steps_arrive(tmp_path: Path) -> None:
    config = tmp_path / "studybot.yaml"
    config.write_text(TRACK)
    async with Console.running(tmp_path, CONTENT, config=config) as console:
        await console.type("/progress")
        assert "Track, next: day 0, now: a message (/track)" in await console.expect("(/track)")
        await arrived(console, "Your track · day 0: Welcome to the course track.",
                      "Type /quiz meta-llm-scale to take it.")  # in either order
        await console.type("/progress")
        shown = await console.expect("(/track)")
        assert "Track, next: day 3, " in shown and ": a teach-back (meta-tb1, /teachback meta-tb1) (/track)" in shown
        assert await console.quit() == 0

    async with Console.running(tmp_path, CONTENT, config=config) as console:
        await console.type("/track")
        listing = await console.expect("/teachback meta-tb1)")
        assert listing.count("✓ day 0, sent") == 2 and "• day 3, " in listing
        assert await console.quit() == 0
        assert console.proc.stdout is not None
        console.seen += (await console.proc.stdout.read()).decode()
        assert "Your track · day 0" not in console.seen  # sent once, not again after the restart
