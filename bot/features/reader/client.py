"""One call to an OpenAI-compatible endpoint (`POST {url}/chat/completions`), bounded by the timeout:
the reply's text and what it cost, or ReaderFailed saying why not (never with the answer's text)."""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass
from typing import Any

import aiohttp

from bot.core.config import ReaderSettings

MOST_TOKENS = 400  # a reply's length: a few claims of short spans
MOST_BYTES = 64 * 1024  # a reply's body, read no further: MOST_TOKENS of JSON is a few kilobytes


class ReaderFailed(Exception):
    """The call gave no reply to read: `reason` is a short label (timeout, unreachable, http 500…)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class Completion:
    content: str
    prompt_tokens: int
    completion_tokens: int
    seconds: float


async def _body(response: aiohttp.ClientResponse) -> bytes:
    """The reply's body, or ReaderFailed once it is longer than MOST_BYTES (never read whole)."""
    body = bytearray()
    async for chunk in response.content.iter_chunked(MOST_BYTES):
        body += chunk
        if len(body) > MOST_BYTES:
            raise ReaderFailed("too long")
    return bytes(body)


def _tokens(usage: Any, key: str) -> int:
    value = usage.get(key) if isinstance(usage, dict) else None
    return value if isinstance(value, int) and value >= 0 else 0


async def complete(settings: ReaderSettings, messages: list[dict[str, str]]) -> Completion:
    """The model's reply to `messages`, within `settings.timeout` seconds."""
    headers = {"Authorization": f"Bearer {settings.key.reveal()}"} if settings.key else {}
    body = {"model": settings.model, "messages": messages, "temperature": 0, "max_tokens": MOST_TOKENS,
            "response_format": {"type": "json_object"}}
    started = time.perf_counter()
    try:
        async with asyncio.timeout(settings.timeout), aiohttp.ClientSession(trust_env=False) as session:
            async with session.post(f"{settings.url}/chat/completions", json=body, headers=headers) as response:
                if response.status != 200:
                    raise ReaderFailed(f"http {response.status}")
                data = json.loads(await _body(response))
    except TimeoutError:
        raise ReaderFailed("timeout") from None
    except (aiohttp.ClientError, OSError):
        raise ReaderFailed("unreachable") from None
    except (ValueError, RecursionError):  # RecursionError: nested deeper than the parser goes
        raise ReaderFailed("not json") from None
    try:
        content = data["choices"][0]["message"]["content"]
    except (KeyError, IndexError, TypeError):
        raise ReaderFailed("no message") from None
    if not isinstance(content, str):
        raise ReaderFailed("no message")
    usage = data.get("usage") if isinstance(data, dict) else None
    return Completion(content, _tokens(usage, "prompt_tokens"), _tokens(usage, "completion_tokens"),
                      time.perf_counter() - started)
