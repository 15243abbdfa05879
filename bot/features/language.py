"""/language: the language a learner reads their own replies in. Their choice, stored per learner,
wins over what their platform says (Discord's locale, Slack's, the console's LANG); `/language clear`
gives it back to the platform. A cohort's public posts keep the cohort's language."""

from __future__ import annotations

import time

from bot.core import i18n
from bot.core.errors import StudyError
from bot.core.messages import Actor, Command, Reply
from bot.kit.commands import Option, command
from bot.kit.context import Context
from bot.kit.feature import Feature
from bot.store import learners
from bot.store.areas import Area
from bot.store.engine import Conn, Engine

STEPS = {  # a learner's, in their cohort: /forget me deletes it with the rest (the cascade)
    1: """
    CREATE TABLE IF NOT EXISTS learner_languages (
        learner_id INTEGER PRIMARY KEY REFERENCES learners (id) ON DELETE CASCADE,
        language TEXT NOT NULL
    )
    """,
}
TRUSTED = 60.0  # seconds a process trusts the choice it read (another process may change it)
CLEAR = "clear"


class Languages:
    """Each learner's chosen language, read at most once a minute per learner by this process."""

    def __init__(self, engine: Engine) -> None:
        self._engine = engine
        self._known: dict[tuple[str, str, str], tuple[str | None, float]] = {}

    async def chosen(self, actor: Actor) -> str | None:
        key = learners.key(actor)
        known = self._known.get(key)
        if known is not None and known[1] > time.monotonic():
            return known[0]
        rows = await self._engine.read("SELECT c.language FROM learner_languages c JOIN learners l"
                                       " ON l.id = c.learner_id WHERE l." + learners.LEARNER_KEY, key)
        language = str(rows[0][0]) if rows else None
        self._known[key] = (language, time.monotonic() + TRUSTED)
        return language

    async def choose(self, actor: Actor, language: str | None) -> None:
        """Store (or, with None, clear) the learner's choice."""

        def run(c: Conn) -> None:
            learner = learners.upsert(c, actor, now)
            if language is None:
                c.execute("DELETE FROM learner_languages WHERE learner_id = ?", (learner,))
            else:
                c.execute("INSERT INTO learner_languages (learner_id, language) VALUES (?, ?)"
                          " ON CONFLICT (learner_id) DO UPDATE SET language = excluded.language", (learner, language))

        now = self._engine.now()
        await self._engine.write(run)
        self._known[learners.key(actor)] = (language, time.monotonic() + TRUSTED)


AREA = Area("language", STEPS, Languages)


async def reader_of(ctx: Context, actor: Actor) -> i18n.Translator:
    """The language of a learner's private replies: their choice, else their platform's locale, else
    their cohort's language."""
    chosen = await ctx.store.area(AREA).chosen(actor) if actor.user_id else None
    if chosen:
        return i18n.translator(chosen)
    if i18n.language_of(actor.locale):
        return i18n.translator(actor.locale)
    fallback = i18n.translator(actor.locale)  # says an unsupported locale once in the log
    return ctx.public(actor.in_cohort) if actor.cohort else fallback


def names(tr: i18n.Translator) -> str:
    """The shipped languages, each by its code and its own name: "de (Deutsch), en (English)…"."""
    return ", ".join(f"{code} ({i18n.translator(code).locale.display_name})" for code in i18n.SHIPPED)


@command(summary="Choose the language of your replies",
         options=(Option("language", "a language code, such as es or de, or clear"),))
async def language(ctx: Context, cmd: Command) -> list[Reply]:
    """/language [code]: read your replies in this language (es, de, en); no code says which one you read.
    /language clear: go back to your Slack, Discord or terminal language."""
    code = cmd.args.strip().lower()
    store = ctx.store.area(AREA)
    if not code:
        chosen = await store.chosen(cmd.actor)
        said = (ctx._("You chose {language}.", language=i18n.translator(chosen).locale.display_name) if chosen
                else ctx._("You read {language}, as your platform says.", language=ctx.tr.locale.display_name))
        return [Reply(said + "\n" + ctx._("Languages: {names}. Choose one with /language CODE.", names=names(ctx.tr)))]
    if code == CLEAR:
        await store.choose(cmd.actor, None)
        tr = await reader_of(ctx, cmd.actor)
        return [Reply(tr.gettext("Your choice is cleared: you read {language}, as your platform says.",
                                 language=tr.locale.display_name))]
    chosen_language = i18n.language_of(code)
    if chosen_language is None or chosen_language == i18n.PSEUDO:
        raise StudyError(ctx._("'{code}' is not a language studybot speaks. Languages: {names}.",
                               code=code[:20], names=names(ctx.tr)))
    await store.choose(cmd.actor, chosen_language)
    tr = i18n.translator(chosen_language)
    return [Reply(tr.gettext("From now on you read {language}. Public posts stay in the cohort's language.",
                             language=tr.locale.display_name))]


FEATURE = Feature("language", commands=(language,), storage=(AREA,))
