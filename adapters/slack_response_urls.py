"""Posts to Slack's `response_url` (a private reply after the ack) through one HTTP session.

slack-bolt 1.30's `respond` builds a new slack_sdk `AsyncWebhookClient` per call, which opens a new
`aiohttp.ClientSession` and so a new connection (in production a new TLS handshake) per post, and
computes its user agent again: the largest share of the CPU a button press costs. Here every post goes
through one session, whose connections are kept alive and reused, and which is closed at shutdown.
"""

from __future__ import annotations

from typing import Any

import aiohttp
from slack_sdk.http_retry.async_handler import AsyncRetryHandler
from slack_sdk.http_retry.builtin_async_handlers import AsyncConnectionErrorRetryHandler
from slack_sdk.webhook.async_client import AsyncWebhookClient

TIMEOUT = 30  # seconds, slack_sdk's default for a webhook post


class ResponseUrls:
    """One `aiohttp.ClientSession` for every post to a response_url, opened at the first post."""

    def __init__(self) -> None:
        self._session: aiohttp.ClientSession | None = None
        self._retries: list[AsyncRetryHandler] = [AsyncConnectionErrorRetryHandler()]  # slack_sdk's default

    async def post(self, url: str, message: dict[str, Any]) -> int:
        """Post `message` to `url` (without its empty fields, as `respond` does); Slack's HTTP status."""
        message = {key: value for key, value in message.items() if value is not None and value != []}
        if self._session is None or self._session.closed:
            self._session = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=TIMEOUT))
        client = AsyncWebhookClient(url, timeout=TIMEOUT, session=self._session, retry_handlers=self._retries)
        return (await client.send_dict(message)).status_code

    async def close(self) -> None:
        session, self._session = self._session, None
        if session is not None:
            await session.close()
