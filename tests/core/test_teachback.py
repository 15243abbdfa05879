from support import channel, learner

from bot.messages import Command, TextSubmitted


async def test_teachback_lists_covered_and_missed_and_stores_the_attempt(bot) -> None:
    who = learner()
    [reply] = await bot.handle(Command("teachback", "", who, channel()))
    assert reply.form is not None
    prompt = next(p for p in bot.library.prompts.values() if p.prompt in reply.text)
    good = ". ".join(k.accept[0] for k in prompt.key_points)
    [feedback] = await bot.handle(TextSubmitted(reply.form.token, good, who, channel()))
    assert f"You covered {len(prompt.key_points)} of {len(prompt.key_points)}" in feedback.text
    assert "earns 1 point" in feedback.text
    assert await bot.store.count("teachbacks") == 1


async def test_partial_explanation_names_what_was_missed(bot) -> None:
    who = learner()
    [reply] = await bot.handle(Command("teachback", "", who, channel()))
    prompt = next(p for p in bot.library.prompts.values() if p.prompt in reply.text)
    [feedback] = await bot.handle(TextSubmitted(reply.form.token, prompt.key_points[0].accept[0], who, channel()))
    assert "missed" in feedback.text


async def test_empty_or_too_long_explanation_is_refused_and_not_stored(bot) -> None:
    who = learner()
    [reply] = await bot.handle(Command("teachback", "", who, channel()))
    for text in ("", "  \n ", "word " * 1000):
        [refusal] = await bot.handle(TextSubmitted(reply.form.token, text, who, channel()))
        assert "empty" in refusal.text or "4,000" in refusal.text
    assert await bot.store.count("teachbacks") == 0


async def test_a_form_submitted_twice_stores_one_attempt(bot) -> None:
    """A redelivered or double-submitted teach-back form is spent like a button."""
    import asyncio

    who = learner()
    [reply] = await bot.handle(Command("teachback", "", who, channel()))
    prompt = next(p for p in bot.library.prompts.values() if p.prompt in reply.text)
    good = ". ".join(k.accept[0] for k in prompt.key_points)
    first, second = await asyncio.gather(*(bot.handle(TextSubmitted(reply.form.token, good, who, channel()))
                                           for _ in range(2)))
    texts = sorted(r.text for r in (*first, *second))
    assert texts[0].startswith("You already sent this explanation") and "earns 1 point" in texts[1]
    assert await bot.store.count("teachbacks") == 1
    [standing] = [await bot.store.boards.standing(who, None)]
    assert standing.points == 1


async def test_a_teachback_counts_whole_key_points_only(bot) -> None:
    who = learner()
    [reply] = await bot.handle(Command("teachback", "core-tb1", who, channel()))
    assert reply.form is not None and bot.library.prompts["core-tb1"].rubric.needed == 2
    half = "Data parallelism copies the model; tensor parallelism splits things up."
    [feedback] = await bot.handle(TextSubmitted(reply.form.token, half, who, channel()))
    assert "You covered 1 of 2 key points; 2 earn the point." in feedback.text
    [reply] = await bot.handle(Command("teachback", "core-tb1", who, channel()))
    whole = "Data parallelism copies the model; tensor parallelism splits each layer."
    [feedback] = await bot.handle(TextSubmitted(reply.form.token, whole, who, channel()))
    assert "You covered 2 of 2 key points." in feedback.text and "earns 1 point" in feedback.text
