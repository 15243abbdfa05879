"""Slack's payloads both ways, as pure functions: a slash command's, a click's or a modal's body
read into an event, and a reply rendered as Block Kit (escaped, within Slack's limits); also the
checks a raw HTTP body passes before Bolt parses it."""

from __future__ import annotations

import codecs
import json
from typing import Any
from urllib.parse import parse_qsl

from slack_bolt.context.async_context import AsyncBoltContext
from slack_bolt.request.async_internals import build_async_context
from slack_bolt.request.async_request import AsyncBoltRequest
from slack_bolt.request.internals import extract_enterprise_id, extract_team_id

from bot.core.messages import CUT_NOTE, Actor, ChoiceMade, Command, Form, Place, Reply, TextSubmitted

PLATFORM = "slack"
ACTION_PREFIX = "studybot:"
FORM_CALLBACK = "studybot_form"
FORM_BLOCK, FORM_INPUT = "answer", "text"
MAX_SLACK_INPUT = 3000  # Slack's limit for plain_text_input.max_length
MAX_SECTION = 3000  # Slack's limit for a section's text

Json = dict[str, Any]


# ---------------------------------------------------------------- payload -> event (pure)


def place_of(team_id: str, channel_id: object) -> Place:
    """A Place; a direct-message channel ("D…") is no channel at all for the core."""
    channel = channel_id if isinstance(channel_id, str) and channel_id and not channel_id.startswith("D") else None
    return Place(PLATFORM, team_id, channel)


def team_of(body: Json) -> str:
    """The workspace (the cohort), resolved as slack-bolt resolves it: a modal opened from a Slack
    Connect channel belongs to `view.app_installed_team_id`; an org-wide install's payload has no
    `team` but a `user.team_id`; an org-level command with no workspace is the organisation."""
    return str(extract_team_id(body) or extract_enterprise_id(body) or "")


def user_of(body: Json) -> tuple[str, str, str]:
    """(team id, user id, user name) of a slash command or an interactivity payload (whose `user`
    is an object; a payload with anything else there names no user)."""
    if "command" in body:
        return team_of(body), str(body.get("user_id") or ""), str(body.get("user_name") or "")
    user = _object(body, "user")
    return team_of(body), str(user.get("id") or ""), str(user.get("username") or user.get("name") or "")


def _object(body: Json, key: str) -> Json:
    value = body.get(key)
    return value if isinstance(value, dict) else {}


def command_event(body: Json, actor: Actor) -> Command:
    return Command(str(body.get("command", "")).lstrip("/"), str(body.get("text") or ""), actor,
                   place_of(actor.cohort, body.get("channel_id")))


def click_event(body: Json, actor: Actor) -> ChoiceMade:
    channel = (body.get("channel") or {}).get("id") or (body.get("container") or {}).get("channel_id")
    return ChoiceMade(str(body["actions"][0].get("value") or ""), actor, place_of(actor.cohort, channel))


def form_metadata(raw: object) -> Json:
    """The form token and channel a modal carries; {} when private_metadata is not ours."""
    try:
        meta = json.loads(raw) if isinstance(raw, str) and raw else {}
    except ValueError:
        return {}
    return meta if isinstance(meta, dict) else {}


def submitted_text(view: Json) -> str:
    """The answer typed into a form's modal; "" when the view's state has no such input."""
    state = view.get("state")
    values = state.get("values") if isinstance(state, dict) else None
    block = values.get(FORM_BLOCK) if isinstance(values, dict) else None
    element = block.get(FORM_INPUT) if isinstance(block, dict) else None
    value = element.get("value") if isinstance(element, dict) else None
    return value if isinstance(value, str) else ""


def submit_event(body: Json, actor: Actor) -> TextSubmitted:
    view = _object(body, "view")
    meta = form_metadata(view.get("private_metadata"))
    return TextSubmitted(str(meta.get("token") or ""), submitted_text(view), actor,
                         place_of(actor.cohort, meta.get("channel")))


# ---------------------------------------------------------------- reply -> Block Kit (pure)


def escape(text: str) -> str:
    """Slack's three control characters. With them escaped no text from a learner can become a
    mention (`<!everyone>`, `<@U…>`, `<!subteam^…>`) or a link."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def mrkdwn(text: str, limit: int = MAX_SECTION) -> str:
    """Slack mrkdwn of at most `limit` characters once escaped (the core's **bold** is Slack's *bold*).

    Escaping can grow a text fivefold, so a text too long for Slack is cut before it is escaped,
    at a character boundary, and ends with the core's cut note."""
    text = text.replace("**", "*")
    escaped = escape(text)
    if len(escaped) <= limit:
        return escaped
    if text.endswith(CUT_NOTE):
        text = text[: -len(CUT_NOTE)]
    note = escape(CUT_NOTE)
    budget, kept = limit - len(note), 0
    for char in text:
        budget -= len(escape(char))
        if budget < 0:
            break
        kept += 1
    return escape(text[:kept]) + note


def blocks_for(reply: Reply) -> list[Json]:
    """A section with the text, then one actions block per row of at most five buttons."""
    blocks: list[Json] = [{"type": "section", "text": {"type": "mrkdwn", "text": mrkdwn(reply.text)}}]
    n = 0
    for row_no, row in enumerate(reply.rows()):
        buttons = []
        for choice in row:
            buttons.append({"type": "button", "action_id": f"{ACTION_PREFIX}{n}",
                            "text": {"type": "plain_text", "text": choice.label}, "value": choice.token})
            n += 1
        blocks.append({"type": "actions", "block_id": f"studybot_row_{row_no}", "elements": buttons})
    return blocks


def message_for(reply: Reply) -> Json:
    """Keyword arguments for chat.postMessage / chat.update / respond / ack."""
    return {"text": mrkdwn(reply.text), "blocks": blocks_for(reply)}


def modal_for(form: Form, channel_id: str | None) -> Json:
    """The modal of a form; private_metadata carries the form token and where to answer."""
    return {
        "type": "modal",
        "callback_id": FORM_CALLBACK,
        "private_metadata": json.dumps({"token": form.token, "channel": channel_id}),
        "title": {"type": "plain_text", "text": form.title},
        "submit": {"type": "plain_text", "text": "Submit"},
        "close": {"type": "plain_text", "text": "Cancel"},
        "blocks": [
            {"type": "section", "text": {"type": "mrkdwn", "text": mrkdwn(form.prompt)}},
            {"type": "input", "block_id": FORM_BLOCK, "label": {"type": "plain_text", "text": form.label},
             "element": {"type": "plain_text_input", "action_id": FORM_INPUT, "multiline": True,
                         "max_length": min(form.max_length, MAX_SLACK_INPUT)}},
        ],
    }


def routable(body: Json) -> bool:
    """Whether Bolt can route the body: its matchers and error handler read `actions[0]` of a
    block_actions payload unguarded, so one without a list of actions must stop here."""
    if body.get("type") != "block_actions":
        return True
    actions = body.get("actions")
    return isinstance(actions, list) and bool(actions) and all(isinstance(a, dict) for a in actions)


class TooDeep(ValueError):
    """A body whose JSON nests deeper than allowed."""


def read_body(text: str, content_type: str, limit: int) -> Json:
    """A request's body, decoded once: a JSON body, an interactivity form's `payload` field, or a form's
    fields, as Bolt reads them (and a form that merely contains the word "payload" as plain fields,
    where Bolt would read `{}`). TooDeep when its JSON nests deeper than `limit`; ValueError when it
    cannot be read."""
    if not text:
        return {}
    if content_type == "application/json" or text.startswith("{"):
        body = _json(text, limit)
    else:
        fields = form_fields(text)
        body = _json(fields["payload"], limit) if "payload" in fields else fields
    if not isinstance(body, dict):
        raise ValueError("not an object")
    return body


def form_fields(text: str) -> dict[str, str]:
    """A form's fields, as `dict(parse_qsl(text, keep_blank_values=True))` reads them, several times
    faster: Python's `unquote` decodes each %-escape in a loop of Python, and an interaction's payload
    is JSON with hundreds of them. Here they are decoded in C (`codecs.escape_decode`), and a form that
    is not plain percent-encoded ASCII is left to `parse_qsl`."""
    try:
        fields = {}
        for field in text.split("&"):
            if field:
                name, _, value = field.partition("=")
                fields[_unquote(name)] = _unquote(value)
        return fields
    except (ValueError, UnicodeError):  # a stray "%", or characters that were not encoded
        return dict(parse_qsl(text, keep_blank_values=True))


def _unquote(text: str) -> str:
    if "%" not in text and "+" not in text:
        return text
    escaped = text.replace("+", " ").replace("\\", "\\\\").replace("%", "\\x").encode("ascii")
    return codecs.escape_decode(escaped)[0].decode("utf-8", "replace")


def _json(text: str, limit: int) -> Any:
    """JSON text decoded, then its nesting measured level by level (TooDeep past `limit`)."""
    try:
        value = json.loads(text)
    except RecursionError:  # the decoder's own bound, far past `limit`
        raise TooDeep from None
    level, depth = [value] if isinstance(value, dict | list) else [], 0  # the containers one level down
    while level:
        depth += 1
        if depth > limit:
            raise TooDeep
        level = [child for item in level for child in (item.values() if isinstance(item, dict) else item)
                 if isinstance(child, dict | list)]
    return value


def bolt_request(text: str, body: Json, query: str, headers: Any) -> AsyncBoltRequest:
    """Bolt's request for a body read by `read_body`: Bolt does not parse it again. `raw_body` stays the
    exact text Slack signed."""
    request = AsyncBoltRequest(body="", query=query, headers=headers)
    request.raw_body, request.body = text, body
    request.context = build_async_context(AsyncBoltContext({}), body)
    return request
