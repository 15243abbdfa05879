"""/lessons: every lesson, with the learner's own progress in each."""

import shutil
from dataclasses import replace

from support import CORE_PACK, channel, learner, record

from bot.core.messages import Command, TextSubmitted
from bot.runtime.app import StudyBot


def two_lessons(root):
    """The core pack and a copy of its lesson under other ids (no glossary: terms are unique)."""
    shutil.copytree(CORE_PACK / "basics", root / "basics")
    more = root / "more"
    more.mkdir()
    for name in ("lesson.yaml", "quiz.yaml", "teachback.yaml", "notes.md"):
        text = (CORE_PACK / "basics" / name).read_text(encoding="utf-8")
        (more / name).write_text(text.replace("core-", "more-").replace("Core basics", "More basics"),
                                 encoding="utf-8")
    return root


async def test_lessons_lists_each_lesson_with_the_learners_progress(settings, clock, tmp_path) -> None:
    bot = await StudyBot.start(replace(settings, content_dir=two_lessons(tmp_path / "packs")), clock)
    try:
        who = learner()
        await record(bot, who, "core-q1", correct=True, lesson_id="core-basics")
        await record(bot, who, "core-q4", correct=False, lesson_id="core-basics")
        await record(bot, who, "core-q4", correct=True, lesson_id="core-basics")  # practice: the first one counts
        for prompt_id, explanation in (("more-tb2", "It is throughput over peak."),
                                       ("core-tb2", "It is about buying more GPUs for the team, I think.")):
            [form] = await bot.handle(Command("teachback", prompt_id, who, channel()))
            [graded] = await bot.handle(TextSubmitted(form.form.token, explanation, who, channel()))
            assert ("earns 1 point" in graded.text) == (prompt_id == "more-tb2")
        [mine] = await bot.handle(Command("lessons", "", who, channel()))
        assert mine.text.splitlines() == [
            "Lessons",
            "• core-basics: Core basics · 2/4 answered, 1 right",
            "  teach-backs passed 0 of 2: core-tb1, core-tb2 (tried)",  # a failed attempt is no pass
            "• more-basics: More basics · 0/4 answered, 0 right",
            "  teach-backs passed 1 of 2: more-tb1, more-tb2 ✓",
        ]
        [theirs] = await bot.handle(Command("lessons", "", learner("U2"), channel()))
        assert theirs.text.splitlines()[1:] == ["• core-basics: Core basics · not started",
                                                "  teach-backs passed 0 of 2: core-tb1, core-tb2",
                                                "• more-basics: More basics · not started",
                                                "  teach-backs passed 0 of 2: more-tb1, more-tb2"]
    finally:
        await bot.close()


async def test_a_prefix_of_two_lessons_names_both(settings, clock, tmp_path) -> None:
    """`core` could be core-basics or core-more: the learner is told which ids it could be."""
    root = two_lessons(tmp_path / "packs")
    for name in ("lesson.yaml", "quiz.yaml", "teachback.yaml"):
        file = root / "more" / name
        file.write_text(file.read_text(encoding="utf-8").replace("more-basics", "core-more"), encoding="utf-8")
    bot = await StudyBot.start(replace(settings, content_dir=root), clock)
    try:
        for command, args in (("quiz", "core"), ("quiz", "round co"), ("review", "core")):
            [reply] = await bot.handle(Command(command, args, learner(), channel()))
            assert reply.text.endswith("could be core-basics or core-more; type more of its id."), (command, args)
    finally:
        await bot.close()
