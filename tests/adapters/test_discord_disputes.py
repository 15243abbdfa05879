"""Disputes on Discord: the real discord.py against the stand-in, a real SQLite file. A short answer's
verdict goes to the instructors ("Ask my instructor"); a learner, and an instructor of another server,
are refused `/audit disputes` and its buttons; the bot restarts with the dispute open and the button
listed before settles it; the learner is told by direct message; results mark it instructor-graded."""

from __future__ import annotations

from pathlib import Path

from support import CORE_PACK
from test_discord_app import (  # noqa: F401  (the fixtures)
    ALICE,
    BOB,
    CAROL,
    button,
    discord_only,
    fixed_clock,
    private_reply,
    short_answer_form,
    start,
    stop,
)

from adapters.discord_settings import DiscordSettings
from bot.core.clock import FixedClock
from bot.core.config import Instructors, Settings
from bot.core.messages import Cohort
from bot.runtime.app import declared_commands
from bot.runtime.scheduler import fire_due
from standins.discord_standin import DiscordStandIn

HALF = "FSDP shards the parameters, that is all I remember."  # one of two key points: graded wrong


async def test_a_dispute_from_verdict_to_direct_message_across_a_restart(
    tmp_path: Path, fixed_clock: FixedClock, discord_fake: DiscordStandIn,  # noqa: F811
    discord_only: DiscordSettings,  # noqa: F811
) -> None:
    fake = discord_fake
    # Carol has the Instructor role here; Bob is an instructor of another server only.
    settings = Settings(db_path=tmp_path / "bot.db", content_dir=CORE_PACK, results_dir=tmp_path / "results",
                        instructors=Instructors(per_cohort={Cohort("discord", "9999"): frozenset({BOB})}))
    studybot, adapter = await start(settings, fixed_clock, discord_only)
    try:
        result = await short_answer_form(fake)
        assert result.type == 9
        graded = await fake.interact(fake.modal_submit(result.data["custom_id"], {"answer": HALF}))
        assert "Graded correct" not in graded.data["content"]
        ask = button(graded.message, "Ask my instructor")
        sent = await fake.interact(fake.component(ask, graded.message))
        assert sent.data["flags"] == 64 and sent.data["content"].startswith("Sent to your instructor")
        again = await fake.interact(fake.component(ask, graded.message))
        assert again.data["content"].startswith("You already asked your instructor")

        for who in (ALICE, BOB):
            refused = await fake.interact(fake.slash("audit", {"view": "disputes"}, user_id=who))
            assert refused.data["content"].startswith("Only instructors can settle disputes")
        listing = await fake.interact(fake.slash("audit", {"view": "disputes"}, user_id=CAROL))
        assert listing.data["flags"] == 64 and listing.data["content"].startswith("Open disputes: 1.")
        assert "core-q2 (short answer) · rubric: wrong" in listing.data["content"] and HALF in listing.data["content"]
        accept = button(listing.message, "Accept #1")
        refused = await fake.interact(fake.component(accept, listing.message, user_id=BOB))
        assert refused.data["content"].startswith("Only instructors can settle disputes")
    finally:
        await stop(studybot, adapter)

    fake.reset_connection_state()
    studybot, adapter = await start(settings, fixed_clock, discord_only)  # restarted with the dispute open
    try:
        accepted = await fake.interact(fake.component(accept, listing.message, user_id=CAROL))
        assert accepted.data["content"].startswith("Accepted dispute #1:")
        assert "gets 1 point, instructor-graded" in accepted.data["content"]
        modal = await fake.interact(fake.component(button(accepted.message, "Add a word for"), accepted.message,
                                                   user_id=CAROL))
        assert modal.type == 9  # the optional word, in a modal
        word = await fake.interact(fake.modal_submit(modal.data["custom_id"], {"answer": "Name the cost too."},
                                                     user_id=CAROL))
        assert word.data["content"] == "Your word on dispute #1 is sent to the learner by direct message."
        assert await fire_due(studybot, {"discord": adapter}) == 2
        opened = await fake.wait_for_call("POST", r"/users/@me/channels")
        assert opened.json == {"recipient_id": int(ALICE)}
        in_dm = rf"/channels/{opened.response['id']}/messages"
        await fake.wait_for_call("POST", in_dm, count=2)
        dms = sorted(c.json["content"] for c in fake.calls_matching("POST", in_dm))
        assert dms[0].startswith("A word from your instructor") and dms[0].endswith("\nName the cost too.")
        assert dms[1].startswith("Your instructor accepted your short answer")

        sent = await fake.interact(fake.slash("results"))
        await private_reply(fake, sent)
        upload = await fake.wait_for_call("POST", rf"/channels/{opened.response['id']}/messages", count=3)
        content = upload.files["quiz_results.txt"].decode()
        assert "core-q2\tshort\tcorrect\tinstructor-graded" in content.splitlines()
    finally:
        await stop(studybot, adapter)


def test_the_audit_command_offers_the_disputes_as_a_choice() -> None:
    [audit] = [s for s in declared_commands() if s.name == "audit"]
    assert audit.args({"view": "disputes", "learner": None}) == "disputes"
    assert audit.args({"view": "self-graded", "learner": "ann"}) == "ann"
    assert audit.option("view").choices == {"self-graded": "", "disputes": "disputes"}
