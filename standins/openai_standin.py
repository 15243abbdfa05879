"""A loopback stand-in for an OpenAI-compatible endpoint (`POST /v1/chat/completions`), for the second
reader's tests: it records every request as it arrived (headers and JSON body), and answers as told by
`behaviour`:

- "well": a plain reading of its own: for each key point, the clause of the answer that shares two words
  with the point, quoted verbatim (`claims`, when set, is returned instead: key point id -> words);
- "slow": no answer until the stand-in closes (the caller's timeout ends it);
- "broken": a reply that is not JSON; "invented": each key point claimed with words not in the answer;
- "injected": what a model that obeyed an instruction in the answer would say: every key point claimed,
  each with the answer's sentence that gives the instruction;
- "error": HTTP 500;
- "nested": a body of JSON nested deeper than any parser recurses; "huge": a 50 MB reply.

Run on its own for a benchmark: `python -m standins.openai_standin` prints its /v1 URL.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
from dataclasses import dataclass
from typing import Any, Self

from aiohttp import web

from standins.loopback import LoopbackServer

BEHAVIOURS = ("well", "slow", "broken", "invented", "injected", "error", "nested", "huge")
HUGE = 50 * 1024 * 1024  # bytes of the "huge" reply
_POINT = re.compile(r"^- ([^:\n]+): (.+)$", re.MULTILINE)
_ANSWER = re.compile(r"<<<(\w+)\n(.*)\n\1>>>", re.DOTALL)
_WORD = re.compile(r"[A-Za-z]{4,}")


@dataclass(frozen=True)
class Request:
    """One request as it arrived."""

    path: str
    headers: dict[str, str]
    body: Any

    @property
    def text(self) -> str:
        """Everything the request carried, as sent (to check what left the bot)."""
        return json.dumps(self.body)


def _stems(text: str) -> set[str]:
    return {w.lower()[:5] for w in _WORD.findall(text)}


def _reading(points: dict[str, str], answer: str) -> list[dict[str, str]]:
    clauses = [c.strip() for c in re.split(r"[.;,\n]|\band\b|\bbut\b", answer) if c.strip()]
    found = []
    for pid, point in points.items():
        best = max(clauses, key=lambda c: len(_stems(c) & _stems(point)), default="")
        if len(_stems(best) & _stems(point)) >= 2:
            found.append({"point": pid, "words": best})
    return found


class ReaderStandIn(LoopbackServer):
    def __init__(self, behaviour: str = "well") -> None:
        super().__init__()
        self.behaviour = behaviour
        self.claims: dict[str, str] | None = None
        self.requests: list[Request] = []
        self._closing = asyncio.Event()

    async def start(self, port: int = 0) -> Self:
        app = web.Application()
        app.router.add_post("/v1/chat/completions", self._complete)
        self.port = await self.serve(app, port)
        return self

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    async def close(self) -> None:
        self._closing.set()
        await super().close()

    async def _complete(self, request: web.Request) -> web.Response:
        body = await request.json()
        self.requests.append(Request(request.path, dict(request.headers), body))
        if self.behaviour == "slow":
            await self._closing.wait()
        if self.behaviour == "error":
            return web.json_response({"error": {"message": "the stand-in fails as told"}}, status=500)
        if self.behaviour == "nested":
            return web.Response(text='{"choices": ' + "[" * 50_000, content_type="application/json")
        if self.behaviour == "huge":
            return await self._huge(request)
        prompt = "\n".join(m.get("content", "") for m in body.get("messages", []))
        content = self._content(prompt)
        return web.json_response({
            "id": f"standin-{len(self.requests)}", "object": "chat.completion", "model": body.get("model"),
            "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": content}}],
            "usage": {"prompt_tokens": len(prompt.split()), "completion_tokens": len(content.split()),
                      "total_tokens": len(prompt.split()) + len(content.split())}})

    async def _huge(self, request: web.Request) -> web.StreamResponse:
        """HUGE bytes of one JSON string, streamed a megabyte at a time until sent or the caller hangs up."""
        response = web.StreamResponse(headers={"Content-Type": "application/json"})
        await response.prepare(request)
        chunk = b"x" * 2**20
        try:
            await response.write(b'{"choices": [{"message": {"role": "assistant", "content": "')
            for _ in range(HUGE // len(chunk)):
                await response.write(chunk)
            await response.write(b'"}}]}')
        except ConnectionError:
            pass  # the caller stopped reading
        return response

    def _content(self, prompt: str) -> str:
        points = dict(_POINT.findall(prompt))
        fenced = _ANSWER.search(prompt)
        answer = fenced.group(2) if fenced else ""
        if self.behaviour == "broken":
            return '{"found": [{"point": "'
        if self.behaviour == "invented":
            found = [{"point": pid, "words": "words the learner never wrote"} for pid in points]
        elif self.behaviour == "injected":
            said = next((s for s in re.split(r"(?<=[.!?])\s+", answer) if "ignore" in s.lower()), answer)
            found = [{"point": pid, "words": said} for pid in points]
        elif self.claims is not None:
            found = [{"point": pid, "words": words} for pid, words in self.claims.items()]
        else:
            found = _reading(points, answer)
        return json.dumps({"found": found})


async def _serve(port: int, behaviour: str) -> None:
    standin = await ReaderStandIn(behaviour).start(port)
    try:
        print(f"serving {standin.url}", flush=True)
        await asyncio.Event().wait()
    finally:
        await standin.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(prog="python -m standins.openai_standin",
                                     description="An OpenAI-compatible stand-in on 127.0.0.1; prints its /v1 URL.")
    parser.add_argument("port", type=int, nargs="?", default=0, help="the port (default: a free one)")
    parser.add_argument("behaviour", nargs="?", default="well", choices=BEHAVIOURS, help="how it answers")
    args = parser.parse_args()
    asyncio.run(_serve(args.port, args.behaviour))
