"""slack-bolt's AsyncApp without the per-request work studybot does not use (slack-bolt 1.30).

Per request, Bolt's `AsyncApp` builds a new `AsyncWebClient` for the context (since 1.15, so that a
listener may change its token) and looks up and configures its context logger again; and each
listener call builds all ~30 of Bolt's injectable arguments (a `say`, a `respond`, a `set_status`, ...)
only to pass the two or three its function names (and each of Bolt's own matchers builds them all to
read `body`). studybot's listeners call the Web API through the
adapter's own clients with an explicit token, never through the context's client, so one client serves
every request (Bolt's authorization still sets its token, which nobody reads), one logger too; and a
listener or matcher gets `ack`, `body` and `respond` directly (any other argument the way Bolt builds it).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from slack_bolt.async_app import AsyncApp
from slack_bolt.listener.async_listener import AsyncCustomListener
from slack_bolt.listener_matcher.async_builtins import AsyncBuiltinListenerMatcher
from slack_bolt.logger import get_bolt_app_logger
from slack_bolt.request.async_request import AsyncBoltRequest
from slack_bolt.response import BoltResponse
from slack_sdk.web.async_client import AsyncWebClient

DIRECT: dict[str, Callable[[AsyncBoltRequest], Any]] = {
    "ack": lambda request: request.context.ack,
    "body": lambda request: request.body,
    "respond": lambda request: request.context.respond,
}


def direct(names: Sequence[str], request: AsyncBoltRequest) -> dict[str, Any] | None:
    """The arguments `names` for `request`, when all are among `DIRECT`; else None (Bolt builds them)."""
    if not all(name in DIRECT for name in names):
        return None
    return {name: DIRECT[name](request) for name in names}


class DirectListener(AsyncCustomListener):
    """A listener whose function's arguments are among `DIRECT` gets them directly."""

    async def run_ack_function(self, *, request: AsyncBoltRequest,
                               response: BoltResponse) -> BoltResponse | None:
        kwargs = direct(self.arg_names, request)
        if kwargs is None:
            return await super().run_ack_function(request=request, response=response)
        return await self.ack_function(**kwargs)


class DirectMatcher(AsyncBuiltinListenerMatcher):
    """One of Bolt's own matchers (command name, action id, callback id: each takes only `body`),
    given its arguments directly."""

    async def async_matches(self, req: AsyncBoltRequest, resp: BoltResponse) -> bool:
        kwargs = direct(self.arg_names, req)
        if kwargs is None:
            return await super().async_matches(req, resp)
        return bool(await self.func(**kwargs))  # type: ignore[misc]  # an async function, as Bolt awaits it


class LeanApp(AsyncApp):
    """An AsyncApp whose requests share one context client and logger, and whose listeners are
    `DirectListener`s."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        client = self._async_client
        self._context_client = AsyncWebClient(token=self._token, base_url=client.base_url, timeout=client.timeout,
                                              session=client.session, headers=client.headers, logger=client.logger,
                                              retry_handlers=client.retry_handlers)
        self._context_logger = get_bolt_app_logger(app_name=self.name, base_logger=self._base_logger)

    def _init_context(self, req: AsyncBoltRequest) -> None:
        req.context["logger"] = self._context_logger
        req.context["token"] = self._token
        req.context["client"] = self._context_client
        req.context["listener_runner"] = self.listener_runner

    def _register_listener(self, functions: Sequence[Callable[..., Awaitable[BoltResponse | None]]],
                           *args: Any, **kwargs: Any) -> Callable[..., Awaitable[BoltResponse | None]] | None:
        registered = super()._register_listener(functions, *args, **kwargs)
        listener = self._async_listeners[-1]
        if type(listener) is AsyncCustomListener:
            listener.__class__ = DirectListener
        for matcher in listener.matchers:
            if type(matcher) is AsyncBuiltinListenerMatcher:
                matcher.__class__ = DirectMatcher
        return registered

