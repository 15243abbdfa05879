"""Property tests: whatever arrives, `StudyBot.handle` answers with neutral replies within the limits
and records nothing for invalid input; whatever Reply the core builds, each adapter renders it within
its platform's limits.

One bot (real SQLite in tmp_path, fixed clock) serves every example of a test: the tests are plain
functions that drive the bot's coroutines on an event loop the fixture owns.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from support import CONTENT, channel, learner

from adapters import discord_payloads, slack_payloads
from bot.core.clock import FixedClock
from bot.core.config import Settings
from bot.core.messages import (
    MAX_CHOICE_LABEL,
    MAX_CHOICES,
    MAX_CHOICES_PER_ROW,
    MAX_FORM_TITLE,
    MAX_INPUT_LABEL,
    MAX_TEXT,
    Actor,
    Audience,
    Choice,
    ChoiceMade,
    Command,
    Event,
    Form,
    Place,
    Reply,
    TextSubmitted,
)
from bot.runtime.app import StudyBot

# Examples per property (module constants so that docs/reliability.md can cite them).
COMMAND_EXAMPLES = 500
CHOICE_EXAMPLES = 500
FORM_EXAMPLES = 300
SLACK_RENDER_EXAMPLES = 500
DISCORD_RENDER_EXAMPLES = 500

# Platform limits the renderers must respect.
SLACK = {"section_text": 3000, "button_text": 75, "action_id": 255, "value": 2000, "actions_elements": 25,
         "our_row": MAX_CHOICES_PER_ROW, "modal_title": 24, "input_label": MAX_INPUT_LABEL,
         "private_metadata": 3000, "blocks": 50}
DISCORD = {"content": 2000, "rows": 5, "row_buttons": 5, "label": 80, "custom_id": 100, "modal_title": 45,
           "input_label": 45, "placeholder": 100, "text_display": 4000}

BUG_REPLY = re.compile(r"reference [0-9a-f]+|Something went wrong on our side")

RELIABILITY = [
    ("StudyBot.handle with random command names and argument text (unicode, emoji, RTL, control "
     "characters, 100 KB strings, SQL-looking text, unknown commands), random actors and places",
     COMMAND_EXAMPLES, "no exception, no bug reply; every reply within the neutral limits and rendered within "
     "Slack's and Discord's limits; no answer or teach-back row written"),
    ("StudyBot.handle with random and stale choice tokens (random text, answered prompts with random suffixes, "
     "fresh prompts with invalid suffixes, prompts of another cohort, another learner's prompts, DM actors)",
     CHOICE_EXAMPLES, "no exception, no bug reply; replies within the limits; answers and teach-backs unchanged"),
    ("StudyBot.handle with random form tokens and texts (random tokens, another cohort's form, empty, "
     "whitespace and over-long answers to a real form, random answers to a real form)",
     FORM_EXAMPLES, "no exception, no bug reply; replies within the limits; nothing recorded for an invalid "
     "token or an empty/over-long text, at most one teach-back for a valid one"),
    ("slack_payloads.blocks_for/message_for/modal_for with random Replies and Forms (text up to 5,000 characters with "
     "<>&* and markdown, up to 25 choices, random labels and tokens)",
     SLACK_RENDER_EXAMPLES, "section text <= 3000, button text <= 75, action_id <= 255, value <= 2000, "
     "<= 5 buttons per actions block, modal title <= 24, input label <= 45, private_metadata <= 3000"),
    ("discord_payloads.render/message_kwargs/AnswerModal with random Replies and Forms",
     DISCORD_RENDER_EXAMPLES, "content <= 2000, <= 5 rows of <= 5 buttons, label <= 80, custom_id <= 100 "
     "(longer tokens left out), modal title <= 45, input label <= 45, placeholder <= 100"),
]



def examples(n: int) -> settings:
    """Hypothesis settings for one property: n examples, no deadline, no example database on disk."""
    return settings(max_examples=n, deadline=None, database=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture])

# ------------------------------------------------------------ the bot, on a loop this module owns


class World:
    """A running bot and the real tokens made while setting it up (a plain class: the reliability doc
    loads this module without registering it, which a dataclass would need)."""

    def __init__(self, loop: asyncio.AbstractEventLoop, bot: StudyBot) -> None:
        self.loop, self.bot = loop, bot
        self.stale: list[str] = []  # an answered question's choice tokens (T1, U1)
        self.fresh: list[str] = []  # prompt ids of an unanswered question (T1, U1)
        self.other_cohort: list[str] = []  # choice tokens made in cohort T2
        self.form_t1 = ""  # U1's teach-back form in T1
        self.form_t2 = ""  # a teach-back form made in cohort T2

    def run(self, event: Event) -> list[Reply]:
        return self.loop.run_until_complete(self.bot.handle(event))

    def counts(self) -> tuple[int, int]:
        async def both() -> tuple[int, int]:
            return await self.bot.store.count("answers"), await self.bot.store.count("teachbacks")

        return self.loop.run_until_complete(both())


def _tokens(replies: list[Reply]) -> list[str]:
    return [c.token for r in replies for c in r.choices]


def _form(replies: list[Reply]) -> str:
    return next(r.form.token for r in replies if r.form is not None)


@pytest.fixture
def world(tmp_path: Path) -> Iterator[World]:
    loop = asyncio.new_event_loop()
    clock = FixedClock("2026-11-30T09:00:00+00:00")
    config = Settings(db_path=tmp_path / "studybot.db", content_dir=CONTENT, results_dir=tmp_path / "results",
                      round_seconds=60)
    bot = loop.run_until_complete(StudyBot.start(config, clock))
    w = World(loop, bot)
    u1, t1, t2 = learner("U1"), channel("T1"), channel("T2")
    w.stale = _tokens(w.run(Command("quiz", "", u1, t1)))
    feedback = w.run(ChoiceMade(w.stale[0], u1, t1))  # answered: every token of it is now stale
    assert w.counts() == (1, 0), feedback
    nxt = [c.token for r in feedback for c in r.choices if c.label == "Next question"]
    w.fresh = [t.partition(".")[0] for t in _tokens(w.run(ChoiceMade(nxt[0], u1, t1)))]
    w.other_cohort = _tokens(w.run(Command("quiz", "", learner("U7", cohort="T2"), t2)))
    w.form_t1 = _form(w.run(Command("teachback", "", u1, t1)))
    w.form_t2 = _form(w.run(Command("teachback", "", learner("U7", cohort="T2"), t2)))
    assert w.stale and w.fresh and w.other_cohort and w.form_t1 and w.form_t2
    yield w
    loop.run_until_complete(bot.close())
    loop.close()


# ------------------------------------------------------------ limit checks (shared by every property)


def check_neutral(reply: object) -> None:
    assert isinstance(reply, Reply), reply
    assert not BUG_REPLY.search(reply.text), reply.text
    assert len(reply.text) <= MAX_TEXT
    assert len(reply.choices) <= MAX_CHOICES
    assert all(len(row) <= MAX_CHOICES_PER_ROW for row in reply.rows())
    assert all(0 < len(c.label) <= MAX_CHOICE_LABEL for c in reply.choices)
    if reply.form is not None:
        assert len(reply.form.title) <= MAX_FORM_TITLE and len(reply.form.label) <= MAX_INPUT_LABEL
        assert len(reply.form.prompt) <= MAX_TEXT


def check_slack(reply: Reply) -> None:
    message = slack_payloads.message_for(reply)
    blocks = message["blocks"]
    assert len(blocks) <= SLACK["blocks"]
    for block in blocks:
        if block["type"] == "section":
            assert 0 < len(block["text"]["text"]) <= SLACK["section_text"] or not reply.text
        else:
            assert block["type"] == "actions"
            assert 0 < len(block["elements"]) <= min(SLACK["our_row"], SLACK["actions_elements"])
            for button in block["elements"]:
                assert 0 < len(button["text"]["text"]) <= SLACK["button_text"]
                assert len(button["action_id"]) <= SLACK["action_id"]
                assert len(button["value"]) <= SLACK["value"]
    ids = [b["action_id"] for block in blocks if block["type"] == "actions" for b in block["elements"]]
    assert len(ids) == len(set(ids)) == len(reply.choices)
    if reply.form is not None:
        check_slack_modal(reply.form)


def check_slack_modal(form: Form, channel_id: str | None = "C0001") -> None:
    view = slack_payloads.modal_for(form, channel_id)
    assert len(view["title"]["text"]) <= SLACK["modal_title"]
    assert len(view["private_metadata"]) <= SLACK["private_metadata"]
    assert json.loads(view["private_metadata"])["token"] == form.token
    section, answer = view["blocks"]
    assert len(section["text"]["text"]) <= SLACK["section_text"]
    assert len(answer["label"]["text"]) <= SLACK["input_label"]
    assert 0 < answer["element"]["max_length"] <= slack_payloads.MAX_SLACK_INPUT


def check_discord(reply: Reply) -> None:
    content, view = discord_payloads.render(reply)
    assert len(content) <= DISCORD["content"]
    if view is None:
        assert not reply.choices
    else:
        rows = view.to_components()
        assert len(rows) <= DISCORD["rows"]
        kept = [c for c in reply.choices if len(discord_payloads.BUTTON_PREFIX + c.token) <= DISCORD["custom_id"]]
        buttons = [b for row in rows for b in row["components"]]
        assert len(buttons) == len(kept)
        for row in rows:
            assert 0 < len(row["components"]) <= DISCORD["row_buttons"]
            for b in row["components"]:
                assert 0 < len(b["label"]) <= DISCORD["label"]
                assert len(b["custom_id"]) <= DISCORD["custom_id"]
    if reply.form is not None:
        check_discord_modal(reply.form)


def check_discord_modal(form: Form) -> None:
    modal = discord_payloads.AnswerModal(form).to_dict()
    assert len(modal["title"]) <= DISCORD["modal_title"]
    assert len(modal["custom_id"]) <= DISCORD["custom_id"]
    display, label = modal["components"]
    assert len(display["content"]) <= DISCORD["text_display"]
    assert len(label["label"]) <= DISCORD["input_label"]
    assert len(label["component"].get("placeholder", "")) <= DISCORD["placeholder"]


def check_all(replies: object) -> None:
    assert isinstance(replies, list)
    for reply in replies:
        check_neutral(reply)
        check_slack(reply)
        check_discord(reply)


# ------------------------------------------------------------ strategies

COMMANDS = ["quiz", "glossary", "teachback", "review", "progress", "leaderboard", "results", "forget", "help"]
SQL = ["'; DROP TABLE answers; --", "1 OR 1=1", "\" OR \"\"=\"", "Robert'); DROP TABLE learners;--",
       "%' UNION SELECT * FROM prompts --", "\\x00", "${jndi:ldap://x}", "{{7*7}}", "<script>alert(1)</script>"]
RTL_EMOJI = "שלום עולם مرحبا \u202e\u202d\u200f\u200e🙂👩‍👩‍👧‍👦🏳️‍🌈 \U0001f4a5 ｆｕｌｌ ²³ ١٢٣ ǅ ß İ"
CONTROL = "".join(map(chr, range(32))) + "\x7f\u0085\u2028\u2029\ufeff\ufffe"
HUGE = ["x" * 100_000, "é🙂" * 50_000, ("quiz " * 20_000), ("\u202e" + "a" * 99_999), ("&<>*" * 25_000)]

texts = st.one_of(
    st.text(max_size=200),
    st.text(alphabet=RTL_EMOJI + CONTROL + " ./-_:", max_size=200),
    st.sampled_from(SQL),
    st.sampled_from(HUGE),
    st.builds(" ".join, st.lists(st.sampled_from(["round", "post", "week", "all", "me", "here", "cohort", "on",
                                                   "off", "remind", "meta-llm-scale", "2026-W48", "FSDP", "mfu",
                                                   "9999-W99", "-1", "0"]), max_size=4)),
)
names = st.one_of(
    st.sampled_from(COMMANDS),
    st.builds(lambda n, pre: pre + n.upper(), st.sampled_from(COMMANDS), st.sampled_from(["", "/", "//"])),
    st.text(max_size=60),
    st.sampled_from(SQL + HUGE[:2]),
)


@st.composite
def actors(draw: st.DrawFn, users: tuple[str, ...] = ("U1", "U2", "U7", "U9")) -> tuple[Actor, Place]:
    """Someone, somewhere: a learner or an instructor, in T1, T2 or a DM ("" cohort), on either platform."""
    user = draw(st.sampled_from(users))
    cohort = draw(st.sampled_from(["T1", "T1", "T2", ""]))
    platform = draw(st.sampled_from(["slack", "slack", "discord"]))
    teacher = draw(st.booleans())
    channel_id = draw(st.sampled_from(["C1", None]))
    return learner(user, cohort=cohort, platform=platform, teacher=teacher), Place(platform, cohort, channel_id)


# Suffixes that look like a choice index but are none: other scripts' digits, int()'s 4,300-digit limit.
ODD_DIGITS = ["²", "١", "٣", "½", "-1", " 1", "1 ", "+1", "0x1", "1_0", "9" * 5000, "0" * 5000 + "1"]
INVALID_SUFFIX = st.one_of(
    # not a suffix a question issues: a choice's index, f (open the form), n (Next), h, 1, ? (I don't know)
    st.text(max_size=20).filter(lambda s: not (s.isascii() and s.isdigit()) and s not in "fnh1?"),
    st.sampled_from(ODD_DIGITS),
)


@st.composite
def choice_tokens(draw: st.DrawFn, w: World) -> str:
    kind = draw(st.sampled_from(["random", "stale", "fresh", "other", "glued"]))
    if kind == "random":
        return draw(st.one_of(st.text(max_size=120), st.sampled_from(SQL + HUGE[:1] + ["", ".", "..", ".0"])))
    if kind == "stale":
        base = draw(st.sampled_from(w.stale)).partition(".")[0]
        return base + "." + draw(st.one_of(st.text(max_size=20), st.sampled_from(ODD_DIGITS)))
    if kind == "fresh":
        return draw(st.sampled_from(w.fresh)) + "." + draw(INVALID_SUFFIX)
    if kind == "other":
        return draw(st.sampled_from(w.other_cohort))
    return draw(st.sampled_from(w.stale + w.fresh)) + draw(st.text(min_size=1, max_size=20))


# ------------------------------------------------------------ the core


@examples(COMMAND_EXAMPLES)
@given(data=st.data())
def test_any_command_gets_a_reply_within_the_limits(world: World, data: st.DataObject) -> None:
    actor, place = data.draw(actors())
    event = Command(data.draw(names), data.draw(texts), actor, place)
    before = world.counts()
    check_all(world.run(event))
    assert world.counts() == before


@examples(CHOICE_EXAMPLES)
@given(data=st.data())
def test_any_choice_token_gets_a_reply_and_records_nothing(world: World, data: st.DataObject) -> None:
    token = data.draw(choice_tokens(world))
    u1 = data.draw(st.booleans())
    # U7 owns the T2 prompts (a click there would be valid); everyone else may be anywhere.
    actor, place = (learner("U1"), channel("T1")) if u1 else data.draw(actors(("U1", "U2", "U9")))
    before = world.counts()
    check_all(world.run(ChoiceMade(token, actor, place)))
    assert world.counts() == before


@examples(FORM_EXAMPLES)
@given(data=st.data())
def test_any_form_submission_gets_a_reply_and_invalid_ones_record_nothing(world: World, data: st.DataObject) -> None:
    kind = data.draw(st.sampled_from(["random", "other", "empty", "long", "valid"]))
    token, text = world.form_t1, data.draw(texts)
    if kind == "random":
        token = data.draw(st.one_of(st.text(max_size=60), st.sampled_from(SQL + [world.form_t1 + "x", ""])))
    elif kind == "other":
        token = world.form_t2
    elif kind == "empty":
        text = data.draw(st.text(alphabet=" \t\n\r\u3000\u00a0", max_size=50))
    elif kind == "long":
        text = data.draw(st.sampled_from(HUGE)) + data.draw(st.text(max_size=10))
    before = world.counts()
    check_all(world.run(TextSubmitted(token, text, learner("U1"), channel("T1"))))
    answers, teachbacks = world.counts()
    if kind == "valid" and text.strip() and len(text) <= 4000:
        assert answers == before[0] and teachbacks - before[1] in (0, 1)
    else:
        assert (answers, teachbacks) == before


# ------------------------------------------------------------ the adapters' renderers

SPECIAL = "<>&*_~`|#@!:\\[]()-=>" \
          "**bold** __u__ ~~s~~ ||spoiler|| <@U1> <!channel> &amp; `code` ```block``` # h\n> q"
render_texts = st.one_of(
    st.text(max_size=5000),
    st.text(alphabet=SPECIAL + "🙂שلا", max_size=5000),
    st.builds(lambda c, n: c * n, st.sampled_from(["&", "<", ">", "**", "*", "&<>", "`"]), st.integers(0, 5000)),
)
# The core's tokens are 12 URL-safe characters plus a short suffix; these go far beyond, up to 120 characters
# of any text for buttons (Discord leaves out a button whose custom_id would pass 100) and up to 93 for forms
# ("sbform:" + 93 = 100). A longer form token is refused (test at the end).
tokens = st.one_of(st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789._-", min_size=1, max_size=40),
                   st.text(min_size=1, max_size=120))
form_tokens = st.text(min_size=1, max_size=100 - len(discord_payloads.FORM_PREFIX))
choices = st.builds(Choice, st.text(max_size=200), tokens)
forms = st.builds(Form, form_tokens, st.text(min_size=1, max_size=100), render_texts,
                  st.text(min_size=1, max_size=100), st.integers(1, 10_000))
replies = st.builds(Reply, render_texts, st.sampled_from(list(Audience)),
                    st.lists(choices, max_size=MAX_CHOICES + 5).map(tuple), st.none() | forms)


@examples(SLACK_RENDER_EXAMPLES)
@example(reply=Reply("&" * 5000, choices=(Choice("<&>" * 30, "t" * 120),) * 25,
                     form=Form("t" * 93, "&" * 40, "<" * 5000, "&" * 100)), channel_id="C0001")
@given(reply=replies, channel_id=st.sampled_from(["C0001", None, "D0001"]))
def test_slack_renders_any_reply_within_slacks_limits(reply: Reply, channel_id: str | None) -> None:
    check_slack(reply)
    if reply.form is not None:
        check_slack_modal(reply.form, channel_id)


@examples(DISCORD_RENDER_EXAMPLES)
@example(reply=Reply("**" * 5000, choices=tuple(Choice("x" * 200, f"{i}" * 98) for i in range(30)),
                     form=Form("t" * 93, "x" * 100, "y" * 5000, "z" * 100)))
@given(reply=replies)
def test_discord_renders_any_reply_within_discords_limits(reply: Reply) -> None:
    check_discord(reply)
    kwargs = discord_payloads.message_kwargs(reply)
    assert len(kwargs["content"]) <= DISCORD["content"]


# ------------------------------------------------------------ latent gaps (unreachable with the core's tokens)


def test_discord_modal_refuses_a_form_token_too_long_for_a_custom_id() -> None:
    check_discord_modal(Form("t" * 93, "title", "prompt"))
    with pytest.raises(ValueError, match="too long"):
        discord_payloads.AnswerModal(Form("t" * 94, "title", "prompt"))


def test_discord_button_with_a_line_break_token() -> None:
    check_discord(Reply("x", choices=(Choice("a", "\nb"),)))
