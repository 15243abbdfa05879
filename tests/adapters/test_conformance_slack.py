"""Slack conformance: every published Slack payload (see the samples' SOURCES.md), adapted at run
time as SOURCES.md describes, driven through slack-bolt against the stand-in, is either handled
correctly or refused on purpose; EXPECTED says which, sample by sample.

"handled" means the effect the case names happened (the reply, the modal, the recorded answer
or explanation); "refused" means acknowledged (or a 400), nothing recorded, no bug reply, no
error logged. Adaptations: the command name, the action_id/value and the modal's callback_id,
private_metadata and input ids the bot issued, and response_url/trigger_id pointed at the stand-in.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest
from samples import folder, payload, sample_ids
from worst_case import worst_case_pack

from adapters.slack_app import SlackAdapter
from adapters.slack_payloads import FORM_BLOCK, FORM_CALLBACK, FORM_INPUT
from adapters.slack_settings import SlackSettings
from bot.core.clock import FixedClock
from bot.core.config import Secret, Settings
from bot.runtime.app import StudyBot
from standins.slack_standin import FORM, SlackStandIn, post_signed, sign, slash_command

ROOT = folder()
BUG = "Something went wrong on our side"

# sample or variant id -> what the adapter must do with it
EXPECTED: dict[str, str] = {
    "S01": "handled", "S02": "handled", "S03": "handled", "S04": "handled", "S04r": "handled", "S05": "handled",
    "S05t": "handled", "S06": "handled", "S07": "refused", "S07f": "handled", "S08": "handled", "S08b": "refused",
    "S09": "handled", "S10": "handled", "S11": "handled", "S12": "handled", "S13": "handled", "S14": "handled",
    "S14s": "refused", "S15": "handled", "S16": "handled", "S17": "refused", "S17s": "refused", "S18": "refused",
    "S19": "handled", "S20": "refused", "S21": "refused", "S21i": "handled", "S22": "refused", "S23": "refused",
    "S23i": "handled", "S24": "handled", "S35": "refused",
    "S25": "refused", "S25c": "refused", "S26": "refused", "S27": "refused", "S36": "refused",
    "S28": "refused", "S28p": "refused", "S29": "refused", "S30": "refused", "S31": "refused", "S32": "refused",
    "S33": "refused", "S34": "refused",
}


@dataclass
class Seen:
    """What one case did: the HTTP status (or 200 for an acknowledged envelope), every text the bot
    sent, how many answers and explanations it recorded and modals it opened, errors it logged."""

    status: int = 0
    texts: list[str] = field(default_factory=list)
    answers: int = 0
    teachbacks: int = 0
    modals: int = 0
    posts: list[dict[str, Any]] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


class World:
    """One bot, an HTTP-mode adapter and a Socket Mode adapter, on one stand-in."""

    def __init__(self, fake: SlackStandIn, bot: StudyBot, http: SlackAdapter, socket: SlackAdapter) -> None:
        self.fake, self.bot, self.http, self.socket = fake, bot, http, socket
        self.n = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.http.port}/slack/events"

    def response_url(self) -> str:
        self.n += 1
        return self.fake.response_url(f"r{self.n}")

    async def post_form(self, fields: dict[str, Any]) -> tuple[int, str]:
        body = urlencode({k: v if isinstance(v, str) else json.dumps(v) for k, v in fields.items()})
        answered = await post_signed(self.url, body, {"Content-Type": FORM, **sign(body)})
        await self.http.idle()
        return answered

    async def issue_button(self, team: str, user: str, channel: str = "C0001") -> str:
        """A choice token the bot issued to `user` of `team` (the first button of /quiz)."""
        status, text = await post_signed(self.url, *slash_command("/quiz", team_id=team, user_id=user,
                                                                  channel_id=channel))
        assert status == 200, text
        return json.loads(text)["blocks"][1]["elements"][0]["value"]

    async def issue_form(self, team: str, user: str) -> str:
        """The private_metadata of a teach-back modal the bot opened for `user` of `team`."""
        before = len(self.fake.calls_to("views.open"))
        status, _ = await post_signed(self.url, *slash_command("/teachback", team_id=team, user_id=user,
                                                               trigger_id=self.fake.new_trigger_id()))
        opened = self.fake.calls_to("views.open")
        assert status == 200 and len(opened) == before + 1
        return opened[-1].params["view"]["private_metadata"]

    async def counts(self) -> tuple[int, int]:
        return await self.bot.store.count("answers"), await self.bot.store.count("teachbacks")


def sent_texts(fake: SlackStandIn, since: int, responses_since: int) -> list[str]:
    texts = [str(c.params.get("text", "")) for c in fake.calls[since:]
             if c.method in ("chat.postMessage", "chat.postEphemeral", "chat.update")]
    return texts + [str(r.get("text", "")) for _, r in fake.responses[responses_since:]]


async def run_case(world: World, drive: Callable[[], Awaitable[tuple[int, str]]],
                   caplog: pytest.LogCaptureFixture) -> Seen:
    fake = world.fake
    calls, responses = len(fake.calls), len(fake.responses)
    answers, teachbacks = await world.counts()
    caplog.clear()
    try:
        status, body = await drive()
    except Exception as exc:  # the case broke the adapter (or went unanswered): say so, go on
        return Seen(status=-1, errors=[f"{type(exc).__name__}: {exc}"])
    await world.http.idle()
    await world.socket.idle()
    seen = Seen(status=status)
    if body:
        try:
            seen.texts.append(str(json.loads(body).get("text", "")))
        except (ValueError, AttributeError):
            seen.texts.append(body)
    seen.texts += sent_texts(fake, calls, responses)
    after = await world.counts()
    seen.answers, seen.teachbacks = after[0] - answers, after[1] - teachbacks
    seen.modals = sum(1 for c in fake.calls[calls:] if c.method == "views.open")
    seen.posts = [c.params for c in fake.calls[calls:] if c.method == "chat.postMessage"]
    seen.errors = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
    return seen


def outcome(seen: Seen, handled: Callable[[Seen], bool]) -> str:
    if seen.errors or seen.status >= 500 or any(BUG in t for t in seen.texts):
        return f"broken (HTTP {seen.status}; {(seen.errors or seen.texts)[:1]})"
    if handled(seen):
        return "handled"
    if seen.status in (200, 400) and seen.answers == seen.teachbacks == 0:
        return "refused"
    return f"unexpected (HTTP {seen.status}, {seen.answers} answers, texts {seen.texts[:2]})"


def said(text: str) -> Callable[[Seen], bool]:
    return lambda seen: seen.status == 200 and any(text in t for t in seen.texts)


def recorded_answer(seen: Seen) -> bool:
    return seen.answers == 1 and any("Correct" in t or "Not quite" in t for t in seen.texts)


def recorded_teachback(seen: Seen) -> bool:
    return seen.teachbacks == 1 and any("key point" in t for t in seen.texts)


def graded_or_too_short(seen: Seen) -> bool:
    """A published modal's text ("test") is one word: asked for a sentence, nothing recorded, or graded."""
    too_short = seen.teachbacks == 0 and any("too short to go on" in t for t in seen.texts)
    return too_short or recorded_teachback(seen)


# ------------------------------------------------------------ adaptations (SOURCES.md)


def slash(world: World, sample_id: str, command: str, text: str | None = None, **changes: str) -> dict[str, Any]:
    fields = payload(ROOT, sample_id)
    fields = fields.get("payload", fields)  # a Socket Mode envelope carries the fields in `payload`
    fields.update(command=command, **changes)
    if text is not None:
        fields["text"] = text
    if fields.get("response_url"):
        fields["response_url"] = world.response_url()
    if fields.get("trigger_id"):
        fields["trigger_id"] = world.fake.new_trigger_id()
    return fields


def click(world: World, body: dict[str, Any], token: str) -> dict[str, Any]:
    """Aim the sample's first action at a button the bot issued (for a select, its action_id only:
    a select carries no `value`)."""
    action = body["actions"][0]
    action["action_id"] = "studybot:0"
    if action.get("type") in (None, "", "button"):
        action["value"] = token
    if body.get("response_url"):
        body["response_url"] = world.response_url()
    if body.get("trigger_id"):
        body["trigger_id"] = world.fake.new_trigger_id()
    return body


def submission(body: dict[str, Any], metadata: str) -> dict[str, Any]:
    """Aim the sample's modal at a form the bot opened: callback_id, private_metadata, and its
    first plain_text_input under the input ids the bot gives it."""
    view = body["view"]
    view["callback_id"] = FORM_CALLBACK
    view["private_metadata"] = metadata
    values = (view.get("state") or {}).get("values")
    if isinstance(values, dict):
        inputs = [(b, a) for b, actions in values.items() for a, v in actions.items()
                  if v.get("type") == "plain_text_input"]
        if inputs:
            block, action = inputs[0]
            values[FORM_BLOCK] = {FORM_INPUT: values[block].pop(action)}
    return body


# ------------------------------------------------------------ the cases


def slack_cases(world: World) -> dict[str, Callable[[], Awaitable[tuple[int, str]]]]:
    w = world

    def form(sample_id: str, command: str, text: str | None = None,
             **changes: str) -> Callable[[], Awaitable[tuple[int, str]]]:
        return lambda: w.post_form(slash(w, sample_id, command, text, **changes))

    def interaction(build: Callable[[], Awaitable[dict[str, Any]]]) -> Callable[[], Awaitable[tuple[int, str]]]:
        async def go() -> tuple[int, str]:
            return await w.post_form({"payload": await build()})
        return go

    def button(sample_id: str, team: str, user: str,
               channel: str = "C0001") -> Callable[[], Awaitable[tuple[int, str]]]:
        async def build() -> dict[str, Any]:
            return click(w, payload(ROOT, sample_id), await w.issue_button(team, user, channel))
        return interaction(build)

    def modal(sample_id: str, team: str, user: str) -> Callable[[], Awaitable[tuple[int, str]]]:
        async def build() -> dict[str, Any]:
            return submission(payload(ROOT, sample_id), await w.issue_form(team, user))
        return interaction(build)

    def as_published(sample_id: str, **changes: Any) -> Callable[[], Awaitable[tuple[int, str]]]:
        def build() -> dict[str, Any]:
            body = payload(ROOT, sample_id)
            body.update(changes)
            if body.get("response_url"):
                body["response_url"] = w.response_url()
            return body
        return lambda: w.post_form({"payload": build()})

    def envelope(sample_id: str, inner: Callable[[dict[str, Any]], Awaitable[dict[str, Any]]] | None = None,
                 ) -> Callable[[], Awaitable[tuple[int, str]]]:
        async def go() -> tuple[int, str]:
            env = payload(ROOT, sample_id)
            body = await inner(env["payload"]) if inner else env["payload"]
            sent = await w.fake.socket_send(env["type"], body,
                                            accepts_response_payload=env.get("accepts_response_payload"))
            ack = await w.fake.socket_ack(sent)
            await w.socket.idle()
            return 200, json.dumps(ack.get("payload") or {})
        return go

    async def s06(body: dict[str, Any]) -> dict[str, Any]:
        return {**body, "command": "/glossary", "text": "MFU", "response_url": w.response_url(),
                "trigger_id": w.fake.new_trigger_id()}

    async def s17s(body: dict[str, Any]) -> dict[str, Any]:
        return click(w, body, await w.issue_button("T12345678", "U12345678"))

    return {
        "S01": form("S01", "/glossary"),  # /weather 94070: "No term '94070'"
        "S02": form("S02", "/glossary"),  # empty text: every term
        "S03": form("S03", "/glossary", "MFU"),  # org-wide install
        "S04": form("S04", "/glossary", "FSDP"),  # private channel G…
        "S04r": form("S04", "/quiz", "round"),  # a round in that private channel
        "S05": form("S05", "/glossary"),  # text 'Hi': "No term 'Hi'"
        "S05t": form("S05", "/teachback", ""),  # a modal opened with the sample's trigger
        "S06": envelope("S06", s06),
        "S07": form("S07", "/glossary"),  # every field empty: no workspace to belong to
        "S07f": form("S07", "/glossary", "MFU", team_id="T0001", user_id="U0007", channel_id="C0007"),
        "S08": form("S05", "/quiz", "", channel_id="DW111", channel_name="directmessage"),
        "S08b": form("S05", "/quiz", "round", channel_id="DW111", channel_name="directmessage"),
        "S09": button("S09", "T9TK3CUKW", "UA8RXUSPL", "CBR2V3XEX"),  # in a message attachment
        "S10": button("S10", "T_expected", "W111", "C111"),  # org-wide: team null, user.team_id
        "S11": button("S11", "T111", "W111", "C111"),  # ephemeral container
        "S12": button("S12", "T9TK3CUKW", "UA8RXUSPL", "CBR2V3XEX"),
        "S13": button("S13", "T111", "U111", "C111"),
        "S14": button("S14", "T111", "U111", "C111"),  # in a thread
        "S14s": button_select("S14", w),
        "S15": button("S15", "T03E94MJU", "U03E94MK0", "D065ZJQQQAE"),  # a DM, no response_url
        "S16": button("S16", "T111", "U111", "C111"),  # in an app unfurl
        "S17": envelope("S17"),  # a select in someone else's modal
        "S17s": envelope("S17", s17s),  # that select aimed at the bot's action_id: not a button
        "S18": button("S18", "T0001", "U0001"),  # every id empty: no workspace, no user
        "S19": modal("S19", "T111", "W111"),
        "S20": modal("S20", "T111", "U111"),  # state {}: an empty answer
        "S21": modal("S21", "T-other-side", "W111"),  # a form of the other side: not this modal's workspace
        "S21i": modal("S21", "T-installed-workspace", "W111"),  # Slack Connect: app_installed_team_id
        "S22": modal("S22", "T123", "U03E94MK0"),  # state.values {}: an empty answer
        "S23": modal("S23", "T_unexpected", "W111"),
        "S23i": modal("S23", "T_expected", "W111"),  # org-wide: team null, view.app_installed_team_id
        "S24": modal("S24", "T12345678", "U12345678"),  # many input types, one plain_text_input
        "S35": modal("S35", "T0001", "U0001"),  # every id empty
        "S25": as_published("S25"),
        "S25c": as_published("S25", view={**payload(ROOT, "S25")["view"], "callback_id": FORM_CALLBACK}),
        "S26": as_published("S26"),
        "S27": as_published("S27"),
        "S36": as_published("S36"),
        "S28": as_published("S28"),
        "S28p": as_published("S28", callback_id=FORM_CALLBACK),
        "S29": as_published("S29"),
        "S30": as_published("S30"),
        "S31": as_published("S31"),
        "S32": as_published("S32"),
        "S33": as_published("S33"),
        "S34": envelope("S34"),  # an Events API app_mention: nothing to do, acknowledged
    }


def button_select(sample_id: str, w: World) -> Callable[[], Awaitable[tuple[int, str]]]:
    """The sample's external_select (its second action) aimed at the bot's action_id."""
    async def go() -> tuple[int, str]:
        body = payload(ROOT, sample_id)
        token = await w.issue_button("T111", "U111", "C111")
        body["actions"] = [{"type": "external_select", "action_id": "studybot:0", "block_id": "b",
                            "selected_option": {"text": {"type": "plain_text", "text": "x"}, "value": token},
                            "action_ts": "1"}]
        body["response_url"] = w.response_url()
        return await w.post_form({"payload": body})
    return go


HANDLED: dict[str, Callable[[Seen], bool]] = {
    "S01": said("No term '94070'"), "S02": said("Glossary terms ("), "S03": said("MFU"), "S04": said("FSDP"),
    "S04r": lambda s: said("Round started")(s) and any(p.get("channel") == "G8PSS9T3V" for p in s.posts),
    "S05": said("No term 'Hi'"), "S05t": lambda s: s.status == 200 and s.modals == 1, "S06": said("MFU"),
    "S07f": said("MFU"), "S08": said("question 1 of"), "S19": graded_or_too_short,
    "S21i": graded_or_too_short, "S23i": graded_or_too_short, "S24": graded_or_too_short,
}


async def test_every_published_slack_payload_is_handled_or_refused_on_purpose(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    settings = Settings(db_path=tmp_path / "bot.db", content_dir=worst_case_pack(tmp_path),
                        results_dir=tmp_path / "results")
    async with SlackStandIn() as fake:
        bot = await StudyBot.start(settings, FixedClock("2026-11-30T09:00:00+00:00"))
        base = SlackSettings(bot_token=Secret(fake.bot_token), signing_secret=Secret(fake.signing_secret),
                             api_url=fake.api_url, http_host="127.0.0.1", http_port=0)
        http = SlackAdapter(bot, base)
        socket = SlackAdapter(bot, replace(base, app_token=Secret(fake.app_token), signing_secret=None))
        await http.start()
        await socket.start()
        try:
            world = World(fake, bot, http, socket)
            caplog.set_level(logging.INFO)
            results = {}
            for case_id, drive in slack_cases(world).items():
                check = HANDLED.get(case_id, recorded_answer)
                results[case_id] = outcome(await run_case(world, drive, caplog), check)
        finally:
            await socket.close()
            await http.close()
            await bot.close()
    assert results == EXPECTED
    published = sample_ids(ROOT, "slack")
    assert published <= set(EXPECTED), f"samples without an expected outcome: {sorted(published - set(EXPECTED))}"
