"""The peers studybot is measured against: servers that do the same required work without studybot.

`GlossaryWork` is what answering `/glossary TERM` has to do whatever the code around it: find the term
by its name or an alias, write the reply, one log line, the two metrics (an event counted, its time
observed) and the lookup counted for the cohort's instructors. It does each plainly (the week cached by
the minute, metric children resolved once). `slack_peer` serves it over Slack's HTTP mode with aiohttp
alone (the signature checked, the form parsed, the reply in the acknowledgement, as studybot answers).
`press_floor` is the floor of a button press: the signature checked and the form and its JSON parsed,
then an empty 200. `python -m benchmarks.peers press-floor PORT` runs the floor as a process of its own.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import logging
import sys
import time
from collections import Counter as Tally
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any
from urllib.parse import parse_qsl

from aiohttp import web
from prometheus_client import CollectorRegistry, Counter, Histogram

from bot.content.model import Library, Term

log = logging.getLogger("peer")
STALE = 300  # seconds: Slack's limit on a request's timestamp


class GlossaryWork:
    """The work of one `/glossary TERM`, done plainly."""

    def __init__(self, library: Library, platform: str) -> None:
        self.platform = platform
        self.terms = {name.casefold(): term for term in library.terms for name in (term.term, *term.aliases)}
        self.sources: dict[str, str] = {}
        for lesson in library.lessons.values():
            self.sources.update(lesson.sources)
        registry = CollectorRegistry()
        events = Counter("peer_events", "Events handled", ("platform", "command", "outcome"), registry=registry)
        latency = Histogram("peer_handling_seconds", "Time to handle one event", ("platform",), registry=registry)
        self.handled, self.latency = events.labels(platform, "glossary", "ok"), latency.labels(platform)
        self.lookups: Tally[tuple[str, str, str, bool]] = Tally()
        self._week, self._week_until = "", 0.0

    def answer(self, cohort: str, query: str) -> str:
        started = time.perf_counter()
        term = self.terms.get(query.strip().casefold())
        reply = self.describe(term) if term else f"No term '{query[:60]}' in the glossary."
        self.lookups[(cohort, self.week(), term.term if term else query[:60], term is not None)] += 1
        seconds = time.perf_counter() - started
        log.info("handled platform=%s cohort=%s command=/glossary outcome=ok latency_ms=%.1f", self.platform, cohort,
                 seconds * 1000)
        self.handled.inc()
        self.latency.observe(seconds)
        return reply

    def describe(self, term: Term) -> str:
        lines = [f"**{term.term}**" + (f" ({', '.join(term.aliases)})" if term.aliases else ""), term.definition]
        if term.related:
            lines.append("Related: " + ", ".join(term.related))
        if term.sources:
            lines.append("Sources: " + "; ".join(self.sources.get(s, s) for s in term.sources))
        return "\n".join(lines)

    def week(self) -> str:
        now = time.time()
        if now >= self._week_until:
            year, week, _ = datetime.fromtimestamp(now, UTC).isocalendar()
            self._week, self._week_until = f"{year}-W{week:02d}", now - now % 60 + 60
        return self._week


def signed(secret: bytes, raw: bytes, headers: Mapping[str, str]) -> bool:
    """Slack's v0 signature over the raw body, with a fresh timestamp."""
    stamp, signature = headers.get("X-Slack-Request-Timestamp", ""), headers.get("X-Slack-Signature", "")
    if not stamp.isdigit() or abs(time.time() - int(stamp)) > STALE:
        return False
    digest = hmac.new(secret, b"v0:" + stamp.encode() + b":" + raw, hashlib.sha256).hexdigest()
    return hmac.compare_digest("v0=" + digest, signature)


def slack_reply(text: str) -> dict[str, Any]:
    """A reply as Slack's mrkdwn text and one section block."""
    text = text.replace("**", "*").replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return {"text": text, "blocks": [{"type": "section", "text": {"type": "mrkdwn", "text": text}}]}


def slack_peer(work: GlossaryWork, signing_secret: str) -> web.Application:
    """aiohttp alone answering signed `/glossary` slash commands in the acknowledgement."""
    secret = signing_secret.encode()

    async def events(request: web.Request) -> web.Response:
        raw = await request.read()
        if not signed(secret, raw, request.headers):
            return web.Response(status=401)
        form = dict(parse_qsl(raw.decode()))
        if form.get("command") != "/glossary":
            return web.Response(status=404)
        return web.json_response(slack_reply(work.answer(form.get("team_id", ""), form.get("text", ""))))

    app = web.Application()
    app.router.add_post("/slack/events", events)
    return app


def press_floor(signing_secret: str) -> web.Application:
    """The floor of a signed button press: the signature checked, the form and its JSON parsed, an empty 200."""
    secret = signing_secret.encode()

    async def events(request: web.Request) -> web.Response:
        raw = await request.read()
        if not signed(secret, raw, request.headers):
            return web.Response(status=401)
        payload = json.loads(dict(parse_qsl(raw.decode()))["payload"])
        return web.Response(status=200 if payload.get("actions") else 400)

    app = web.Application()
    app.router.add_post("/slack/events", events)
    return app


async def serve(app: web.Application, port: int = 0, *, reuse_port: bool = False) -> tuple[web.AppRunner, int]:
    """Listen on 127.0.0.1 (`port` 0: a free one); the runner and the port."""
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", port, reuse_port=reuse_port, backlog=4096)
    await site.start()
    return runner, int(site._server.sockets[0].getsockname()[1])  # type: ignore[union-attr]


async def _run_floor(port: int, signing_secret: str) -> None:
    runner, port = await serve(press_floor(signing_secret), port)
    print(port, flush=True)
    try:
        await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)  # until stdin closes
    finally:
        await runner.cleanup()


if __name__ == "__main__":
    if sys.argv[1:2] != ["press-floor"]:
        sys.exit("usage: python -m benchmarks.peers press-floor PORT")
    from standins.slack_standin import SIGNING_SECRET

    asyncio.run(_run_floor(int(sys.argv[2]), SIGNING_SECRET))
