"""quiz_results.txt and /forget me."""

import pytest
from support import answer, channel, learner

from bot.core.messages import Audience, ChoiceMade, Command

pytestmark = pytest.mark.both_engines


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


def test_folder_names_are_one_to_one_with_ids(tmp_path) -> None:
    from bot.core.messages import Actor, Cohort
    from bot.reports import files

    learners = [Actor("slack", c, u) for c, u in (("a.b", "U1"), ("a_b", "U1"), ("T1", "x.y"), ("T1", "x_y"),
                                                  ("T1", "cohort"), ("T1", "@cohort"), ("T1", "u" * 200),
                                                  ("T1", "u" * 199 + "v"), ("T1", ".."), ("T1", ""))]
    folders = [files.learner_dir(tmp_path, who) for who in learners]
    exports = [files.cohort_dir(tmp_path, Cohort("slack", c)) for c in ("T1", "a.b", "a_b")]
    everything = folders + exports
    assert len(set(everything)) == len(everything)
    assert all(tmp_path in f.parents and ".." not in f.relative_to(tmp_path).parts for f in everything)
    assert all(len(part) <= files.LONGEST + 10 for f in everything for part in f.relative_to(tmp_path).parts)


async def test_line_breaks_in_a_name_do_not_break_the_file(bot) -> None:
    who = learner("U1")
    named = type(who)(who.platform, who.cohort, who.user_id, "Eve\u2028learner: slack:UEVIL\u2029\x85x")
    replies = await bot.handle(Command("results", "", named, channel()))
    text = next(r for r in replies if r.file).file.content.decode()
    lines = text.splitlines()
    assert sum(line.startswith("learner: ") for line in lines) == len(bot.library.lessons)  # no forged block
    assert [line for line in lines if line.startswith("name: ")] == ["name: Eve learner: slack:UEVIL  x"]
    assert not any(ch in text for ch in "\u2028\u2029\x85")


async def test_a_full_disk_says_so_and_what_to_do(bot, monkeypatch) -> None:
    import errno
    import os

    def full(fd):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "fsync", full)
    [reply] = await bot.handle(Command("results", "", learner("U1"), channel()))
    assert reply.text.startswith("The disk is full, so your results file could not be written. Try again later")


async def test_forget_removes_the_cohort_export_that_listed_the_learner(bot, settings) -> None:
    from bot.reports import files

    await answer_first(bot, learner("U1"))
    await bot.handle(Command("results", "cohort", learner("U9", teacher=True), channel()))
    export = files.cohort_dir(settings.results_dir, learner("U1").in_cohort) / "quiz_results.txt"
    assert "learner: slack:U1" in export.read_text()
    [ask] = await bot.handle(Command("forget", "me", learner("U1"), channel()))
    await bot.handle(ChoiceMade(ask.choices[0].token, learner("U1"), channel()))
    assert not export.exists()


async def test_results_racing_forget_leaves_no_file_of_a_forgotten_learner(bot, settings, monkeypatch) -> None:
    """/results reads the answers, then /forget me runs to its end, then /results would write: the
    file must not bring the forgotten answers back (the two are ordered)."""
    import asyncio

    from bot.reports import files

    real = bot.store.answers.scored

    async def slow(*args, **kwargs):  # the answers are read; the file is not written yet
        found = await real(*args, **kwargs)
        await asyncio.sleep(0.05)
        return found

    monkeypatch.setattr(bot.store.answers, "scored", slow)
    who = learner("U1")
    await answer_first(bot, who)
    [ask] = await bot.handle(Command("forget", "me", who, channel()))
    wrote = asyncio.create_task(bot.handle(Command("results", "", who, channel())))
    await asyncio.sleep(0.01)  # /results has read the answers
    [done] = await bot.handle(ChoiceMade(ask.choices[0].token, who, channel()))
    await wrote
    assert done.text.startswith("Done")
    path = files.learner_dir(settings.results_dir, who) / "quiz_results.txt"
    assert not path.exists() or "\tcorrect" not in path.read_text()
