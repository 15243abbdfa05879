"""quiz_results.txt and /forget me."""

from support import answer, channel, learner

from bot.messages import Audience, ChoiceMade, Command


async def answer_first(bot, who, right=True):
    [q] = await bot.handle(Command("quiz", "", who, channel()))
    question = next(iter(bot.library.lessons.values())).questions[0]
    await bot.handle(answer(question, q, who, channel(), right))


async def test_results_file_by_dm_with_score_and_lines(bot, settings) -> None:
    who = learner("U1")
    await answer_first(bot, who)
    replies = await bot.handle(Command("results", "", who, channel()))
    [sent] = [r for r in replies if r.file]
    assert sent.audience is Audience.DM and sent.file.filename == "quiz_results.txt"
    text = sent.file.content.decode()
    lesson = next(iter(bot.library.lessons.values()))
    total = len(lesson.questions)
    assert f"score: 1/{total} ({round(100 / total)}%)" in text
    assert f"{lesson.questions[0].id}\tmc\tcorrect" in text
    assert f"{lesson.questions[1].id}\t{lesson.questions[1].kind}\tunanswered" in text
    path = settings.results_dir / "T1" / "slack-U1" / "quiz_results.txt"
    assert path.read_bytes() == sent.file.content


async def test_results_here_is_public(bot) -> None:
    replies = await bot.handle(Command("results", "here", learner(), channel()))
    assert [r.audience for r in replies if r.file] == [Audience.PUBLIC]


async def test_cohort_results_for_instructors_only(bot) -> None:
    await answer_first(bot, learner("U1"))
    await answer_first(bot, learner("U2"), right=False)
    [refusal] = await bot.handle(Command("results", "cohort", learner("U3"), channel()))
    assert "Only instructors" in refusal.text
    replies = await bot.handle(Command("results", "cohort", learner("U3", teacher=True), channel()))
    text = next(r for r in replies if r.file).file.content.decode()
    assert "learner: slack:U1" in text and "learner: slack:U2" in text


async def test_paths_are_built_from_ids_only(bot, settings) -> None:
    sneaky = learner("../../etc/passwd", cohort="../..")
    await bot.handle(Command("results", "", sneaky, channel("../..")))
    written = [p for p in settings.results_dir.rglob("quiz_results.txt")]
    assert len(written) == 1 and settings.results_dir in written[0].parents
    assert ".." not in written[0].relative_to(settings.results_dir).parts


async def test_forget_me_asks_then_deletes_every_row(bot, settings) -> None:
    who = learner("U1")
    await answer_first(bot, who)
    await bot.handle(Command("results", "", who, channel()))
    [ask] = await bot.handle(Command("forget", "me", who, channel()))
    assert await bot.store.count("answers") == 1  # nothing deleted before the confirmation
    [done] = await bot.handle(ChoiceMade(ask.choices[0].token, who, channel()))
    assert "deleted" in done.text
    for table in ("answers", "learners", "weekly_scores", "prompt_uses"):
        assert await bot.store.count(table) == 0, table
    assert not (settings.results_dir / "T1" / "slack-U1").exists()
