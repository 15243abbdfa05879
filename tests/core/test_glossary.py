import pytest
from support import CONTENT, channel, learner

from bot.content.loader import load_library
from bot.content.model import Term
from bot.content.term_index import Glossary
from bot.core.messages import Command
from bot.features.glossary import describe


async def ask(bot, text: str) -> str:
    replies = await bot.handle(Command("glossary", text, learner(), channel()))
    assert len(replies) == 1
    return replies[0].text


async def test_exact_alias_and_case_insensitive_lookups(bot) -> None:
    assert "FSDP" in await ask(bot, "fsdp")
    assert "FSDP" in await ask(bot, "Fully Sharded Data Parallel")
    assert "MFU" in await ask(bot, "mFu")


async def test_typo_gets_did_you_mean(bot) -> None:
    text = await ask(bot, "paralelism")  # near two terms: no one of them is answered for you
    assert "Did you mean" in text and "Data parallelism" in text and "Pipeline parallelism" in text


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


@pytest.mark.parametrize("query, term, note", [
    ("what is mfu", "MFU", ""),
    ("What does FSDP mean?", "FSDP", ""),
    ("pipe", "Pipeline parallelism",
     "No term 'pipe'; this is Pipeline parallelism, the only term whose words begin so."),
    ("fdsp", "FSDP", "No term 'fdsp'; this is FSDP, the closest term."),
])
async def test_a_question_a_word_or_one_obvious_typo_finds_the_term(bot, query: str, term: str, note: str) -> None:
    [reply] = await bot.handle(Command("glossary", query, learner(), channel()))
    lines = reply.text.splitlines()
    assert (lines[0] if note else "") == note
    assert lines[1 if note else 0].startswith(f"**{term}**"), reply.text


def test_a_word_of_a_term_finds_it_in_the_bundled_glossary() -> None:
    """"tensor" once suggested "Tokens"; it is the first word of Tensor parallelism."""
    glossary = Glossary(load_library(CONTENT).terms)
    assert glossary.find("tensor")[0].term == "Tensor parallelism"
    assert glossary.suggest("tensor")[0].term == "Tensor parallelism"
    assert glossary.find("what is mfu")[0].term == "MFU"


def test_sources_are_named_by_title_and_link() -> None:
    """Learners never see a bare source id such as P4: the lesson's notes give each its title and link."""
    lesson = next(iter(load_library(CONTENT).lessons.values()))
    term = next(t for t in lesson.terms if t.term == "FSDP")
    sources = describe(term, lesson.sources).splitlines()[-1]
    assert sources.startswith("Sources: PyTorch FSDP: Experiences on Scaling Fully Sharded Data Parallel "
                              "<https://arxiv.org/abs/2304.11277>"), sources
    assert not any(source in sources.split() for source in term.sources)
