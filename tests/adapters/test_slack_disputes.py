"""Disputes on Slack: real slack-bolt against the stand-in, a real SQLite file. A learner's teach-back
verdict goes to their instructor ("Ask my instructor"); a learner and another workspace's instructor
are refused `/audit disputes` and its buttons; the bot restarts with the dispute open, and the
button listed before the restart settles it; the learner is told by direct message."""

from __future__ import annotations

import json
from pathlib import Path

from support import CORE_PACK
from test_slack_app import buttons, command, post

from adapters.slack_app import SlackAdapter
from adapters.slack_settings import SlackSettings
from bot.core.clock import FixedClock
from bot.core.config import Instructors, Settings
from bot.core.messages import Cohort
from bot.runtime.app import StudyBot
from bot.runtime.scheduler import fire_due
from standins.slack_standin import SlackStandIn, block_actions, slash_command, view_submission

TEACHER, OTHER_TEACHER = "U0TEACH", "U0OTHER"  # instructors of T0001 and of T0002
SAID = "It is about buying more GPUs for the team, I think."


async def start(settings: Settings, clock: FixedClock, slack: SlackSettings) -> tuple[StudyBot, SlackAdapter]:
    bot = await StudyBot.start(settings, clock)
    adapter = SlackAdapter(bot, slack)
    await adapter.start()
    return bot, adapter


async def press(adapter: SlackAdapter, fake: SlackStandIn, button: dict, user: str, team: str = "T0001") -> str:
    """Click a button; the private reply posted to its response_url."""
    url_id = f"press-{len(fake.responses)}"
    built = block_actions(button["action_id"], button["value"], user_id=user, user_name=user.lower(), team_id=team,
                          response_url=fake.response_url(url_id), trigger_id=fake.new_trigger_id())
    assert (await post(adapter, built))[0] == 200
    [(_, reply)] = [r for r in fake.responses if r[0] == url_id]
    return reply


def labelled(blocks: list[dict], label: str) -> dict:
    return next(b for b in buttons(blocks) if b["text"]["text"].startswith(label))


async def test_a_dispute_from_verdict_to_direct_message_across_a_restart(
    tmp_path: Path, fake: SlackStandIn, slack: SlackSettings
) -> None:
    settings = Settings(db_path=tmp_path / "bot.db", content_dir=CORE_PACK, results_dir=tmp_path / "results",
                        instructors=Instructors(per_cohort={Cohort("slack", "T0001"): frozenset({TEACHER}),
                                                            Cohort("slack", "T0002"): frozenset({OTHER_TEACHER})}))
    clock = FixedClock()
    bot, adapter = await start(settings, clock, slack)
    try:
        await post(adapter, slash_command("/teachback", "core-tb2", trigger_id=fake.new_trigger_id()))
        [opened] = fake.calls_to("views.open")
        await post(adapter, view_submission("studybot_form", opened.params["view"]["private_metadata"],
                                            {"answer": {"text": SAID}}))
        [missed] = fake.calls_to("chat.postEphemeral")
        assert missed.params["text"].startswith("You covered 0 of 1 key point")
        ask = labelled(missed.params["blocks"], "Ask my instructor")
        sent = await press(adapter, fake, ask, "U0001")
        assert sent["text"].startswith("Sent to your instructor") and sent["response_type"] == "ephemeral"
        assert (await press(adapter, fake, ask, "U0001"))["text"].startswith("You already asked your instructor")

        assert (await command(adapter, fake, "/audit", "disputes")).startswith("Only instructors can settle disputes")
        assert await command(adapter, fake, "/audit", "disputes", user_id=OTHER_TEACHER, team_id="T0002") == (
            "No open disputes in this cohort.")
        status, body = await post(adapter, slash_command("/audit", "disputes", user_id=TEACHER))
        listing = json.loads(body)
        assert status == 200 and listing["text"].startswith("Open disputes: 1.")
        assert "core-tb2 (teach-back) · rubric: wrong" in listing["text"] and SAID in listing["text"]
        accept = labelled(listing["blocks"], "Accept #1")
        refused = await press(adapter, fake, accept, OTHER_TEACHER, team="T0002")
        assert refused["text"].startswith("That button is no longer valid")
        assert (await press(adapter, fake, accept, "U0002"))["text"].startswith("Only instructors can settle")
    finally:
        await adapter.close()
        await bot.close()

    bot, adapter = await start(settings, clock, slack)  # restarted with the dispute open
    try:
        accepted = await press(adapter, fake, accept, TEACHER)
        assert accepted["text"].startswith("Accepted dispute #1:")
        assert "gets 1 point, instructor-graded" in accepted["text"]
        trigger = fake.new_trigger_id()  # the optional word: a modal opened by the press after settling
        word = labelled(accepted["blocks"], "Add a word for")
        await post(adapter, block_actions(word["action_id"], word["value"], user_id=TEACHER, trigger_id=trigger,
                                          response_url=fake.response_url("word")))
        [_, modal] = fake.calls_to("views.open")
        assert modal.params["trigger_id"] == trigger
        await post(adapter, view_submission("studybot_form", modal.params["view"]["private_metadata"],
                                            {"answer": {"text": "MFU: observed over peak."}}, user_id=TEACHER))
        assert await fire_due(bot, {"slack": adapter}) == 2
        [dm] = [c for c in fake.calls_to("chat.postMessage") if c.params["text"].startswith("Your instructor")]
        [said] = [c for c in fake.calls_to("chat.postMessage") if c.params["text"].startswith("A word from")]
        assert said.params["channel"] == "DU0001" and said.params["text"].endswith("\nMFU: observed over peak.")
        assert fake.calls_to("conversations.open")[-1].params["users"] == "U0001"
        assert dm.params["channel"] == "DU0001" and "accepted your teach-back" in dm.params["text"]
        assert await fire_due(bot, {"slack": adapter}) == 0  # told once
        assert (await press(adapter, fake, accept, TEACHER))["text"] == "Dispute #1 was already accepted (by U0TEACH)."
        board = await command(adapter, fake, "/leaderboard", "all")
        assert "· 1 (1 instructor-graded)" in board
    finally:
        await adapter.close()
        await bot.close()
