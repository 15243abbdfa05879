"""Posts to Slack's `response_url` (a private reply after the ack) through one HTTP session.

slack-bolt 1.30's `respond` builds a new slack_sdk (3.48) `AsyncWebhookClient` per call, which opens a
new `aiohttp.ClientSession` and so a new connection (in production a new TLS handshake) per post, and
computes its user agent again; even given a shared session, the client is built per post. Here every
post goes straight through one session, whose connections are kept alive and reused, with the same
JSON, headers and retry as `AsyncWebhookClient.send_dict` (one more try after a connection error, after
slack_sdk's back-off), and the session is closed at shutdown.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import aiohttp
from slack_sdk.http_retry.async_handler import default_interval_calculator
from slack_sdk.web.internal_utils import get_user_agent

TIMEOUT = 30  # seconds, slack_sdk's default for a webhook post
HEADERS = {"Content-Type": "application/json;charset=utf-8", "User-Agent": get_user_agent()}  # computed once
RETRIED = (aiohttp.ServerConnectionError, aiohttp.ClientOSError)  # AsyncConnectionErrorRetryHandler's
RETRIES = 1  # and its count


class ResponseUrls:
    """One `aiohttp.ClientSession` for every post to a response_url, opened at the first post."""

    def __init__(self) -> None:
        self._session: aiohttp.ClientSession | None = None

    async def post(self, url: str, message: dict[str, Any]) -> int:
        """Post `message` to `url` (without its empty fields, as `respond` does); Slack's HTTP status."""
        data = json.dumps({key: value for key, value in message.items() if value is not None and value != []})
        if self._session is None or self._session.closed:
            self._session = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=TIMEOUT))
        for attempt in range(RETRIES + 1):
            try:
                async with self._session.post(url, data=data, headers=HEADERS) as response:
                    await response.read()
                    return response.status
            except RETRIED:
                if attempt == RETRIES:
                    raise
                await asyncio.sleep(default_interval_calculator.calculate_sleep_duration(attempt))
        raise AssertionError("unreachable")

    async def close(self) -> None:
        session, self._session = self._session, None
        if session is not None:
            await session.close()
