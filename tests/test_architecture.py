"""The core stays platform-free: importing every module under bot/ loads no platform SDK."""

import subprocess
import sys

from support import REPO


def test_bot_imports_no_platform_sdk() -> None:
    script = (
        "import pkgutil, importlib, sys, bot\n"
        "for m in pkgutil.walk_packages(bot.__path__, 'bot.'): importlib.import_module(m.name)\n"
        "loaded = sorted(n for n in sys.modules if n.split('.')[0] in ('slack_bolt', 'slack_sdk', 'discord'))\n"
        "print(','.join(loaded))\n"
    )
    out = subprocess.run([sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "", f"bot/ loaded platform modules: {out.stdout.strip()}"


def test_walk_finds_the_core_modules() -> None:
    """Guards the test above against walking nothing."""
    import pkgutil

    import bot

    names = {m.name for m in pkgutil.walk_packages(bot.__path__, "bot.")}
    assert {"bot.app", "bot.store", "bot.quiz", "bot.rounds", "bot.content"} <= names
