"""`/metrics` over HTTP: a route for an aiohttp server that already runs (Slack's HTTP mode),
and a small server of its own on STUDYBOT_METRICS_PORT (Socket Mode and Discord listen nowhere)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from aiohttp import web

from bot.core.errors import SetupError
from bot.runtime import metrics
from bot.runtime.app import StudyBot

HOST = "127.0.0.1"  # STUDYBOT_METRICS_HOST=0.0.0.0 in a container, whose published port is reached from outside
PATH = "/metrics"


def route(bot: StudyBot) -> Callable[[web.Request], Awaitable[web.Response]]:
    """The handler of GET /metrics for this bot."""

    async def scrape(request: web.Request) -> web.Response:
        return web.Response(body=await metrics.exposition(bot.store), headers={"Content-Type": metrics.CONTENT_TYPE})

    return scrape


async def serve(bot: StudyBot, port: int, host: str = HOST) -> web.AppRunner:
    """Serve /metrics on host:port until the returned runner is cleaned up."""
    app = web.Application()
    app.router.add_get(PATH, route(bot))
    runner = web.AppRunner(app, access_log=None, shutdown_timeout=1.0)
    await runner.setup()
    try:
        await web.TCPSite(runner, host, port).start()
    except OSError as exc:
        await runner.cleanup()
        raise SetupError(f"STUDYBOT_METRICS_PORT: cannot listen on {host}:{port} ({exc.strerror}); "
                         "set it to a free port") from exc
    return runner
