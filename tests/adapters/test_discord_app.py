"""The Discord adapter end to end: the real discord.py against the stand-in, a real SQLite file."""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import AsyncIterator, Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from support import CORE_PACK, order_numbers
from test_slack_crash import free_port

from adapters.discord_app import DiscordAdapter
from adapters.discord_settings import DiscordSettings
from bot.core.clock import FixedClock
from bot.core.config import Secret, Settings
from bot.core.errors import PlatformRejected, PlatformUnreachable
from bot.runtime.app import StudyBot, declared_commands
from bot.runtime.scheduler import fire_due
from standins.discord_standin import DiscordStandIn

DECLARED = declared_commands()
COMMANDS = {spec.name for spec in DECLARED}
ALICE, BOB, CAROL = "4444", "5555", "6666"  # carol has the Instructor role in the stand-in
SHORT_ANSWER = "FSDP shards the parameters across GPUs, and it needs more communication between them."


@pytest.fixture
def discord_settings(tmp_path: Path) -> Settings:
    return Settings(db_path=tmp_path / "bot.db", content_dir=CORE_PACK, results_dir=tmp_path / "results",
                    round_seconds=60)


@pytest.fixture
def discord_only(discord_fake: DiscordStandIn) -> DiscordSettings:
    return DiscordSettings(token=Secret(discord_fake.token), api_url=discord_fake.api_base,
                           gateway_url=discord_fake.gateway_url, instructor_roles=frozenset({"Instructor"}))


@pytest.fixture
def fixed_clock() -> FixedClock:
    return FixedClock("2026-11-30T09:00:00+00:00")


async def start(settings: Settings, clock: FixedClock, platform: DiscordSettings) -> tuple[StudyBot, DiscordAdapter]:
    studybot = await StudyBot.start(settings, clock)
    adapter = DiscordAdapter(studybot, platform, guild_ready_timeout=0.05, ready_timeout=5)
    await adapter.start()
    return studybot, adapter


async def stop(studybot: StudyBot, adapter: DiscordAdapter) -> None:
    await adapter.close()
    await studybot.close()


@pytest.fixture
async def running(discord_settings: Settings, fixed_clock: FixedClock,
                  discord_only: DiscordSettings) -> AsyncIterator[tuple[StudyBot, DiscordAdapter]]:
    studybot, adapter = await start(discord_settings, fixed_clock, discord_only)
    yield studybot, adapter
    await stop(studybot, adapter)


def buttons(message: dict[str, Any]) -> list[dict[str, Any]]:
    return [c for row in message["components"] for c in row.get("components", [])]


def button(message: dict[str, Any], label_start: str) -> str:
    return next(b["custom_id"] for b in buttons(message) if b["label"].startswith(label_start))


def choice(message: dict[str, Any], index: int) -> dict[str, Any]:
    """The button of the choice with pack index `index` (custom_id sb:<token>.<index>)."""
    return next(b for b in buttons(message) if b["custom_id"].endswith(f".{index}"))


def right(studybot: StudyBot, message: dict[str, Any], right: bool = True) -> str:
    """The custom_id of the first question's right (or a wrong) choice."""
    q = next(iter(studybot.library.lessons.values())).questions[0]
    return choice(message, q.correct_index if right else (q.correct_index + 1) % len(q.choices))["custom_id"]


async def short_answer_form(fake: DiscordStandIn) -> Any:
    """/quiz, then A and Next question on each multiple-choice question until Next opens a short answer's
    form (the interaction's answer, type 9 when it did)."""
    message = (await fake.interact(fake.slash("quiz"))).message
    for _ in range(5):
        feedback = await fake.interact(fake.component(button(message, "A."), message))
        result = await fake.interact(fake.component(button(feedback.message, "Next question"), feedback.message))
        message = result.message
        if result.type == 9:
            break
    return result


async def public_posts(fake: DiscordStandIn, count: int) -> list[dict[str, Any]]:
    """The bot's channel posts (not interaction responses), once `count` were made."""
    await fake.wait_for_call("POST", rf"/channels/{fake.channel_id}/messages", count=count)
    return [m for m in fake.channel_messages(fake.channel_id) if "interaction_metadata" not in m]


async def private_reply(fake: DiscordStandIn, result: Any) -> dict[str, Any]:
    """The private reply to an interaction: its response, or, when the response was a deferral (the
    reply confirms a post or a file, so it follows them), the follow-up message."""
    if result.type != 5:
        return result.data
    followup = await fake.wait_for_call("POST", rf"/webhooks/{fake.app_id}/[^/]+")
    return followup.json


async def eventually(predicate: Callable[[], object], timeout: float = 2.0) -> None:
    """Poll until `predicate()` is truthy (for effects that follow the last recorded call)."""
    deadline = asyncio.get_running_loop().time() + timeout
    while not predicate():
        assert asyncio.get_running_loop().time() < deadline, "condition not met in time"
        await asyncio.sleep(0.01)


# ------------------------------------------------------------ pure translation


@pytest.mark.parametrize(
    ("name", "options", "args"),
    [
        ("quiz", {"mode": None, "lesson": None}, ""),
        ("quiz", {"mode": "round", "lesson": "meta-llm-scale"}, "round meta-llm-scale"),
        ("quiz", {"mode": "practice", "lesson": None}, ""),
        ("quiz", {"mode": "round", "lesson": "meta-llm-scale", "set": "practice", "questions": 3},
         "round meta-llm-scale practice 3"),
        ("quiz", {"mode": "round", "lesson": None, "set": "quiz"}, "round"),
        ("leaderboard", {"action": "post", "period": "all", "week": None}, "post all"),
        ("leaderboard", {"action": None, "period": None, "week": "2026-W48"}, "week 2026-W48"),
        ("results", {"where": "me"}, ""),
        ("results", {"where": "here"}, "here"),
        ("review", {"remind": "on", "lesson": None}, "remind on"),
        ("review", {"remind": "off", "lesson": "meta-llm-scale"}, "remind off meta-llm-scale"),
        ("review", {"remind": None, "lesson": "meta-llm-scale"}, "meta-llm-scale"),
        ("forget", {"confirm": "me"}, "me"),
        ("glossary", {"term": " FSDP "}, "FSDP"),
    ],
)
def test_options_become_the_core_argument_text(name: str, options: dict, args: str) -> None:
    [spec] = [s for s in DECLARED if s.name == name]
    assert spec.args(options) == args


# ------------------------------------------------------------ against the stand-in


async def test_login_sync_and_ready(running, discord_fake: DiscordStandIn) -> None:  # noqa: F811
    fake = discord_fake
    assert [c.path for c in fake.calls[:3]] == ["/users/@me", "/oauth2/applications/@me",
                                                f"/applications/{fake.app_id}/commands"]
    synced = {c["name"]: c for c in fake.commands[None]}
    assert set(synced) == COMMANDS
    mode = next(o for o in synced["quiz"]["options"] if o["name"] == "mode")
    assert [c["value"] for c in mode["choices"]] == ["practice", "round", "stop", "resume"] and not mode.get("required")
    assert next(o for o in synced["glossary"]["options"] if o["name"] == "term")["autocomplete"]
    assert fake.identified.is_set()


def declared_tree() -> dict[str, Any]:
    """The command tree the core declares, in the shape Discord stores it."""
    return {spec.name: {"description": spec.summary, "options": [
        {"name": o.name, "description": o.description, "choices": list(o.choices), "autocomplete": bool(o.suggest),
         "required": False} for o in spec.options]} for spec in DECLARED}


def synced_tree(commands: list[dict[str, Any]]) -> dict[str, Any]:
    return {c["name"]: {"description": c["description"], "options": [
        {"name": o["name"], "description": o["description"], "choices": [ch["value"] for ch in o.get("choices", [])],
         "autocomplete": bool(o.get("autocomplete")), "required": bool(o.get("required"))}
        for o in c.get("options", [])]} for c in commands}


async def test_the_synced_tree_is_the_declared_one(running, discord_fake: DiscordStandIn) -> None:  # noqa: F811
    """Names, descriptions, options with their choices and autocomplete: all from bot/runtime/commands.py."""
    assert synced_tree(discord_fake.commands[None]) == declared_tree()


async def test_sync_to_configured_guilds(discord_settings: Settings, fixed_clock: FixedClock,
                                         discord_fake: DiscordStandIn) -> None:  # noqa: F811
    platform = DiscordSettings(token=Secret(discord_fake.token), api_url=discord_fake.api_base,
                               gateway_url=discord_fake.gateway_url, sync_guilds=(int(discord_fake.guild_id),),
                               instructor_roles=frozenset({"Instructor"}))
    studybot, adapter = await start(discord_settings, fixed_clock, platform)
    try:
        guild = discord_fake.guild_id
        assert discord_fake.calls_matching("PUT", rf"/applications/\d+/guilds/{guild}/commands")
        assert {c["name"] for c in discord_fake.commands[guild]} == COMMANDS
        result = await discord_fake.interact(discord_fake.slash("help"))
        assert "/quiz" in result.data["content"]
    finally:
        await stop(studybot, adapter)


async def test_glossary_typo_gets_did_you_mean_privately(running, discord_fake: DiscordStandIn) -> None:  # noqa: F811
    result = await discord_fake.interact(discord_fake.slash("glossary", {"term": "paralelism"}))
    assert result.status == 200 and result.type == 4 and result.data["flags"] == 64
    assert "Did you mean" in result.data["content"] and "Data parallelism" in result.data["content"]


async def test_glossary_autocomplete(running, discord_fake: DiscordStandIn) -> None:  # noqa: F811
    result = await discord_fake.interact(discord_fake.autocomplete("glossary", "term", "MF"))
    assert result.type == 8
    assert "MFU" in [c["value"] for c in result.data["choices"]]


async def test_quiz_click_records_then_gives_private_feedback_once(running, discord_fake: DiscordStandIn) -> None:  # noqa: F811
    studybot, _ = running
    fake = discord_fake
    quiz = await fake.interact(fake.slash("quiz"))
    assert quiz.type == 4 and quiz.data["flags"] == 64 and "question 1 of" in quiz.data["content"]
    assert all(len(row["components"]) <= 5 for row in quiz.data["components"])
    assert all(b["custom_id"].startswith("sb:") for b in buttons(quiz.data))

    first = fake.component(right(studybot, quiz.message), quiz.message)
    click = await fake.interact(first)
    assert click.type == 4 and click.data["flags"] == 64 and "Correct" in click.data["content"]
    assert await studybot.store.count("answers") == 1

    again = await fake.interact(fake.component(right(studybot, quiz.message, False), quiz.message))
    assert "already answered" in again.data["content"]
    assert await studybot.store.count("answers") == 1


async def test_short_answer_modal_is_graded(running, discord_fake: DiscordStandIn) -> None:  # noqa: F811
    fake = discord_fake
    result = await short_answer_form(fake)
    assert result.type == 9 and result.data["custom_id"].startswith("sbform:")
    assert "FSDP" in str(result.data["components"])  # the prompt is shown in the modal
    graded = await fake.interact(fake.modal_submit(result.data["custom_id"], {"answer": SHORT_ANSWER}))
    assert graded.type == 4 and graded.data["flags"] == 64
    assert "Graded correct: 2 of 2" in graded.data["content"]
    assert [b["label"] for b in buttons(graded.data)] == ["Next question"]  # graded right: nothing to self-grade
    assert "Model answer" not in graded.data["content"]


async def test_round_with_three_members_is_revealed_by_editing(running, discord_fake: DiscordStandIn,  # noqa: F811
                                                               fixed_clock: FixedClock) -> None:
    studybot, adapter = running
    fake = discord_fake
    started = await fake.interact(fake.slash("quiz", {"mode": "round"}))
    assert started.data["flags"] == 64 and "Round started" in (await private_reply(fake, started))["content"]
    [question] = await public_posts(fake, 1)
    assert "question 1 of" in question["content"] and not question["flags"] & 64
    picks = {ALICE: right(studybot, question), BOB: right(studybot, question), CAROL: right(studybot, question, False)}
    letter = next(b["label"][0] for b in buttons(question) if b["custom_id"] == picks[ALICE])
    for user, custom_id in picks.items():
        feedback = await fake.interact(fake.component(custom_id, question, user_id=user))
        assert feedback.data["flags"] == 64
    assert await studybot.store.count("answers") == 3

    assert await fire_due(studybot, {"discord": adapter}) == 0
    fixed_clock.advance(61)
    assert await fire_due(studybot, {"discord": adapter}) == 1
    [edit] = fake.calls_matching("PATCH", rf"/channels/{fake.channel_id}/messages/{question['id']}")
    assert "3 answered, 2 correct" in edit.json["content"] and edit.json["components"] == []
    assert f"{letter}: 2 ✓" in fake.messages[question["id"]]["content"]
    assert "question 2 of" in (await public_posts(fake, 2))[-1]["content"]


async def test_results_file_is_sent_by_dm(running, discord_fake: DiscordStandIn) -> None:  # noqa: F811
    studybot, _ = running
    fake = discord_fake
    quiz = await fake.interact(fake.slash("quiz"))
    await fake.interact(fake.component(right(studybot, quiz.message), quiz.message))
    sent = await fake.interact(fake.slash("results"))
    assert sent.data["flags"] == 64 and "direct messages" in (await private_reply(fake, sent))["content"]
    opened = await fake.wait_for_call("POST", r"/users/@me/channels")
    assert opened.json == {"recipient_id": int(ALICE)}
    dm_id = opened.response["id"]
    upload = await fake.wait_for_call("POST", rf"/channels/{dm_id}/messages")
    assert "multipart" in upload.headers["Content-Type"]
    content = upload.files["quiz_results.txt"].decode()
    assert "learner: discord:4444" in content and "score: 1/4 (25%)" in content


async def test_closed_direct_messages_get_a_private_note(running, discord_fake: DiscordStandIn) -> None:  # noqa: F811
    fake = discord_fake
    fake.dm_closed.add(ALICE)
    await fake.interact(fake.slash("results"))
    note = await fake.wait_for_call("POST", rf"/webhooks/{fake.app_id}/[^/]+")
    assert note.json["flags"] == 64 and "could not send you a direct message" in note.json["content"]
    refused = fake.calls_matching("POST", r"/channels/\d+/messages")
    assert [(c.status, c.response["code"]) for c in refused] == [(403, 50007)]


async def test_results_here_is_the_public_response(running, discord_fake: DiscordStandIn) -> None:  # noqa: F811
    result = await discord_fake.interact(discord_fake.slash("results", {"where": "here"}))
    assert result.type == 4 and not result.data.get("flags")
    assert "quiz_results.txt" in result.files


async def test_buttons_and_modals_work_after_a_restart(discord_settings: Settings, fixed_clock: FixedClock,
                                                       discord_fake: DiscordStandIn,  # noqa: F811
                                                       discord_only: DiscordSettings) -> None:
    fake = discord_fake
    studybot, adapter = await start(discord_settings, fixed_clock, discord_only)
    quiz = await fake.interact(fake.slash("quiz"))
    modal = await fake.interact(fake.slash("teachback", user_id=BOB))
    assert modal.type == 9
    await stop(studybot, adapter)

    fake.reset_connection_state()
    studybot, adapter = await start(discord_settings, fixed_clock, discord_only)
    try:
        click = await fake.interact(fake.component(right(studybot, quiz.message), quiz.message))
        assert "Correct" in click.data["content"]
        assert await studybot.store.count("answers") == 1
        submitted = await fake.interact(fake.modal_submit(modal.data["custom_id"], {"answer": SHORT_ANSWER},
                                                          user_id=BOB))
        assert submitted.data["flags"] == 64 and "You covered" in submitted.data["content"]
    finally:
        await stop(studybot, adapter)


async def test_only_instructors_post_the_leaderboard(running, discord_fake: DiscordStandIn) -> None:  # noqa: F811
    fake = discord_fake
    refused = await fake.interact(fake.slash("leaderboard", {"action": "post"}, user_id=ALICE))
    assert refused.data["flags"] == 64 and "Only instructors" in refused.data["content"]
    assert not fake.calls_matching("POST", rf"/channels/{fake.channel_id}/messages")
    posted = await fake.interact(fake.slash("leaderboard", {"action": "post", "period": "all"}, user_id=CAROL))
    assert posted.data["flags"] == 64 and (await private_reply(fake, posted))["content"] == "Posted."
    [board] = await public_posts(fake, 1)
    assert board["content"].startswith("Leaderboard · all time")


async def test_expired_interaction_is_logged_and_the_answer_kept(running, discord_fake: DiscordStandIn,  # noqa: F811
                                                                 caplog: pytest.LogCaptureFixture) -> None:
    studybot, _ = running
    fake = discord_fake
    quiz = await fake.interact(fake.slash("quiz"))
    caplog.set_level(logging.INFO)
    fake.initial_response_deadline_s = 0.0  # every first callback now arrives too late
    payload = fake.component(right(studybot, quiz.message), quiz.message)
    late = await fake.interact(payload)
    assert (late.status, late.response["code"]) == (404, 10062)
    await eventually(lambda: any(r.name == "studybot.discord" and "10062" in r.getMessage() for r in caplog.records))
    assert await studybot.store.count("answers") == 1  # recorded before the platform was answered
    ours = "\n".join(r.getMessage() for r in caplog.records if not r.name.startswith("aiohttp"))  # not the stand-in's
    assert "expired" in ours and payload["token"] not in ours and fake.token not in ours

    fake.initial_response_deadline_s = 3.0
    result = await fake.interact(fake.slash("glossary", {"term": "MFU"}))
    assert result.status == 200 and "MFU" in result.data["content"]


async def test_rate_limited_post_is_retried(running, discord_fake: DiscordStandIn) -> None:  # noqa: F811
    studybot, _ = running
    fake = discord_fake
    path = rf"/channels/{fake.channel_id}/messages"
    fake.rate_limit("POST", path, retry_after=0.2)
    started = await fake.interact(fake.slash("quiz", {"mode": "round"}))
    assert "Round started" in (await private_reply(fake, started))["content"]
    await fake.wait_for_call("POST", path, count=2)
    assert [c.status for c in fake.calls_matching("POST", path)] == [429, 200]
    [question] = await public_posts(fake, 1)
    ref = await studybot.store.messages.get("round:1:0")
    assert ref is not None and ref.message_id == question["id"]


async def test_direct_message_uses_the_last_cohort(running, discord_fake: DiscordStandIn) -> None:  # noqa: F811
    fake = discord_fake
    first = await fake.interact(fake.slash("progress", guild=False))
    assert "channel first" in first.data["content"]
    await fake.interact(fake.slash("quiz"))  # the learner now belongs to the guild's cohort
    later = await fake.interact(fake.slash("leaderboard", guild=False))
    assert later.data["content"].startswith("Leaderboard")


async def test_review_reminder_option(running, discord_fake: DiscordStandIn) -> None:  # noqa: F811
    result = await discord_fake.interact(discord_fake.slash("review", {"remind": "on"}))
    assert result.data["flags"] == 64 and "reminders are on" in result.data["content"]


async def test_reveal_of_a_deleted_question_does_not_retry_forever(running, discord_fake: DiscordStandIn,  # noqa: F811
                                                                   fixed_clock: FixedClock) -> None:
    studybot, adapter = running
    fake = discord_fake
    await fake.interact(fake.slash("quiz", {"mode": "round"}))
    [question] = await public_posts(fake, 1)
    del fake.messages[question["id"]]  # a moderator deleted it
    fixed_clock.advance(61)
    assert await fire_due(studybot, {"discord": adapter}) == 1
    assert await fire_due(studybot, {"discord": adapter}) == 0
    assert "question 2 of" in (await public_posts(fake, 2))[-1]["content"]


async def test_wrong_token_and_unreachable_gateway_fail_clearly(discord_settings: Settings, fixed_clock: FixedClock,
                                                                discord_only: DiscordSettings) -> None:
    studybot = await StudyBot.start(discord_settings, fixed_clock)
    try:
        wrong = DiscordAdapter(studybot, replace(discord_only, token=Secret("wrong")), ready_timeout=2)
        with pytest.raises(PlatformRejected, match=r"^DISCORD_TOKEN was refused by Discord \(401 Unauthorized\)"):
            await wrong.start()
        nowhere = replace(discord_only, gateway_url="ws://127.0.0.1:9/gateway")
        adapter = DiscordAdapter(studybot, nowhere, guild_ready_timeout=0.05, ready_timeout=0.5)
        with pytest.raises(PlatformUnreachable, match="did not become ready") as raised:
            await adapter.start()
        assert "\n" not in str(raised.value)
        no_api = DiscordAdapter(studybot, replace(discord_only, api_url=f"http://127.0.0.1:{free_port()}/api/v10"))
        with pytest.raises(PlatformUnreachable, match="^cannot reach Discord at .*DISCORD_API_URL$"):
            await no_api.start()
    finally:
        await studybot.close()


def modal_text(modal: dict[str, Any]) -> str:
    """The text a modal shows (its text displays)."""
    return "\n".join(c.get("content", "") for c in modal["components"] if c.get("type") == 10)


async def test_an_order_question_is_a_modal_with_partial_credit(running, discord_fake: DiscordStandIn) -> None:  # noqa: F811
    """Next leads to the put-in-order question; its modal lists the steps shuffled; a half-right order
    is recorded as wrong and the feedback says how many steps were in the right place."""
    studybot, _ = running
    fake = discord_fake
    order = next(q for q in next(iter(studybot.library.lessons.values())).questions if q.kind == "order")
    result = await fake.interact(fake.slash("quiz"))
    for _ in range(6):
        if result.type == 9 and "Put in order" in result.data["title"]:
            break
        if result.type == 9:  # a short answer's modal
            attempt = {"answer": "I think it depends on the team."}
            feedback = await fake.interact(fake.modal_submit(result.data["custom_id"], attempt))
        else:
            feedback = await fake.interact(fake.component(buttons(result.message)[0]["custom_id"], result.message))
        result = await fake.interact(fake.component(button(feedback.message, "Next question"), feedback.message))
    assert result.type == 9 and result.data["title"] == "Put in order"
    shown = modal_text(result.data)
    assert all(step in shown for step in order.steps)
    right_order = order_numbers(order, shown).split()
    half = " ".join(right_order[:2] + right_order[:1:-1])  # the first two steps right, the last two swapped
    graded = await fake.interact(fake.modal_submit(result.data["custom_id"], {"answer": half}))
    assert graded.data["flags"] == 64
    assert graded.data["content"].startswith("❌ 2 of 4 in the right place.")
    assert f"The right order: {' '.join(right_order)}" in graded.data["content"]
    rows = await studybot.store.engine.read("SELECT correct FROM answers WHERE question_id = ?", (order.id,))
    assert [r["correct"] for r in rows] == [0]


# ------------------------------------------------------------ classroom flow: rounds, "I don't know", retries


async def said(fake: DiscordStandIn, payload: dict[str, Any]) -> str:
    """What the bot answered privately to this interaction: its response, or after a deferral the
    follow-up sent with this interaction's token."""
    result = await fake.interact(payload)
    if result.type != 5:
        assert result.data["flags"] == 64
        return result.data["content"]
    followup = await fake.wait_for_call("POST", rf"/webhooks/{fake.app_id}/{re.escape(payload['token'])}")
    assert followup.json["flags"] == 64
    return followup.json["content"]


def quiz_options(fake: DiscordStandIn) -> dict[str, dict[str, Any]]:
    """The /quiz options as discord.py registered them (the PUT of the command tree)."""
    [put] = fake.calls_matching("PUT", rf"/applications/{fake.app_id}/commands")
    [quiz] = [c for c in put.json if c["name"] == "quiz"]
    return {o["name"]: o for o in quiz["options"]}


async def test_quiz_round_options_are_registered_as_typed_options(running, discord_fake: DiscordStandIn) -> None:  # noqa: F811
    options = quiz_options(discord_fake)
    assert list(options) == ["mode", "lesson", "set", "questions", "seconds"]
    assert options["mode"]["type"] == 3 and [(c["name"], c["value"]) for c in options["mode"]["choices"]] == [
        ("practice", "practice"), ("round", "round"), ("stop", "stop"), ("resume", "resume")]
    assert [c["value"] for c in options["set"]["choices"]] == ["quiz", "practice"]  # a round of the practice set
    assert options["lesson"]["type"] == 3 and "choices" not in options["lesson"]
    for name, (low, high) in (("questions", (1, 100)), ("seconds", (5, 3600))):
        assert {k: options[name].get(k) for k in ("type", "min_value", "max_value", "required")} == {
            "type": 4, "min_value": low, "max_value": high, "required": False}
    assert not any(o["required"] for o in options.values())


async def test_quiz_round_of_two_with_seconds_and_i_dont_know(running, discord_fake: DiscordStandIn,  # noqa: F811
                                                              fixed_clock: FixedClock,
                                                              discord_settings: Settings) -> None:
    """/quiz mode:round questions:2 seconds:30 asks two questions of 30 s; "I don't know" on the public
    question is recorded (wrong, no points) and answered privately with the explanation."""
    studybot, adapter = running
    fake = discord_fake
    assert await said(fake, fake.slash("quiz", {"questions": 2, "seconds": 30})) == (  # mode:round forgotten
        "A number of questions, seconds and the practice set are for a round. Use /quiz round [lesson] [practice] "
        "[number of questions] [seconds:N], /quiz round stop or /quiz round resume.")
    started = await said(fake, fake.slash("quiz", {"mode": "round", "lesson": "core-basics", "questions": 2,
                                                   "seconds": 30}))
    assert started.startswith("Round started: 2 questions, 30 s each.")
    [first] = await public_posts(fake, 1)
    assert first["content"].startswith("Round · question 1 of 2 · 30 s")
    dont_know = await fake.interact(fake.component(button(first, "I don't know"), first, user_id=BOB))
    assert dont_know.type == 4 and dont_know.data["flags"] == 64
    q1 = studybot.library.questions["core-q1"]
    assert "counts as your first answer, with no points" in dont_know.data["content"]
    assert q1.explanation in dont_know.data["content"]
    rows = await studybot.store.engine.read("SELECT question_id, mode, correct, points FROM answers")
    assert [tuple(r) for r in rows] == [("core-q1", "round", 0, 0)]

    fixed_clock.advance(29)
    assert await fire_due(studybot, {"discord": adapter}) == 0  # its own 30 s, not the configured 60
    fixed_clock.advance(2)
    assert await fire_due(studybot, {"discord": adapter}) == 1
    assert "1 answered, 0 correct" in fake.messages[first["id"]]["content"]
    second = (await public_posts(fake, 2))[-1]
    assert second["content"].startswith("Round · question 2 of 2 · 30 s")
    fixed_clock.advance(31)
    assert await fire_due(studybot, {"discord": adapter}) == 1
    posts = await public_posts(fake, 3)
    assert posts[-1]["content"].startswith("Round over.") and len(posts) == 3  # no third question
    assert await fire_due(studybot, {"discord": adapter}) == 0


async def test_quiz_stop_and_resume_modes(running, discord_fake: DiscordStandIn,  # noqa: F811
                                          fixed_clock: FixedClock) -> None:
    """Three silent questions pause the round after the second; mode:resume goes on with the third;
    mode:stop is refused to a learner who did not start it and ends it for its starter."""
    studybot, adapter = running
    fake = discord_fake
    await fake.interact(fake.slash("quiz", {"mode": "round", "questions": 3}))
    for _ in range(2):
        fixed_clock.advance(61)
        assert await fire_due(studybot, {"discord": adapter}) == 1
    posts = await public_posts(fake, 3)
    assert posts[-1]["content"].startswith("Round paused: nobody answered the last two questions.")

    assert await said(fake, fake.slash("quiz", {"mode": "resume"})) == "Round resumed."
    assert (await public_posts(fake, 4))[-1]["content"].startswith("Round · question 3 of 3")

    assert await said(fake, fake.slash("quiz", {"mode": "stop"}, user_id=BOB)) == (
        "Only the person who started the round (or an instructor) can stop it.")
    assert (await said(fake, fake.slash("quiz", {"mode": "stop"}))).startswith("Round stopped")
    assert await fire_due(studybot, {"discord": adapter}) == 1
    assert (await public_posts(fake, 5))[-1]["content"].startswith("Round over.")


async def test_i_dont_know_in_practice_then_lessons(running, discord_fake: DiscordStandIn) -> None:  # noqa: F811
    studybot, _ = running
    fake = discord_fake
    quiz = await fake.interact(fake.slash("quiz"))
    labels = [b["label"] for b in buttons(quiz.data)]
    assert labels[-1] == "I don't know"
    click = await fake.interact(fake.component(button(quiz.message, "I don't know"), quiz.message))
    assert click.type == 4 and click.data["flags"] == 64
    assert click.data["content"].startswith("🤷 Fair enough")
    assert studybot.library.questions["core-q1"].explanation in click.data["content"]
    assert "Next question" in [b["label"] for b in buttons(click.data)]
    rows = await studybot.store.engine.read("SELECT question_id, mode, correct, points FROM answers")
    assert [tuple(r) for r in rows] == [("core-q1", "practice", 0, 0)]

    lessons = await fake.interact(fake.slash("lessons"))
    assert lessons.data["flags"] == 64
    assert lessons.data["content"] == ("Lessons\n• core-basics: Core basics · 1/4 answered, 0 right\n"
                                      "  teach-backs passed 0 of 2: core-tb1, core-tb2")


async def test_teachback_by_id_and_try_this_one_again(running, discord_fake: DiscordStandIn) -> None:  # noqa: F811
    """/teachback prompt:core-tb2 opens that prompt's modal; a miss offers "Try this one again", which
    opens the same prompt in a fresh modal; /lessons then counts the teach-back."""
    fake = discord_fake
    suggested = await fake.interact(fake.autocomplete("teachback", "prompt", "core-tb"))
    assert [c["value"] for c in suggested.data["choices"]] == ["core-tb1", "core-tb2"]
    prompt = "Explain what MFU tells you about a training run."
    modal = await fake.interact(fake.slash("teachback", {"prompt": "core-tb2"}))
    assert modal.type == 9 and prompt in modal_text(modal.data)
    wrong = {"answer": "It is about buying more GPUs for the team, I think."}
    missed = await fake.interact(fake.modal_submit(modal.data["custom_id"], wrong))
    assert missed.data["flags"] == 64 and missed.data["content"].startswith("You covered 0 of 1 key point")
    again = await fake.interact(fake.component(button(missed.message, "Try this one again"), missed.message))
    assert again.type == 9 and prompt in modal_text(again.data)
    assert again.data["custom_id"] != modal.data["custom_id"]
    passed = await fake.interact(fake.modal_submit(again.data["custom_id"],
                                                   {"answer": "MFU is the observed throughput over peak."}))
    assert passed.data["content"].startswith("You covered 1 of 1 key point.") and "earns 1 point" in \
        passed.data["content"]
    assert not passed.data.get("components")  # nothing to try again
    lessons = await fake.interact(fake.slash("lessons"))
    assert lessons.data["content"].endswith("teach-backs passed 1 of 2: core-tb1, core-tb2 ✓")
