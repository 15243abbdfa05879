"""A partly right short answer on Slack: real slack-bolt against the stand-in, a real SQLite file. The
feedback names the missing point and earns nothing; "Add the missing point" opens a modal, once; the
self-check buttons and "Ask my instructor" stay under the verdict; the point then shows on the
leaderboard and in quiz_results.txt."""

from __future__ import annotations

import pytest
from test_slack_app import (  # noqa: F401  (the fixtures)
    adapter,
    bot,
    buttons,
    clock,
    command,
    post,
    quiz,
    settings,
)
from test_slack_disputes import labelled, press

from adapters.slack_app import SlackAdapter
from standins.slack_standin import SlackStandIn, block_actions, view_submission

PARTLY = "FSDP shards the parameters, which costs communication"  # one point, and half of the other
ADDED = "It pays for it with extra communication."


async def short_answer_modal(app: SlackAdapter, fake: SlackStandIn) -> dict:
    """/quiz, then the first choice and Next question until Next opens the short answer's modal; its view."""
    blocks = (await quiz(app, fake))["blocks"]
    for _ in range(10):
        feedback = await press(app, fake, buttons(blocks)[0], "U0001")
        nxt = labelled(feedback["blocks"], "Next question")
        await post(app, block_actions(nxt["action_id"], nxt["value"], trigger_id=fake.new_trigger_id(),
                                          response_url=fake.response_url("next")))
        if fake.calls_to("views.open"):
            return fake.calls_to("views.open")[-1].params["view"]
        blocks = fake.responses[-1][1]["blocks"]
    pytest.fail("no short-answer question came up")


async def submit(app: SlackAdapter, fake: SlackStandIn, view: dict, text: str) -> dict:
    """Submit a modal's answer; the private feedback posted for it."""
    before = len(fake.calls_to("chat.postEphemeral"))
    assert await post(app, view_submission("studybot_form", view["private_metadata"],
                                               {"answer": {"text": text}})) == (200, "")
    [feedback] = fake.calls_to("chat.postEphemeral")[before:]
    return feedback.params


async def open_modal(app: SlackAdapter, fake: SlackStandIn, button: dict) -> dict:
    """Press a button that opens a form: the modal opened with that press's trigger_id."""
    trigger = fake.new_trigger_id()
    await post(app, block_actions(button["action_id"], button["value"], trigger_id=trigger,
                                      response_url=fake.response_url(f"open-{trigger}")))
    opened = fake.calls_to("views.open")[-1]
    assert opened.params["trigger_id"] == trigger, "the form did not open as a modal"
    return opened.params["view"]


async def results_line(app: SlackAdapter, fake: SlackStandIn) -> list[str]:
    """The short answer's line of the quiz_results.txt /results uploads, split at its tabs."""
    assert "check your direct messages" in await command(app, fake, "/results")
    content = fake.uploads[fake.shared_files[-1]["id"]].decode()
    [line] = [x for x in content.splitlines() if x.startswith("core-q2\t")]
    return line.split("\t")


async def test_a_partly_right_answer_completed_once_through_a_modal(
    adapter: SlackAdapter, fake: SlackStandIn  # noqa: F811
) -> None:
    view = await short_answer_modal(adapter, fake)
    feedback = await submit(adapter, fake, view, PARTLY)
    assert feedback["text"].startswith("◑ Partly right, no point yet: 1 of 2 key points")
    assert 'Part of "It pays with extra communication" is there' in feedback["text"]
    labels = [b["text"]["text"] for b in buttons(feedback["blocks"])]
    for shown in ("Add the missing point", "I got it right", "Right, but it was hard", "I missed it",
                  "Ask my instructor", "Next question"):
        assert shown in labels
    assert (await results_line(adapter, fake))[2:] == ["wrong", "partly-right"]
    board = await command(adapter, fake, "/leaderboard", "all")

    add = labelled(feedback["blocks"], "Add the missing point")
    form = await open_modal(adapter, fake, add)
    assert PARTLY in str(form["blocks"])  # the answer so far is shown in the modal
    done = await submit(adapter, fake, form, ADDED)
    assert done["text"].startswith("✅ Graded correct: 2 of 2 key points")
    assert "With what you added, that is the point." in done["text"]
    assert (await results_line(adapter, fake))[2:] == ["correct"]
    after = await command(adapter, fake, "/leaderboard", "all")
    assert "No points for you in this period yet." in board and "You: rank 1 with 1 point." in after

    again = await open_modal(adapter, fake, add)  # once only: a second follow-up is refused
    refused = await submit(adapter, fake, again, "and more communication")
    assert refused["text"].startswith("You already added to this answer once")
    assert await command(adapter, fake, "/leaderboard", "all") == after
