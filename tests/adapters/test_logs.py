"""At DEBUG, through a Slack and a Discord exchange, no token, secret or answer text reaches the log."""

from __future__ import annotations

import io
import json
import logging
from pathlib import Path

from support import CORE_PACK

from adapters.discord_app import DiscordAdapter
from adapters.discord_settings import DiscordSettings
from adapters.platforms import PLATFORMS
from adapters.slack_app import SlackAdapter
from adapters.slack_settings import SlackSettings
from bot.core.config import Secret, Settings
from bot.core.logs import configure
from bot.runtime.app import StudyBot
from standins.discord_standin import DiscordStandIn
from standins.slack_standin import SlackStandIn, post_signed, slash_command, view_submission

SLACK_ANSWER = "Zebrafish explanation: data parallelism copies the model to every GPU"
DISCORD_ANSWER = "Quokka explanation: tensor parallelism splits each layer across GPUs"


def stand_in_records(record: logging.LogRecord) -> bool:
    """The stand-ins' own web servers log the URLs they are sent (with interaction tokens): not the bot."""
    return record.name.startswith("aiohttp.access")


async def test_debug_log_holds_no_secret_and_no_answer(tmp_path: Path, discord_fake: DiscordStandIn) -> None:  # noqa: F811
    out = io.StringIO()
    configure("DEBUG", out, secrets=[s for p in PLATFORMS for s in p.secrets],
              noisy=[n for p in PLATFORMS for n in p.noisy_loggers])
    logging.getLogger().handlers[0].addFilter(lambda r: not stand_in_records(r))
    try:
        async with SlackStandIn() as slack:
            settings = Settings(db_path=tmp_path / "bot.db", content_dir=CORE_PACK, results_dir=tmp_path / "results")
            bot = await StudyBot.start(settings, None)
            slack_adapter = SlackAdapter(bot, SlackSettings(
                bot_token=Secret(slack.bot_token), signing_secret=Secret(slack.signing_secret),
                api_url=slack.api_url, http_host="127.0.0.1", http_port=0))
            discord_adapter = DiscordAdapter(bot, DiscordSettings(
                token=Secret(discord_fake.token), api_url=discord_fake.api_base,
                gateway_url=discord_fake.gateway_url), guild_ready_timeout=0.05, ready_timeout=5)
            await slack_adapter.start()
            await discord_adapter.start()
            try:
                url = f"http://127.0.0.1:{slack_adapter.port}/slack/events"
                asked = slash_command("/teachback", trigger_id=slack.new_trigger_id())
                assert (await post_signed(url, *asked))[0] == 200
                [opened] = slack.calls_to("views.open")
                meta = opened.params["view"]["private_metadata"]
                answer = view_submission("studybot_form", meta, {"answer": {"text": SLACK_ANSWER}})
                status, _ = await post_signed(url, *answer)
                assert status == 200
                await slack_adapter.idle()

                form = await discord_fake.interact(discord_fake.slash("teachback"))
                assert form.type == 9
                done = await discord_fake.interact(discord_fake.modal_submit(form.data["custom_id"],
                                                                             {"answer": DISCORD_ANSWER}))
                assert "You covered" in done.data["content"]
                assert await bot.store.count("teachbacks") == 2  # both explanations were handled and stored
            finally:
                await discord_adapter.close()
                await slack_adapter.close()
                await bot.close()
    finally:
        configure("WARNING")
    log = out.getvalue()
    assert "handled platform=slack" in log and "handled platform=discord" in log  # the log did capture both
    assert "DEBUG" in log
    for secret in (slack.bot_token, slack.signing_secret, discord_fake.token, "Zebrafish", "Quokka"):
        assert secret not in log, f"{secret[:12]}… leaked into the log"
    assert json.dumps(SLACK_ANSWER)[1:20] not in log


async def test_the_sdks_say_nothing_at_start_that_needs_no_action(tmp_path: Path, caplog, monkeypatch) -> None:
    """Every start used to log slack-bolt's "As you gave `client` as well, `token` will be unused"
    (SLACK_BOT_TOKEN is in the environment) and discord.py's two voice warnings: none is logged now."""
    import discord

    monkeypatch.setenv("SLACK_BOT_TOKEN", "xoxb-from-the-environment")
    monkeypatch.setattr(discord.VoiceClient, "warn_nacl", True)
    monkeypatch.setattr(discord.VoiceClient, "warn_dave", True)
    settings = Settings(db_path=tmp_path / "bot.db", content_dir=CORE_PACK, results_dir=tmp_path / "results")
    bot = await StudyBot.start(settings, None)
    try:
        with caplog.at_level(logging.INFO):
            SlackAdapter(bot, SlackSettings(bot_token=Secret("xoxb-1"), signing_secret=Secret("s"),
                                            http_host="127.0.0.1", http_port=0))
            DiscordAdapter(bot, DiscordSettings(token=Secret("t")))
    finally:
        await bot.close()
    said = [r.getMessage() for r in caplog.records if r.name.startswith(("slack_bolt", "discord"))]
    assert not [line for line in said if "will be unused" in line or "voice will NOT be supported" in line], said
