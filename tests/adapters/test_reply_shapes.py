"""Every reply shape the bot sends, with the worst-case content the checker allows, passes
slack_sdk's own Block Kit and view validators and Discord's documented limits."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from slack_sdk.models.blocks import Block
from slack_sdk.models.views import View
from worst_case import LONG_TERM, NASTY, worst_case_pack

from adapters import discord_payloads, slack_payloads
from bot.core.clock import FixedClock
from bot.core.config import Settings
from bot.core.messages import (
    CUT_NOTE,
    MAX_CHOICE_LABEL,
    MAX_CHOICES,
    MAX_FORM_TEXT,
    MAX_FORM_TITLE,
    MAX_INPUT_LABEL,
    MAX_TEXT,
    Actor,
    Audience,
    Choice,
    Command,
    Form,
    Place,
    Reply,
)
from bot.runtime.app import StudyBot

# Discord's documented limits (developers/resources/message, developers/components/reference)
DISCORD = {"content": 2000, "rows": 5, "per_row": 5, "custom_id": 100, "label": 80, "modal_title": 45,
           "input_label": 45, "placeholder": 100, "input_max": 4000, "text_display": 4000}
ENTITY = re.compile(r"&(?!amp;|lt;|gt;)")


async def core_replies(tmp_path: Path) -> list[Reply]:
    """What the core answers, on the worst-case pack: a 10-choice question, its feedback, a
    teach-back form, glossary entries (the longest term), the list of terms, /help, a round."""
    settings = Settings(db_path=tmp_path / "bot.db", content_dir=worst_case_pack(tmp_path),
                        results_dir=tmp_path / "results")
    bot = await StudyBot.start(settings, FixedClock("2026-11-30T09:00:00+00:00"))
    who = Actor("slack", "T1", "U1", NASTY.strip(), True)
    where = Place("slack", "T1", "C1")
    replies: list[Reply] = []
    try:
        for name, args in (("quiz", ""), ("teachback", ""), ("glossary", LONG_TERM), ("glossary", ""),
                           ("help", ""), ("quiz", "round"), ("progress", ""), ("leaderboard", "all")):
            replies += await bot.handle(Command(name, args, who, where))
        question = next(r for r in replies if len(r.choices) >= 10)
        from bot.core.messages import ChoiceMade

        replies += await bot.handle(ChoiceMade(question.choices[0].token, who, where))
    finally:
        await bot.close()
    return replies


def synthetic_replies() -> list[Reply]:
    """The limits themselves: the longest text of escaped characters, the most choices with the
    longest labels, the longest form."""
    longest_form = Form("f" * 40, "T" * 100, "&" * MAX_FORM_TEXT, label="L" * 100)
    return [
        Reply("&" * 5000),
        Reply("<" * (MAX_TEXT - 1) + ">", Audience.PUBLIC),
        Reply(NASTY * 60, choices=tuple(Choice("W" * 200, f"p{n}.{n}") for n in range(MAX_CHOICES + 5))),
        Reply("**bold** " * 300, form=longest_form),
    ]


@pytest.fixture
async def replies(tmp_path: Path) -> list[Reply]:
    return [*await core_replies(tmp_path), *synthetic_replies()]


async def test_the_worst_case_content_reaches_every_limit(replies: list[Reply]) -> None:
    """The shapes below are checked at the limits, not under them."""
    assert max(len(r.choices) for r in replies) == MAX_CHOICES
    assert any(len(r.choices) >= 10 and len(r.rows()) >= 2 for r in replies)  # a 10-choice question
    assert max(len(c.label) for r in replies for c in r.choices) == MAX_CHOICE_LABEL
    assert any(r.text.endswith(CUT_NOTE) for r in replies)
    forms = [r.form for r in replies if r.form]
    assert max(len(f.title) for f in forms) == MAX_FORM_TITLE and max(len(f.label) for f in forms) == MAX_INPUT_LABEL


async def test_slack_messages_and_modals_pass_slack_sdks_validators(replies: list[Reply]) -> None:
    checked = 0
    for reply in replies:
        message = slack_payloads.message_for(reply)
        for block in Block.parse_all(message["blocks"]):
            block.validate_json()
            checked += 1
        assert len(message["blocks"]) <= 50 and len(message["text"]) <= 3000
        assert not ENTITY.search(message["text"]), "an & that is not an entity: a cut escape"
        if reply.form is not None:
            modal = slack_payloads.modal_for(reply.form, "C1")
            View(**modal).validate_json()
            assert len(modal["private_metadata"]) <= 3000
            checked += 1
    assert checked >= len(replies)


async def test_discord_messages_and_modals_keep_discords_limits(replies: list[Reply]) -> None:
    for reply in replies:
        kwargs = discord_payloads.message_kwargs(reply)
        assert len(kwargs["content"]) <= DISCORD["content"]
        rows = kwargs["view"].to_components() if "view" in kwargs else []
        assert len(rows) <= DISCORD["rows"]
        for row in rows:
            assert len(row["components"]) <= DISCORD["per_row"]
            for button in row["components"]:
                assert len(button["custom_id"]) <= DISCORD["custom_id"] and len(button["label"]) <= DISCORD["label"]
        if len(reply.choices) <= DISCORD["rows"] * DISCORD["per_row"]:
            assert sum(len(r["components"]) for r in rows) == len(reply.choices)  # every choice has its button
        if reply.form is not None:
            modal = discord_payloads.AnswerModal(reply.form).to_dict()
            assert len(modal["title"]) <= DISCORD["modal_title"] and len(modal["custom_id"]) <= DISCORD["custom_id"]
            [shown, label] = modal["components"]
            assert len(shown["content"]) <= DISCORD["text_display"]
            assert len(label["label"]) <= DISCORD["input_label"]
            answer = label["component"]
            assert answer["max_length"] <= DISCORD["input_max"]
            assert len(answer.get("placeholder", "")) <= DISCORD["placeholder"]


def test_slack_text_is_cut_before_it_is_escaped() -> None:
    """1,900 ampersands escape to 9,500 characters: the cut keeps whole entities and the core's note."""
    text = Reply("&" * 5000).text
    assert text.endswith(CUT_NOTE)
    shown = slack_payloads.mrkdwn(text)
    assert len(shown) <= slack_payloads.MAX_SECTION
    assert shown.endswith(slack_payloads.escape(CUT_NOTE))
    assert set(shown[: -len(slack_payloads.escape(CUT_NOTE))].split("&amp;")) == {""}  # nothing but whole entities


def test_slack_text_from_learners_cannot_mention_anyone() -> None:
    shown = slack_payloads.mrkdwn(NASTY)
    for mention in ("<!everyone>", "<@U0001>", "<#C0001|x>", "<!subteam^S1>"):
        assert mention not in shown
    assert "&lt;!everyone&gt;" in shown
