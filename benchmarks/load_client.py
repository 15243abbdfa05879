"""The load client of the platform benchmarks, in a process of its own so that the server measured
does not share its interpreter (or its event loop) with the requests it answers.

`python -m benchmarks.load_client slack` reads one JSON request a line, `{"url", "requests", "warmup"}`,
sends that many signed `/glossary mfu` slash commands one after another, each signed as it is sent (as
Slack does), and answers `{"rate": requests per second}`. `... discord` runs the Discord stand-in: it
first prints `{"api", "gateway", "token"}`, then `{"op": "reset"}` forgets the connected bot (the next
one identifies afresh) and `{"op": "rate", "requests", "warmup"}` sends that many `/glossary term:FSDP`
interactions, each awaited to its callback. `LoadClient` starts one and asks it.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from pathlib import Path
from typing import Any

import aiohttp

from standins.discord_standin import DiscordStandIn
from standins.slack_standin import post_signed, slash_command

REPO = Path(__file__).resolve().parents[1]


async def slack_rate(session: aiohttp.ClientSession, url: str, requests: int, warmup: int) -> float:
    for _ in range(warmup):
        await post_signed(session, *slash_command("/glossary", "mfu"), url=url)
    started = time.perf_counter()
    for _ in range(requests):
        status, text = await post_signed(session, *slash_command("/glossary", "mfu"), url=url)
        if status != 200 or "MFU" not in text:
            raise RuntimeError(f"/glossary mfu answered {status}: {text[:200]}")
    return requests / (time.perf_counter() - started)


async def discord_rate(fake: DiscordStandIn, requests: int, warmup: int) -> float:
    async def one() -> None:
        result = await fake.interact(fake.slash("glossary", {"term": "FSDP"}))
        if result.status != 200 or "FSDP" not in json.dumps(result.response):
            raise RuntimeError(f"/glossary term:FSDP answered {result.status}: {str(result.response)[:200]}")
        fake.calls.clear()  # the stand-in finds a callback among the calls recorded: keep that list short
        fake.messages.clear()

    for _ in range(warmup):
        await one()
    started = time.perf_counter()
    for _ in range(requests):
        await one()
    return requests / (time.perf_counter() - started)


async def _lines() -> Any:
    loop = asyncio.get_running_loop()
    while line := await loop.run_in_executor(None, sys.stdin.readline):
        yield json.loads(line)


def _say(message: dict[str, Any]) -> None:
    print(json.dumps(message), flush=True)


async def _serve(mode: str) -> None:
    if mode == "slack":
        async with aiohttp.ClientSession() as session:
            async for ask in _lines():
                _say({"rate": await slack_rate(session, ask["url"], ask["requests"], ask["warmup"])})
        return
    async with DiscordStandIn() as fake:
        _say({"api": fake.api_base, "gateway": fake.gateway_url, "token": fake.token})
        async for ask in _lines():
            if ask["op"] == "reset":
                fake.reset_connection_state()
                _say({})
            else:
                _say({"rate": await discord_rate(fake, ask["requests"], ask["warmup"])})


class LoadClient:
    """A load client process: `await LoadClient.start("slack")`, `await client.ask(...)`, `await client.close()`."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process

    @classmethod
    async def start(cls, mode: str) -> LoadClient:
        process = await asyncio.create_subprocess_exec(sys.executable, "-m", "benchmarks.load_client", mode, cwd=REPO,
                                                        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE)
        return cls(process)

    async def read(self) -> dict[str, Any]:
        assert self.process.stdout is not None
        line = await self.process.stdout.readline()
        if not line:
            raise RuntimeError(f"the load client stopped (exit {await self.process.wait()})")
        answer: dict[str, Any] = json.loads(line)
        return answer

    async def ask(self, **request: Any) -> dict[str, Any]:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(request).encode() + b"\n")
        await self.process.stdin.drain()
        return await self.read()

    async def close(self) -> None:
        if self.process.stdin is not None:
            self.process.stdin.close()
        try:
            await asyncio.wait_for(self.process.wait(), 10)
        except TimeoutError:
            self.process.kill()
            await self.process.wait()


if __name__ == "__main__":
    asyncio.run(_serve(sys.argv[1]))
