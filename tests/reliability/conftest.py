"""Fixtures for the reliability tests: the adapter test helpers on sys.path, no proxy variables."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ADAPTER_TESTS = Path(__file__).resolve().parents[1] / "adapters"
if str(ADAPTER_TESTS) not in sys.path:  # the stand-ins and discord_fixtures live there
    sys.path.insert(0, str(ADAPTER_TESTS))

PROXY_VARS = ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "ALL_PROXY", "all_proxy")


@pytest.fixture(autouse=True)
def clear_proxy_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """slack-sdk reads the proxy variables itself and ignores NO_PROXY: unset them."""
    for name in PROXY_VARS:
        monkeypatch.delenv(name, raising=False)
