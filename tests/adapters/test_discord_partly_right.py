"""A partly right short answer on Discord: the real discord.py against the stand-in, a real SQLite file.
The feedback names the missing point and earns nothing; "Add the missing point" opens a modal, once; the
self-check buttons and "Ask my instructor" stay under the verdict; the point then shows on the
leaderboard and in quiz_results.txt."""

from __future__ import annotations

from typing import Any

from test_discord_app import (  # noqa: F401  (the fixtures)
    button,
    buttons,
    discord_only,
    discord_settings,
    fixed_clock,
    running,
    short_answer_form,
)

from standins.discord_standin import DiscordStandIn

PARTLY = "FSDP shards the parameters, which costs communication"  # one point, and half of the other
ADDED = "It pays for it with extra communication."


async def results_line(fake: DiscordStandIn) -> list[str]:
    """The short answer's line of the quiz_results.txt /results sends by direct message, split at its tabs."""
    before = len(fake.calls_matching("POST", r"/channels/\d+/messages"))
    await fake.interact(fake.slash("results"))
    upload = await fake.wait_for_call("POST", r"/channels/\d+/messages", count=before + 1)
    [line] = [x for x in upload.files["quiz_results.txt"].decode().splitlines() if x.startswith("core-q2\t")]
    return line.split("\t")


async def leaderboard(fake: DiscordStandIn) -> str:
    board = await fake.interact(fake.slash("leaderboard", {"period": "all"}))
    content: str = board.data["content"]
    return content


async def submitted(fake: DiscordStandIn, form: Any, text: str) -> Any:
    graded = await fake.interact(fake.modal_submit(form.data["custom_id"], {"answer": text}))
    assert graded.data["flags"] == 64
    return graded


async def test_a_partly_right_answer_completed_once_through_a_modal(running, discord_fake: DiscordStandIn) -> None:  # noqa: F811
    fake = discord_fake
    graded = await submitted(fake, await short_answer_form(fake), PARTLY)
    content = graded.data["content"]
    assert content.startswith("◑ Partly right, no point yet: 1 of 2 key points")
    assert 'Part of "It pays with extra communication" is there' in content
    labels = [b["label"] for b in buttons(graded.data)]
    for shown in ("Add the missing point", "I got it right", "Right, but it was hard", "I missed it",
                  "Ask my instructor", "Next question"):
        assert shown in labels
    assert (await results_line(fake))[2:] == ["wrong", "partly-right"]
    board = await leaderboard(fake)

    add = button(graded.message, "Add the missing point")
    form = await fake.interact(fake.component(add, graded.message))
    assert form.type == 9, "the form did not open as a modal"
    assert PARTLY in str(form.data["components"])  # the answer so far is shown in the modal
    done = await submitted(fake, form, ADDED)
    assert done.data["content"].startswith("✅ Graded correct: 2 of 2 key points")
    assert "With what you added, that is the point." in done.data["content"]
    assert (await results_line(fake))[2:] == ["correct"]
    after = await leaderboard(fake)
    assert board != after and " · 1" in after, after

    again = await fake.interact(fake.component(add, graded.message))  # once only: a second follow-up is refused
    assert again.type == 9
    refused = await submitted(fake, again, "and more communication")
    assert refused.data["content"].startswith("You already added to this answer once")
    assert await leaderboard(fake) == after
