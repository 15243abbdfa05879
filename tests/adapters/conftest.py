"""Fixtures shared by the adapter tests."""

import pytest

PROXY_VARS = ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "ALL_PROXY", "all_proxy")


@pytest.fixture(autouse=True)
def clear_proxy_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """slack-sdk reads the proxy variables itself and ignores NO_PROXY: unset them."""
    for name in PROXY_VARS:
        monkeypatch.delenv(name, raising=False)
