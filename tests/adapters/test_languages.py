"""Whose language, where: a private reply in the learner's (their /language choice, else their
platform's locale), a public post in the cohort's; through the real SDKs against the stand-ins."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from support import CORE_PACK, channel, learner
from test_discord_app import private_reply, public_posts, start, stop
from test_slack_app import command

from adapters.console import ConsoleChat, terminal_language
from adapters.discord_settings import DiscordSettings
from adapters.platforms import settings_from_env
from adapters.slack_app import SlackAdapter
from adapters.slack_settings import SlackSettings
from bot.core.clock import FixedClock
from bot.core.config import CohortSettings, ConfigError, Secret, Settings
from bot.core.messages import Cohort, Command
from bot.features.language import AREA
from bot.runtime.app import StudyBot
from standins.discord_standin import DiscordStandIn
from standins.slack_standin import TEAM_ID, SlackStandIn

NO_TERM_ES = "El glosario no tiene el término «xyzzy»"
NO_TERM_DE = "Das Glossar hat keinen Begriff „xyzzy“"
NO_TERM_EN = "No term 'xyzzy' in the glossary"


def in_language(settings: Settings, cohort: Cohort, language: str) -> Settings:
    return replace(settings, cohorts={cohort: CohortSettings(language=language)})


# -- Discord ---------------------------------------------------------------------------------------


async def test_a_spanish_learner_reads_spanish_while_the_round_posts_in_the_cohorts_german(
        tmp_path: Path, discord_fake: DiscordStandIn) -> None:
    fake = discord_fake
    settings = in_language(Settings(db_path=tmp_path / "bot.db", content_dir=CORE_PACK,
                                    results_dir=tmp_path / "results", round_seconds=60),
                           Cohort("discord", fake.guild_id), "de")
    platform = DiscordSettings(token=Secret(fake.token), api_url=fake.api_base, gateway_url=fake.gateway_url)
    studybot, adapter = await start(settings, FixedClock("2026-11-30T09:00:00+00:00"), platform)
    try:
        started = await fake.interact(fake.slash("quiz", {"mode": "round"}, locale="es-ES"))
        assert (await private_reply(fake, started))["content"].startswith("Ronda iniciada: ")
        [question] = await public_posts(fake, 1)
        assert question["content"].startswith("Runde · Frage 1 von ")  # the cohort's, not the starter's
        assert any(b["label"] == "Weiter ▶" for row in question["components"] for b in row["components"])

        said = await fake.interact(fake.slash("glossary", {"term": "xyzzy"}, locale="es-ES"))
        assert said.data["content"].startswith(NO_TERM_ES) and said.data["flags"] == 64
        english = await fake.interact(fake.slash("glossary", {"term": "xyzzy"}, locale="en-US"))
        assert english.data["content"].startswith(NO_TERM_EN)  # another learner, in English

        chosen = await fake.interact(fake.slash("language", {"language": "en"}, locale="es-ES"))
        assert chosen.data["content"].startswith("From now on you read English.")
        after = await fake.interact(fake.slash("glossary", {"term": "xyzzy"}, locale="es-ES"))
        assert after.data["content"].startswith(NO_TERM_EN)  # the choice wins over Discord's locale
    finally:
        await stop(studybot, adapter)


async def test_the_synced_commands_carry_their_descriptions_in_every_shipped_language(
        tmp_path: Path, discord_fake: DiscordStandIn) -> None:
    fake = discord_fake
    settings = Settings(db_path=tmp_path / "bot.db", content_dir=CORE_PACK, results_dir=tmp_path / "results")
    platform = DiscordSettings(token=Secret(fake.token), api_url=fake.api_base, gateway_url=fake.gateway_url)
    studybot, adapter = await start(settings, FixedClock("2026-11-30T09:00:00+00:00"), platform)
    try:
        synced = {c["name"]: c for c in fake.commands[None]}
    finally:
        await stop(studybot, adapter)
    glossary = synced["glossary"]
    assert glossary["description"] == "Look up a term's plain-language definition"
    assert glossary["description_localizations"]["es-ES"] == "Busca la definición de un término en lenguaje sencillo"
    assert glossary["description_localizations"]["es-419"] == glossary["description_localizations"]["es-ES"]
    assert glossary["description_localizations"]["de"].startswith("Schlag die Definition")
    [term] = glossary["options"]
    assert term["description_localizations"]["de"] == "der Begriff (leer, um alle zu sehen)"
    for declared in synced.values():  # every description translated, none cut to fit
        assert {"es-ES", "de"} <= set(declared["description_localizations"])
        for option in declared.get("options", []):
            assert not option["description_localizations"]["es-ES"].endswith("…")
        assert not declared.get("name_localizations")  # the names stay the ones /help shows


# -- Slack -----------------------------------------------------------------------------------------


@pytest.fixture
async def slack_bot(tmp_path: Path) -> StudyBot:
    settings = Settings(db_path=tmp_path / "bot.db", content_dir=CORE_PACK, results_dir=tmp_path / "results")
    studybot = await StudyBot.start(settings, FixedClock("2026-11-30T09:00:00+00:00"))
    yield studybot
    await studybot.close()


async def test_a_slack_learners_locale_is_fetched_once_for_many_events_and_language_overrides_it(
        slack_bot: StudyBot, slack: SlackSettings, fake: SlackStandIn) -> None:
    fake.users["U0001"] = {"locale": "es-ES"}
    adapter = SlackAdapter(slack_bot, slack)
    await adapter.start()
    try:
        for _ in range(5):
            assert (await command(adapter, fake, "/glossary", "xyzzy")).startswith(NO_TERM_ES)
        assert (await command(adapter, fake, "/glossary", "xyzzy", user_id="U0002")).startswith(NO_TERM_EN)
        assert (await command(adapter, fake, "/language", "de")).startswith("Ab jetzt liest du Deutsch.")
        assert (await command(adapter, fake, "/glossary", "xyzzy")).startswith(NO_TERM_DE)
        assert (await command(adapter, fake, "/language", "klingon")).startswith(
            "„klingon“ ist keine Sprache, die studybot spricht.")
        assert (await command(adapter, fake, "/language", "clear")).startswith(
            "Tu elección se ha borrado: lees en español")
        assert (await command(adapter, fake, "/glossary", "xyzzy")).startswith(NO_TERM_ES)
    finally:
        await adapter.close()
    looked_up = [c.params["user"] for c in fake.calls_to("users.info")]
    assert looked_up == ["U0001", "U0002"]  # once per learner, not once per event
    assert all(c.params["include_locale"] in ("1", "true") for c in fake.calls_to("users.info"))


# -- the console and the config --------------------------------------------------------------------


async def test_the_console_reads_lang_or_its_language_option(bot: StudyBot, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("LANGUAGE", "LC_ALL", "LC_MESSAGES"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("LANG", "de_DE.UTF-8")
    assert terminal_language() == "de_DE.UTF-8"
    assert ConsoleChat(bot).actor.locale == "de_DE.UTF-8"
    assert ConsoleChat(bot, language="es").actor.locale == "es"
    chat = ConsoleChat(bot)
    [reply] = await bot.handle(Command("glossary", "xyzzy", chat.actor, chat.place))
    assert reply.text.startswith(NO_TERM_DE)


def test_a_cohorts_language_is_one_studybot_ships(tmp_path: Path) -> None:
    config = tmp_path / "studybot.yaml"
    config.write_text(f"cohorts:\n  {TEAM_ID}: {{platform: slack, language: es-ES}}\n")
    settings = settings_from_env({"STUDYBOT_CONFIG": str(config)})
    assert settings.cohort(Cohort("slack", TEAM_ID)).language == "es"
    assert settings.cohort(Cohort("slack", "other")).language == "en"
    config.write_text(f"cohorts:\n  {TEAM_ID}: {{platform: slack, language: fr}}\n")
    with pytest.raises(ConfigError, match="language: 'fr' is not a language studybot ships; write one of en, de, es"):
        settings_from_env({"STUDYBOT_CONFIG": str(config)})


@pytest.mark.both_engines
async def test_a_learners_choice_is_theirs_in_their_cohort_and_forgotten_with_them(bot: StudyBot) -> None:
    ana = replace(learner("U1"), locale="de-DE")
    [chosen] = await bot.handle(Command("language", "es", ana, channel()))
    assert chosen.text.startswith("A partir de ahora lees en español.")
    assert await bot.store.area(AREA).chosen(ana) == "es"
    assert await bot.store.area(AREA).chosen(replace(ana, cohort="T2")) is None  # another cohort: not chosen there
    assert await bot.store.forget(ana)
    assert await AREA.make(bot.store.engine).chosen(ana) is None  # read afresh: gone with the learner
