"""/glossary: a term's plain-language definition, with did-you-mean for typos."""

from __future__ import annotations

from collections.abc import Mapping

from bot.content.model import Term
from bot.core import i18n
from bot.core.messages import Command, Reply
from bot.grading.reading import normalise
from bot.kit.commands import Option, command
from bot.kit.context import Context
from bot.kit.feature import Feature

COUNTED = 60  # characters of a missing query kept for the count


def describe(term: Term, sources: Mapping[str, str] | None = None) -> str:
    """A term as the chat shows it; its sources by title and link where the lesson's notes give them."""
    tr = i18n.current()
    lines = [f"**{term.term}**" + (f" ({', '.join(term.aliases)})" if term.aliases else ""), term.definition]
    if term.related:
        lines.append(tr.gettext("Related: {terms}", terms=", ".join(term.related)))
    if term.sources:
        named = "; ".join((sources or {}).get(s, s) for s in term.sources)
        lines.append(tr.gettext("Sources: {sources}", sources=named))
    return "\n".join(lines)


def count_lookup(ctx: Context, cmd: Command, term: Term | None, query: str) -> None:
    """Count the lookup for the cohort's instructors (/insights): the term, or the query the
    glossary lacks; never who asked. The count is written behind the reply."""
    counted = term.term if term else normalise(query)[:COUNTED]
    if counted:
        cohort = cmd.actor.in_cohort
        ctx.store.insights.looked_up(cohort, ctx.week(cohort), counted, term is not None)


def suggest_terms(ctx: Context, typed: str) -> list[str]:
    return ctx.glossary.autocomplete(typed)


@command(summary="Look up a term's plain-language definition",
         options=(Option("term", "the term (leave empty to list them all)", suggest=suggest_terms),))
async def glossary(ctx: Context, cmd: Command) -> list[Reply]:
    """/glossary [term]: a term's plain-language definition; no term lists them all."""
    query = cmd.args.strip()
    glossary = ctx.glossary
    if not query:
        names = ", ".join(t.term for t in glossary.terms)
        return [Reply(ctx._("Glossary terms ({count}): {names}\nLook one up with /glossary TERM.",
                            count=ctx.tr.decimal(len(glossary.terms)), names=names))]
    term, how = glossary.find(query)
    count_lookup(ctx, cmd, term, query)
    if term:
        lesson = ctx.library.lessons.get(term.lesson_id)
        note = ctx._("No term '{query}'; this is {term}, {how}.", query=query[:60], term=term.term,
                     how=ctx._(how)) + "\n" if how else ""
        return [Reply(note + describe(term, lesson.sources if lesson else None))]
    close = glossary.suggest(query)
    if close:
        names = ", ".join(t.term for t in close)
        return [Reply(ctx._("No term '{query}'. Did you mean: {names}?\nTry /glossary {term}.",
                            query=query[:60], names=names, term=close[0].term))]
    return [Reply(ctx._("No term '{query}' in the glossary. Type /glossary to list every term.", query=query[:60]))]


FEATURE = Feature("glossary", commands=(glossary,))
