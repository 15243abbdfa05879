import pytest
from support import channel, learner

from bot.core.messages import ChoiceMade, Command, TextSubmitted

pytestmark = pytest.mark.both_engines


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


async def test_after_a_point_the_reply_names_a_prompt_left_or_says_none_is(bot) -> None:
    """"1 of 1 key point" in the singular; after a point, the next prompt not passed yet, and once every
    prompt of the lesson is passed, that (never "try again for another prompt" with none left)."""
    who = learner()
    lesson = next(iter(bot.library.lessons.values()))
    assert [p.id for p in lesson.prompts] == ["core-tb1", "core-tb2"]
    said = []
    for prompt_id in ("core-tb2", "core-tb1"):
        [reply] = await bot.handle(Command("teachback", prompt_id, who, channel()))
        good = ". ".join(k.accept[0] for k in bot.library.prompts[prompt_id].key_points)
        [feedback] = await bot.handle(TextSubmitted(reply.form.token, good, who, channel()))
        said.append(feedback.text)
    assert said[0].startswith("You covered 1 of 1 key point.\n")
    assert said[0].endswith("That earns 1 point. Next: /teachback core-tb1 for another prompt.")
    assert said[1].startswith("You covered 2 of 2 key points.\n")
    assert said[1].endswith(f"That earns 1 point. You have now passed all 2 teach-back prompts of {lesson.title}.")


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


async def test_a_missed_teachback_offers_the_same_prompt_again(bot) -> None:
    who = learner()
    [first] = await bot.handle(Command("teachback", "", who, channel()))
    assert first.text.startswith("Teach-back (core-tb1):")
    item = bot.library.prompts["core-tb1"]
    [missed] = await bot.handle(TextSubmitted(first.form.token, item.key_points[0].accept[0], who, channel()))
    [again] = [c for c in missed.choices if c.label == "Try this one again"]
    [fresh] = await bot.handle(Command("teachback", "", who, channel()))
    assert fresh.text.startswith("Teach-back (core-tb2):")  # a plain /teachback moves on to another prompt
    [refusal] = await bot.handle(ChoiceMade(again.token, learner("U2"), channel()))
    assert "someone else" in refusal.text
    [retry] = await bot.handle(ChoiceMade(again.token, who, channel()))
    assert retry.text == first.text and retry.form.token not in (first.form.token, fresh.form.token)
    good = ". ".join(k.accept[0] for k in item.key_points)
    [passed] = await bot.handle(TextSubmitted(retry.form.token, good, who, channel()))
    assert "earns 1 point" in passed.text and not passed.choices
    rows = await bot.store.engine.read("SELECT prompt_id FROM teachbacks ORDER BY id")
    assert [r["prompt_id"] for r in rows] == ["core-tb1", "core-tb1"]


async def test_teachback_with_a_prompt_id_serves_that_prompt(bot) -> None:
    for typed in ("core-tb2", "CORE-TB2"):
        [reply] = await bot.handle(Command("teachback", typed, learner(), channel()))
        assert reply.text == f"Teach-back (core-tb2): {bot.library.prompts['core-tb2'].prompt}"
        assert reply.form is not None


async def test_an_unknown_prompt_id_gets_a_short_answer_with_a_did_you_mean(bot) -> None:
    [reply] = await bot.handle(Command("teachback", "core-tb3", learner(), channel()))
    assert "'core-tb3'" in reply.text and "did you mean 'core-tb" in reply.text and "/teachback" in reply.text
    assert len(reply.text) < 200 and reply.form is None
    [lesson_typo] = await bot.handle(Command("teachback", "core-basis", learner(), channel()))
    assert "did you mean 'core-basics'?" in lesson_typo.text


async def test_an_explanation_too_short_to_grade_is_not_stored_and_the_prompt_stays_open(bot) -> None:
    who = learner()
    [reply] = await bot.handle(Command("teachback", "", who, channel()))
    prompt = next(p for p in bot.library.prompts.values() if p.prompt in reply.text)
    [refused] = await bot.handle(TextSubmitted(reply.form.token, "x", who, channel()))
    assert "too short" in refused.text and await bot.store.count("teachbacks") == 0
    good = ". ".join(k.accept[0] for k in prompt.key_points)
    [feedback] = await bot.handle(TextSubmitted(reply.form.token, good, who, channel()))
    assert "earns 1 point" in feedback.text


async def test_a_keyword_list_earns_no_teachback_point(bot) -> None:
    from bot.grading.selfcheck import bare_list

    who = learner()
    [reply] = await bot.handle(Command("teachback", "", who, channel()))
    prompt = next(p for p in bot.library.prompts.values() if p.prompt in reply.text)
    for joiner in (", ", " so "):
        keywords = bare_list(prompt.rubric, bot.ctx.synonyms(prompt.lesson_id), joiner)
        [feedback] = await bot.handle(TextSubmitted(reply.form.token, keywords, who, channel()))
        assert "earns 1 point" not in feedback.text, keywords
        again = next(c for c in feedback.choices if c.label == "Try this one again")
        [reply] = await bot.handle(ChoiceMade(again.token, who, channel()))
