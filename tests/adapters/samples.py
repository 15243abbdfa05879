"""The published platform payloads the conformance suite drives the adapters with.

They are read at run time from the folder named by STUDYBOT_PLATFORM_SAMPLES (its SOURCES.md
says where each came from) and never copied into the repository; without the variable the
suites that need them are skipped with a message saying how to point them at the samples.
"""

from __future__ import annotations

import copy
import json
import os
from pathlib import Path
from typing import Any

import pytest

VARIABLE = "STUDYBOT_PLATFORM_SAMPLES"
HOW = (f"set {VARIABLE} to the platform-samples folder (the one with SOURCES.md, slack/, discord/ and schemas/) "
       "to run the platform conformance suite")


def folder() -> Path:
    """The samples folder, or a skip of the calling module when it is not set or not there."""
    value = os.environ.get(VARIABLE, "").strip()
    if not value:
        pytest.skip(HOW, allow_module_level=True)
    path = Path(value)
    if not (path / "SOURCES.md").is_file():
        pytest.skip(f"{VARIABLE}={value} has no SOURCES.md; {HOW}", allow_module_level=True)
    return path


def payload(root: Path, sample_id: str) -> dict[str, Any]:
    """A fresh copy of one sample's payload, exactly as published."""
    platform = "slack" if sample_id.startswith("S") else "discord"
    return copy.deepcopy(json.loads((root / platform / f"{sample_id}.json").read_text())["payload"])


def sample_ids(root: Path, platform: str) -> set[str]:
    return {p.stem for p in (root / platform).glob("*.json")}
