from support import channel, learner

from bot.content.model import Term
from bot.content.term_index import Glossary
from bot.core.messages import Command


async def ask(bot, text: str) -> str:
    replies = await bot.handle(Command("glossary", text, learner(), channel()))
    assert len(replies) == 1
    return replies[0].text


async def test_exact_alias_and_case_insensitive_lookups(bot) -> None:
    assert "FSDP" in await ask(bot, "fsdp")
    assert "FSDP" in await ask(bot, "Fully Sharded Data Parallel")
    assert "MFU" in await ask(bot, "mFu")


async def test_typo_gets_did_you_mean(bot) -> None:
    text = await ask(bot, "FDSP")
    assert "Did you mean" in text and "FSDP" in text


async def test_unknown_term_says_so_and_suggests_the_list(bot) -> None:
    text = await ask(bot, "zzqqxx")
    assert "No term 'zzqqxx'" in text and "/glossary" in text and "Did you mean" not in text


async def test_bare_glossary_lists_every_term(bot) -> None:
    text = await ask(bot, "")
    assert all(t.term in text for t in bot.ctx.glossary.terms)


def test_autocomplete_prefix_first_then_fuzzy_at_most_25() -> None:
    terms = [Term(f"term{i:03d}", "d", "l") for i in range(60)] + [Term("Pipeline parallelism", "d", "l")]
    g = Glossary(terms)
    assert g.autocomplete("term00")[:10] == [f"term00{i}" for i in range(10)]
    assert len(g.autocomplete("term")) == 25
    assert g.autocomplete("pipline")[0] == "Pipeline parallelism"
