"""The Slack adapter end to end: real slack-bolt and slack-sdk against the loopback stand-in,
real SQLite in tmp_path, a fixed clock for rounds."""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path

import pytest
from support import CORE_PACK, order_numbers

from adapters.slack_app import SlackAdapter
from adapters.slack_settings import SlackSettings
from bot.core.clock import FixedClock
from bot.core.config import Instructors, Secret, Settings
from bot.core.messages import Cohort
from bot.runtime.app import StudyBot
from bot.runtime.scheduler import fire_due
from standins.slack_standin import (
    SlackStandIn,
    block_actions,
    block_actions_payload,
    post_signed,
    slash_command,
    slash_payload,
    view_submission,
)

TEACHER = "U0TEACH"


@pytest.fixture
def clock() -> FixedClock:
    return FixedClock()


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings(db_path=tmp_path / "bot.db", content_dir=CORE_PACK, results_dir=tmp_path / "results",
                    instructors=Instructors(everywhere={"slack": frozenset({TEACHER})}))


@pytest.fixture
async def bot(settings: Settings, clock: FixedClock) -> AsyncIterator[StudyBot]:
    bot = await StudyBot.start(settings, clock)
    yield bot
    await bot.close()


@pytest.fixture
async def adapter(bot: StudyBot, slack: SlackSettings) -> AsyncIterator[SlackAdapter]:
    adapter = SlackAdapter(bot, slack)
    await adapter.start()
    yield adapter
    await adapter.close()


async def post(adapter: SlackAdapter, built: tuple[str, dict[str, str]]) -> tuple[int, str]:
    """Post a signed request, then wait for what the adapter does after the ack."""
    answered = await post_signed(f"http://127.0.0.1:{adapter.port}/slack/events", *built)
    await adapter.idle()
    return answered


async def command(adapter: SlackAdapter, fake: SlackStandIn, name: str, text: str = "", **fields) -> str:
    """A slash command's private reply: in the ack, or (when it came with a post or a file, which it
    may confirm) through its response_url once they were delivered."""
    url_id = f"cmd-{len(fake.responses)}-{name.lstrip('/')}"
    status, body = await post(adapter, slash_command(name, text, response_url=fake.response_url(url_id), **fields))
    assert status == 200
    if body:
        return json.loads(body)["text"]
    return "\n".join(r[1]["text"] for r in fake.responses if r[0] == url_id)


def answers(settings: Settings, user_id: str | None = None) -> list[sqlite3.Row]:
    with sqlite3.connect(settings.db_path) as db:
        db.row_factory = sqlite3.Row
        sql = "SELECT a.*, l.user_id FROM answers a JOIN learners l ON l.id = a.learner_id"
        rows = db.execute(sql + (" WHERE l.user_id = ?" if user_id else ""), (user_id,) if user_id else ()).fetchall()
    return rows


def buttons(blocks: list[dict]) -> list[dict]:
    return [e for b in blocks if b["type"] == "actions" for e in b["elements"]]


async def quiz(adapter: SlackAdapter, fake: SlackStandIn, user: str = "U0001", **fields) -> dict:
    status, text = await post(adapter, slash_command("/quiz", user_id=user, trigger_id=fake.new_trigger_id(),
                                                     response_url=fake.response_url(f"quiz-{user}"), **fields))
    assert status == 200
    return json.loads(text) if text else {}


async def click(adapter: SlackAdapter, fake: SlackStandIn, button: dict, user: str = "U0001",
                **fields) -> int:
    built = block_actions(button["action_id"], button["value"], user_id=user, user_name=user.lower(),
                          response_url=fake.response_url(f"click-{user}"), trigger_id=fake.new_trigger_id(),
                          **fields)
    status, _ = await post(adapter, built)
    return status


def first_question(bot: StudyBot):
    return next(iter(bot.library.lessons.values())).questions[0]


def correct_button(bot: StudyBot, blocks: list[dict], question_index: int = 0) -> dict:
    """The button of the right choice: its value is the prompt token and the choice's pack index."""
    question = next(iter(bot.library.lessons.values())).questions[question_index]
    return next(b for b in buttons(blocks) if b["value"].endswith(f".{question.correct_index}"))


# -- HTTP mode ---------------------------------------------------------------------------------


async def test_glossary_answers_with_the_definition(adapter: SlackAdapter, fake: SlackStandIn) -> None:
    status, text = await post(adapter, slash_command("/glossary", "mfu"))
    assert status == 200
    body = json.loads(text)
    assert body["text"].startswith("*MFU* (Model FLOPs utilization")
    assert "divided by the hardware's peak" in body["blocks"][0]["text"]["text"]
    assert [c.method for c in fake.calls] == ["auth.test", "users.info"]  # the learner's locale, once


async def test_glossary_payload_is_looked_up_like_any_term(adapter: SlackAdapter) -> None:
    status, text = await post(adapter, slash_command("/glossary", "payload"))
    assert status == 200
    assert json.loads(text)["text"].startswith("No term 'payload' in the glossary.")


async def test_unknown_command_goes_to_the_core(adapter: SlackAdapter) -> None:
    status, text = await post(adapter, slash_command("/nonsense"))
    assert (status, json.loads(text)["text"]) == (200, "There is no command /nonsense. Type /help to see the commands.")


async def test_quiz_shows_ephemeral_buttons_and_a_click_is_recorded_once(
    adapter: SlackAdapter, fake: SlackStandIn, bot: StudyBot, settings: Settings
) -> None:
    body = await quiz(adapter, fake)
    assert body.get("response_type") in (None, "ephemeral")
    assert body["blocks"][0]["type"] == "section" and "question 1 of" in body["blocks"][0]["text"]["text"]
    choices = buttons(body["blocks"])
    size = len(first_question(bot).choices) + 1  # and "I don't know"
    assert len(choices) == size and choices[-1]["text"]["text"] == "I don't know"
    assert len({b["action_id"] for b in choices}) == size
    assert all(b["action_id"].startswith("studybot:") for b in choices)

    right = correct_button(bot, body["blocks"])
    assert await click(adapter, fake, right) == 200
    assert await click(adapter, fake, right) == 200  # a double click: two deliveries

    [first, second] = [r for r in fake.responses if r[0] == "click-U0001"]
    assert first[1]["text"].startswith("✅ Correct.") and first[1]["response_type"] == "ephemeral"
    assert "Next question" in [b["text"]["text"] for b in buttons(first[1]["blocks"])]
    assert second[1]["text"].startswith("You already answered this question")
    [row] = answers(settings)
    assert (row["user_id"], row["correct"], row["mode"]) == ("U0001", 1, "practice")


async def test_next_question_button_leads_to_a_graded_short_answer_modal(
    adapter: SlackAdapter, fake: SlackStandIn, bot: StudyBot, settings: Settings
) -> None:
    """Answer, press Next question, until the next question is a short one: its form opens as a
    modal with that click's trigger_id; the submission is graded and the feedback is ephemeral."""
    blocks = (await quiz(adapter, fake))["blocks"]
    for _ in range(10):
        assert await click(adapter, fake, buttons(blocks)[0]) == 200
        feedback = fake.responses[-1][1]
        [next_button] = [b for b in buttons(feedback["blocks"]) if b["text"]["text"] == "Next question"]
        trigger = fake.new_trigger_id()
        built = block_actions(next_button["action_id"], next_button["value"], trigger_id=trigger,
                              response_url=fake.response_url("next"))
        assert (await post(adapter, built))[0] == 200
        if fake.calls_to("views.open"):
            break
        blocks = fake.responses[-1][1]["blocks"]
    else:
        pytest.fail("no short-answer question came up")
    [opened] = fake.calls_to("views.open")
    assert opened.params["trigger_id"] == trigger
    view = opened.params["view"]
    assert view["callback_id"] == "studybot_form"
    assert view["blocks"][1]["element"]["type"] == "plain_text_input"
    assert view["blocks"][1]["element"]["multiline"] is True
    assert json.loads(view["private_metadata"])["channel"] == "C0001"

    text = "FSDP shards the parameters across GPUs so each GPU only holds a slice, at the cost of more communication."
    status, reply = await post(adapter, view_submission("studybot_form", view["private_metadata"],
                                                        {"answer": {"text": text}}))
    assert (status, reply) == (200, "")
    [feedback] = fake.calls_to("chat.postEphemeral")
    assert feedback.params["channel"] == "C0001" and feedback.params["user"] == "U0001"
    assert feedback.params["text"].startswith("✅ Graded correct") and "Model answer" not in feedback.params["text"]
    assert "I got it right" not in json.dumps(feedback.params["blocks"])  # graded right: nothing to self-grade
    short = [r for r in answers(settings) if r["question_id"] == "core-q2"]
    assert [r["correct"] for r in short] == [1]


async def test_teachback_opens_a_modal_from_the_command_and_refusals_are_shown(
    adapter: SlackAdapter, fake: SlackStandIn
) -> None:
    trigger = fake.new_trigger_id()
    status, text = await post(adapter, slash_command("/teachback", trigger_id=trigger, channel_id="DU0001"))
    assert (status, text) == (200, "")
    [opened] = fake.calls_to("views.open")
    assert opened.params["trigger_id"] == trigger
    view = opened.params["view"]
    assert view["title"]["text"] == "Teach-back"
    assert json.loads(view["private_metadata"])["channel"] is None  # asked in a DM

    status, _ = await post(adapter, view_submission("studybot_form", view["private_metadata"],
                                                    {"answer": {"text": "   "}}))
    assert status == 200
    [dm] = fake.calls_to("chat.postMessage")
    assert dm.params["channel"] == "DU0001" and dm.params["text"].startswith("Your answer is empty.")


async def test_an_expired_trigger_leaves_a_note_instead_of_a_modal(adapter: SlackAdapter, fake: SlackStandIn) -> None:
    status, text = await post(adapter, slash_command("/teachback", trigger_id="1.2.never-issued"))
    assert status == 200 and "could not open" in json.loads(text)["text"]


async def test_round_is_posted_answered_and_revealed_by_an_edit(
    adapter: SlackAdapter, fake: SlackStandIn, bot: StudyBot, settings: Settings, clock: FixedClock
) -> None:
    assert (await command(adapter, fake, "/quiz", "round")).startswith("Round started")
    [posted] = fake.calls_to("chat.postMessage")
    assert posted.params["channel"] == "C0001"
    [message] = [(key, m) for key, m in fake.messages.items()]
    (channel, ts), stored = message
    blocks = stored["blocks"]

    right = correct_button(bot, blocks)
    wrong = next(b for b in buttons(blocks)[: len(first_question(bot).choices)] if b is not right)
    for user, button in (("U0002", right), ("U0003", right), ("U0004", wrong)):
        assert await click(adapter, fake, button, user, message_ts=ts) == 200
    assert len(answers(settings)) == 3

    clock.advance(settings.round_seconds + 1)
    assert await fire_due(bot, {"slack": adapter}) == 1
    [update] = fake.calls_to("chat.update")
    assert (update.params["channel"], update.params["ts"]) == (channel, ts)
    assert "3 answered, 2 correct." in update.params["text"]
    assert buttons(fake.messages[(channel, ts)]["blocks"]) == []  # the buttons are gone
    assert len(fake.calls_to("chat.postMessage")) == 2  # and the next question is up


async def test_results_file_is_uploaded_to_the_dm(
    adapter: SlackAdapter, fake: SlackStandIn, bot: StudyBot
) -> None:
    body = await quiz(adapter, fake)
    assert await click(adapter, fake, correct_button(bot, body["blocks"])) == 200
    assert "check your direct messages" in await command(adapter, fake, "/results")

    methods = [c.method for c in fake.calls]
    start = methods.index("files.getUploadURLExternal")
    assert methods[start : start + 3] == ["files.getUploadURLExternal", "upload", "files.completeUploadExternal"]
    assert fake.calls_to("conversations.open")[0].params["users"] == "U0001"
    [shared] = fake.shared_files
    assert (shared["name"], shared["channel_id"]) == ("quiz_results.txt", "DU0001")
    content = fake.uploads[shared["id"]].decode()
    total = len(next(iter(bot.library.lessons.values())).questions)
    assert f"score: 1/{total} ({round(100 / total)}%)" in content.splitlines()


async def test_forged_and_stale_requests_get_401_and_change_nothing(
    adapter: SlackAdapter, fake: SlackStandIn, settings: Settings
) -> None:
    body = await quiz(adapter, fake)
    button = buttons(body["blocks"])[0]
    forged = block_actions(button["action_id"], button["value"], secret="not-the-secret")
    stale = block_actions(button["action_id"], button["value"], ts=int(time.time()) - 301)
    assert (await post(adapter, forged))[0] == 401
    assert (await post(adapter, stale))[0] == 401
    assert (await post(adapter, slash_command("/quiz", "round", secret="nope")))[0] == 401
    await adapter.idle()
    assert answers(settings) == []
    assert fake.responses == [] and not fake.calls_to("chat.postMessage")


async def test_only_instructors_post_the_leaderboard(adapter: SlackAdapter, fake: SlackStandIn) -> None:
    assert await command(adapter, fake, "/leaderboard", "post") == (
        "Only instructors can post the leaderboard. Ask your instructor if you need it.")
    assert not fake.calls_to("chat.postMessage")

    assert await command(adapter, fake, "/leaderboard", "post", user_id=TEACHER) == "Posted."
    [posted] = fake.calls_to("chat.postMessage")
    assert posted.params["channel"] == "C0001" and posted.params["text"].startswith("Leaderboard · week")


async def test_workspace_admins_count_as_instructors_when_configured(
    fake: SlackStandIn, bot: StudyBot, settings: Settings, slack: SlackSettings
) -> None:
    fake.users["U0ADMIN"] = {"is_admin": True}
    adapter = SlackAdapter(bot, replace(slack, admins_are_instructors=True))
    await adapter.start()
    try:
        for _ in range(2):
            assert await command(adapter, fake, "/leaderboard", "post", user_id="U0ADMIN") == "Posted."
        assert (await command(adapter, fake, "/leaderboard", "post", user_id="U0002")).startswith("Only instructors")
    finally:
        await adapter.close()
    assert [c.params["user"] for c in fake.calls_to("users.info")] == ["U0ADMIN", "U0002"]  # cached


async def test_rate_limited_post_is_retried_and_arrives(adapter: SlackAdapter, fake: SlackStandIn) -> None:
    fake.inject("chat.postMessage", 429, {"ok": False, "error": "ratelimited"}, {"Retry-After": "0"})
    status, _ = await post(adapter, slash_command("/leaderboard", "post", user_id=TEACHER))
    assert status == 200
    await adapter.idle()
    assert len(fake.calls_to("chat.postMessage")) == 2
    [message] = fake.messages.values()
    assert message["text"].startswith("Leaderboard · week")


async def test_dm_commands_have_no_channel(adapter: SlackAdapter, fake: SlackStandIn) -> None:
    status, text = await post(adapter, slash_command("/quiz", "round", channel_id="DU0001"))
    assert status == 200 and json.loads(text)["text"].startswith("Start a round in a channel")


# -- Socket Mode -------------------------------------------------------------------------------


async def test_socket_mode_quiz_and_click_are_acked(
    fake: SlackStandIn, bot: StudyBot, settings: Settings, slack: SlackSettings
) -> None:
    adapter = SlackAdapter(bot, replace(slack, app_token=Secret(fake.app_token), signing_secret=None))
    await adapter.start()
    try:
        await fake.wait_socket_connected()
        envelope = await fake.socket_send("slash_commands", slash_payload("/quiz", response_url=fake.response_url("q")))
        ack = await fake.socket_ack(envelope)
        blocks = ack["payload"]["blocks"]
        right = correct_button(bot, blocks)

        payload = block_actions_payload(right["action_id"], right["value"], response_url=fake.response_url("c"))
        envelope = await fake.socket_send("interactive", payload)
        assert await fake.socket_ack(envelope) == {"envelope_id": envelope}
    finally:
        await adapter.close()
    assert fake.responses[0][0] == "c" and fake.responses[0][1]["text"].startswith("✅ Correct.")
    [row] = answers(settings)
    assert row["correct"] == 1
    assert all(c.token == fake.app_token for c in fake.calls_to("apps.connections.open"))


async def test_an_order_question_is_a_modal_answered_with_the_shown_numbers(
    adapter: SlackAdapter, fake: SlackStandIn, bot: StudyBot, settings: Settings
) -> None:
    """Press on through the quiz to the put-in-order question: its form opens as a modal that lists
    the steps shuffled and numbered; the numbers in the right order grade it correct."""
    order = next(q for q in next(iter(bot.library.lessons.values())).questions if q.kind == "order")
    blocks = (await quiz(adapter, fake))["blocks"]
    feedback_blocks: list[dict] = []
    for _ in range(6):
        opened = fake.calls_to("views.open")
        if opened and opened[-1].params["view"]["title"]["text"] == "Put in order":
            break
        if opened and len(opened) > len(fake.calls_to("chat.postEphemeral")):  # a short answer's modal
            meta = opened[-1].params["view"]["private_metadata"]
            attempt = {"answer": {"text": "I think it depends on the team."}}
            await post(adapter, view_submission("studybot_form", meta, attempt))
            feedback_blocks = fake.calls_to("chat.postEphemeral")[-1].params["blocks"]
        else:
            assert await click(adapter, fake, buttons(blocks)[0]) == 200
            feedback_blocks = fake.responses[-1][1]["blocks"]
        [next_button] = [b for b in buttons(feedback_blocks) if b["text"]["text"] == "Next question"]
        built = block_actions(next_button["action_id"], next_button["value"], trigger_id=fake.new_trigger_id(),
                              response_url=fake.response_url("next"))
        assert (await post(adapter, built))[0] == 200
        if fake.responses and fake.responses[-1][0] == "next":
            blocks = fake.responses[-1][1]["blocks"]
    view = fake.calls_to("views.open")[-1].params["view"]
    assert view["title"]["text"] == "Put in order"
    shown = view["blocks"][0]["text"]["text"]
    assert all(step in shown for step in order.steps) and "such as `4 3 2 1`" in shown
    numbers = order_numbers(order, shown)
    assert numbers != "1 2 3 4"  # the steps are not shown in their right order
    status, _ = await post(adapter, view_submission("studybot_form", view["private_metadata"],
                                                    {"answer": {"text": numbers}}))
    assert status == 200
    feedback = fake.calls_to("chat.postEphemeral")[-1].params["text"]
    assert feedback.startswith("✅ Right order.") and f"The right order: {numbers}" in feedback
    assert [r["correct"] for r in answers(settings) if r["question_id"] == order.id] == [1]


async def test_an_instructor_of_one_workspace_is_a_learner_in_another(
    fake: SlackStandIn, bot: StudyBot, settings: Settings, slack: SlackSettings
) -> None:
    """Instructors are listed per cohort: one workspace's instructor cannot export another's results."""
    only_t1 = Instructors(per_cohort={Cohort("slack", "T0001"): frozenset({"U0T"})})
    bot.ctx.settings = replace(settings, instructors=only_t1)
    adapter = SlackAdapter(bot, slack)
    await adapter.start()
    try:
        status, text = await post(adapter, slash_command("/results", "cohort", user_id="U0T", team_id="T0002"))
        assert (status, json.loads(text)["text"]) == (
            200, "Only instructors can export the cohort's results. Ask your instructor if you need it.")
        assert "check your direct messages" in await command(adapter, fake, "/results", "cohort", user_id="U0T",
                                                             team_id="T0001")
    finally:
        await adapter.close()


# -- classroom flow: rounds of N with their own seconds, stop, "I don't know", retries, /lessons ----------------


def posted_texts(fake: SlackStandIn) -> list[str]:
    return [c.params["text"] for c in fake.calls_to("chat.postMessage")]


async def test_quiz_round_of_two_with_seconds_and_i_dont_know(
    adapter: SlackAdapter, fake: SlackStandIn, bot: StudyBot, settings: Settings, clock: FixedClock
) -> None:
    """`/quiz round core-basics 2 seconds:30`: two questions of 30 s each; "I don't know" pressed on
    the public question is recorded (wrong, no points) and answered ephemerally with the explanation."""
    started = await command(adapter, fake, "/quiz", "round core-basics 2 seconds:30")
    assert started.startswith("Round started: 2 questions, 30 s each.")
    [first] = posted_texts(fake)
    assert first.startswith("Round · question 1 of 2 · 30 s")
    [((channel, ts), message)] = fake.messages.items()
    [dont_know] = [b for b in buttons(message["blocks"]) if b["text"]["text"] == "I don't know"]
    assert await click(adapter, fake, dont_know, "U0002", message_ts=ts) == 200
    [(_, feedback)] = [r for r in fake.responses if r[0] == "click-U0002"]
    assert feedback["response_type"] == "ephemeral" and feedback.get("replace_original") is False
    assert "counts as your first answer, with no points" in feedback["text"]
    assert first_question(bot).explanation in feedback["text"]
    [row] = answers(settings, "U0002")
    assert (row["question_id"], row["mode"], row["correct"], row["points"]) == ("core-q1", "round", 0, 0)

    clock.advance(29)
    assert await fire_due(bot, {"slack": adapter}) == 0  # its own 30 s, not the configured 60
    clock.advance(2)
    assert await fire_due(bot, {"slack": adapter}) == 1
    [update] = fake.calls_to("chat.update")
    assert update.params["ts"] == ts and "1 answered, 0 correct." in update.params["text"]
    assert posted_texts(fake)[-1].startswith("Round · question 2 of 2 · 30 s")
    clock.advance(31)
    assert await fire_due(bot, {"slack": adapter}) == 1
    texts = posted_texts(fake)
    assert len(texts) == 3 and texts[-1].startswith("Round over.")  # no third question
    assert await fire_due(bot, {"slack": adapter}) == 0


async def test_quiz_round_stop_by_its_starter_only(
    adapter: SlackAdapter, fake: SlackStandIn, bot: StudyBot, settings: Settings
) -> None:
    assert (await command(adapter, fake, "/quiz", "round 3")).startswith("Round started: 3 questions")
    assert await command(adapter, fake, "/quiz", "round stop", user_id="U0002") == (
        "Only the person who started the round (or an instructor) can stop it.")
    assert await command(adapter, fake, "/quiz", "round stop") == "Round stopped: the summary follows in the channel."
    assert await fire_due(bot, {"slack": adapter}) == 1  # at once, not when the question's time is up
    [update] = fake.calls_to("chat.update")
    assert "0 answered, 0 correct." in update.params["text"]
    texts = posted_texts(fake)
    assert len(texts) == 2 and texts[-1].startswith("Round over after 1 of 3 questions.\nNobody answered this time.")
    assert await command(adapter, fake, "/quiz", "round stop") == "No round is running in this channel."
    assert answers(settings) == []


async def test_teachback_by_id_try_this_one_again_and_lessons(adapter: SlackAdapter, fake: SlackStandIn) -> None:
    """`/teachback core-tb2` opens that prompt's modal; a miss is answered ephemerally with "Try this
    one again", whose click opens the same prompt in a fresh modal; /lessons then counts it."""
    assert await command(adapter, fake, "/lessons") == (
        "Lessons\n• core-basics: Core basics · not started\n  teach-backs passed 0 of 2: core-tb1, core-tb2")
    prompt = "Explain what MFU tells you about a training run."
    status, _ = await post(adapter, slash_command("/teachback", "core-tb2", trigger_id=fake.new_trigger_id()))
    assert status == 200
    [opened] = fake.calls_to("views.open")
    assert prompt in json.dumps(opened.params["view"]["blocks"])
    meta = opened.params["view"]["private_metadata"]
    wrong = {"answer": {"text": "It is about buying more GPUs for the team, I think."}}
    await post(adapter, view_submission("studybot_form", meta, wrong))
    [missed] = fake.calls_to("chat.postEphemeral")
    assert missed.params["user"] == "U0001" and missed.params["text"].startswith("You covered 0 of 1 key point")
    [again] = [b for b in buttons(missed.params["blocks"]) if b["text"]["text"] == "Try this one again"]

    trigger = fake.new_trigger_id()
    built = block_actions(again["action_id"], again["value"], trigger_id=trigger, response_url=fake.response_url("tb"))
    assert (await post(adapter, built))[0] == 200
    [_, reopened] = fake.calls_to("views.open")
    assert reopened.params["trigger_id"] == trigger
    assert prompt in json.dumps(reopened.params["view"]["blocks"])
    assert reopened.params["view"]["private_metadata"] != meta  # a fresh form
    await post(adapter, view_submission("studybot_form", reopened.params["view"]["private_metadata"],
                                        {"answer": {"text": "MFU is the observed throughput over peak."}}))
    passed = fake.calls_to("chat.postEphemeral")[-1].params
    assert passed["text"].startswith("You covered 1 of 1 key point.") and "That earns 1 point." in passed["text"]
    assert await command(adapter, fake, "/lessons") == (
        "Lessons\n• core-basics: Core basics · 0/4 answered, 0 right\n"
        "  teach-backs passed 1 of 2: core-tb1, core-tb2 ✓")
