"""Headless Chromium for tests: Debian's `chromium`, driven over the DevTools protocol on 127.0.0.1,
with the network shut (every host resolves to nothing, every request goes to a closed proxy port).

    async with Browser.launch(tmp_path) as browser:
        page = await browser.open(path, width=800)   # every request the page made is in page.requests
        value = await page.evaluate("document.title")
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import itertools
import shutil
import subprocess
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp

INSTALL = "apt-get update && apt-get install -y chromium"
FLAGS = (
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-dev-shm-usage",
    "--disable-background-networking", "--disable-component-update", "--disable-sync", "--hide-scrollbars",
    "--proxy-server=127.0.0.1:9", "--host-resolver-rules=MAP * ~NOTFOUND", "--remote-debugging-port=0",
    "--remote-debugging-address=127.0.0.1",
)
WAIT = 30.0  # seconds for any one step


def binary() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


class DevTools:
    """One DevTools connection: calls by id, events kept in order."""

    def __init__(self, ws: aiohttp.ClientWebSocketResponse) -> None:
        self._ws = ws
        self._ids = itertools.count(1)
        self._waiting: dict[int, asyncio.Future] = {}
        self.events: list[dict[str, Any]] = []
        self._changed = asyncio.Event()
        self._reader = asyncio.create_task(self._read())

    async def _read(self) -> None:
        async for message in self._ws:
            data = message.json()
            if "id" in data and data["id"] in self._waiting:
                self._waiting.pop(data["id"]).set_result(data)
            else:
                self.events.append(data)
                self._changed.set()

    async def call(self, method: str, params: dict[str, Any] | None = None, session: str | None = None) -> dict:
        number = next(self._ids)
        self._waiting[number] = asyncio.get_running_loop().create_future()
        message: dict[str, Any] = {"id": number, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        await self._ws.send_json(message)
        reply = await asyncio.wait_for(self._waiting[number], WAIT)
        if "error" in reply:
            raise RuntimeError(f"{method}: {reply['error']}")
        return reply["result"]

    async def event(self, method: str, session: str) -> dict[str, Any]:
        async def seen() -> dict[str, Any]:
            while True:
                for e in self.events:
                    if e.get("method") == method and e.get("sessionId") == session:
                        return e
                self._changed.clear()
                await self._changed.wait()

        return await asyncio.wait_for(seen(), WAIT)

    async def close(self) -> None:
        self._reader.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._reader


@dataclass
class Page:
    tools: DevTools
    session: str
    requests: list[str] = field(default_factory=list)

    async def evaluate(self, expression: str) -> Any:
        reply = await self.tools.call("Runtime.evaluate", {"expression": expression, "returnByValue": True},
                                      self.session)
        return reply["result"].get("value")

    async def screenshot(self, target: Path, width: int, height: int | None = None, top: int = 0) -> Path:
        """A PNG of the page from `top`: `height` pixels of it, or all the rest."""
        height = height or int(await self.evaluate("document.documentElement.scrollHeight")) - top
        reply = await self.tools.call("Page.captureScreenshot", {
            "format": "png", "captureBeyondViewport": True,
            "clip": {"x": 0, "y": top, "width": width, "height": height, "scale": 1}}, self.session)
        target.write_bytes(base64.b64decode(reply["data"]))
        return target

    async def pdf(self) -> bytes:
        reply = await self.tools.call("Page.printToPDF", {"printBackground": True}, self.session)
        return base64.b64decode(reply["data"])


class Browser:
    def __init__(self, process: subprocess.Popen, http: aiohttp.ClientSession, tools: DevTools) -> None:
        self._process, self._http, self.tools = process, http, tools

    @classmethod
    @contextlib.asynccontextmanager
    async def launch(cls, tmp: Path) -> AsyncIterator[Browser]:
        found = binary()
        if found is None:
            raise FileNotFoundError(f"Chromium is not installed; install it with: {INSTALL}")
        profile = tmp / "chromium-profile"
        process = subprocess.Popen([found, *FLAGS, f"--user-data-dir={profile}", "about:blank"],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        http = aiohttp.ClientSession()
        tools = None
        try:
            port_file = profile / "DevToolsActivePort"
            for _ in range(int(WAIT * 20)):
                if port_file.exists() and len(port_file.read_text().splitlines()) == 2:
                    break
                if process.poll() is not None:
                    raise RuntimeError(f"chromium exited with {process.returncode}")
                await asyncio.sleep(0.05)
            port, path = port_file.read_text().splitlines()
            ws = await http.ws_connect(f"ws://127.0.0.1:{port}{path}", max_msg_size=0)
            tools = DevTools(ws)
            yield cls(process, http, tools)
        finally:
            if tools is not None:
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(tools.call("Browser.close"), 5)
                await tools.close()
            await http.close()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()

    async def open(self, path: Path, width: int = 800, height: int = 900, mobile: bool = False) -> Page:
        """Load a file in a new tab of the given size and wait for its load event."""
        target = await self.tools.call("Target.createTarget", {"url": "about:blank"})
        attached = await self.tools.call("Target.attachToTarget", {"targetId": target["targetId"], "flatten": True})
        page = Page(self.tools, attached["sessionId"])
        for method in ("Network.enable", "Page.enable", "Runtime.enable"):
            await self.tools.call(method, session=page.session)
        await self.tools.call("Emulation.setDeviceMetricsOverride", {
            "width": width, "height": height, "deviceScaleFactor": 1, "mobile": mobile}, page.session)
        await self.tools.call("Page.navigate", {"url": path.resolve().as_uri()}, page.session)
        await self.tools.event("Page.loadEventFired", page.session)
        page.requests = [e["params"]["request"]["url"] for e in self.tools.events
                         if e.get("method") == "Network.requestWillBeSent" and e.get("sessionId") == page.session]
        return page
