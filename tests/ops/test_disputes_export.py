"""`studybot disputes export [lesson]`: the settled disputes as rubric `examples:` a lesson pack reads,
a file per lesson, its path printed; its failures one line."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

import yaml
from conftest import Run
from support import CORE_PACK, channel, learner
from test_cli_errors import failure

from bot.core.config import Settings
from bot.core.messages import ChoiceMade, Command, Reply, TextSubmitted
from bot.core.yamlcheck import Checker
from bot.features.disputes import ASK
from bot.runtime.app import StudyBot
from bot.store.model import QUESTION, AnswerMode

TEACHER = learner("UT", teacher=True)


async def dispute(bot: StudyBot, who, text: str, settle: str | None, item: str = "core-q2") -> None:
    """A short answer to `item`, disputed, then settled by pressing `settle` (None: left open)."""
    prompt = await bot.store.prompts.new(QUESTION, channel(), who, lesson_id="core-basics",
                                         item_id=item, mode=AnswerMode.PRACTICE)
    [feedback] = await bot.handle(TextSubmitted(prompt.id, text, who, channel()))
    await bot.handle(press(feedback, ASK, who))
    if settle:
        [listing] = await bot.handle(Command("audit", "disputes", TEACHER, channel()))
        await bot.handle(press(listing, settle, TEACHER))


def press(reply: Reply, label: str, who) -> ChoiceMade:
    return ChoiceMade(next(c.token for c in reply.choices if c.label.startswith(label)), who, channel())


async def seed(db: Path, disputes: bool = True) -> None:
    bot = await StudyBot.start(Settings(db_path=db, content_dir=CORE_PACK))
    try:
        if not disputes:
            return
        await dispute(bot, learner("U1"), "fsdp shards params  and the GPUs talk more", "Accept")
        await dispute(bot, learner("U2"), "FSDP shards the parameters, nothing else", "Reject")
        await dispute(bot, learner("U3"), "FSDP shards the parameters, I think", None)  # open: not exported
        [form] = await bot.handle(Command("teachback", "core-tb2", learner("U4"), channel()))
        [missed] = await bot.handle(TextSubmitted(form.form.token, "util of the chips vs their max", learner("U4"),
                                                  channel()))
        await bot.handle(press(missed, ASK, learner("U4")))
        [listing] = await bot.handle(Command("audit", "disputes", TEACHER, channel()))
        await bot.handle(press(listing, "Accept #4", TEACHER))  # the teach-back's, not the open one (#3)
    finally:
        await bot.close()


def test_settled_disputes_become_examples_a_pack_reads(studybot: Run, tmp_path: Path) -> None:  # noqa: F811
    asyncio.run(seed(tmp_path / "bot.db"))
    code, out, err = studybot("disputes", "export", "core-basics", "--out", str(tmp_path / "out"))
    target = tmp_path / "out" / "core-basics.examples.yaml"
    assert (code, out, err) == (0, f"wrote {target} (3 settled dispute(s))\n", "")
    text = target.read_text()
    assert "# core-q2 in quiz.yaml: What does FSDP shard, and what does it pay for it?\n" in text
    assert "# core-tb2 in teachback.yaml: Explain what MFU tells you" in text
    found = yaml.safe_load(text)
    assert found == {
        "core-q2": {"examples": {"correct": ["fsdp shards params and the GPUs talk more"],
                                 "wrong": ["FSDP shards the parameters, nothing else"]}},
        "core-tb2": {"examples": {"correct": ["util of the chips vs their max"]}},
    }
    checker = Checker()  # the lesson packs' own reading of `examples:`
    examples = checker.examples(found["core-q2"], ("core-q2",))
    assert not checker.problems and examples.correct == ("fsdp shards params and the GPUs talk more",)


LONG_PROMPT = ("Your data-parallel job keeps every optimizer state inside each GPU's memory; what does FSDP "
               "change about that, and what does it cost?")
PRACTICE = f"""\
questions:
  - id: core-p2
    type: short
    goal: splitting
    prompt: "{LONG_PROMPT}"
    model_answer: "It shards the parameters across GPUs and pays with extra communication."
    rubric:
      needed: 2
      points:
        - id: shards
          point: "FSDP shards the model state across GPUs"
          accept: ["shards the parameters", "splits the model"]
        - id: communication
          point: "It pays with extra communication"
          accept: ["extra communication", "more communication"]
    explanation: "Each GPU holds a shard and gathers the rest when it is needed."
    sources: [S1]
"""


def test_a_practice_question_is_named_in_its_own_file_its_prompt_cut_at_a_word(  # noqa: F811
        studybot: Run, tmp_path: Path) -> None:
    content = tmp_path / "content"
    shutil.copytree(CORE_PACK, content)
    (content / "basics" / "practice.yaml").write_text(PRACTICE)

    async def seed_practice() -> None:
        bot = await StudyBot.start(Settings(db_path=tmp_path / "bot.db", content_dir=content))
        try:
            await dispute(bot, learner("U1"), "fsdp shards params and the GPUs talk more", "Accept", "core-p2")
        finally:
            await bot.close()

    asyncio.run(seed_practice())
    code, _, err = studybot("disputes", "export", "--out", str(tmp_path / "out"), STUDYBOT_CONTENT=str(content))
    assert (code, err) == (0, "")
    [comment] = [line for line in (tmp_path / "out" / "core-basics.examples.yaml").read_text().splitlines()
                 if line.startswith("# core-p2")]
    head, prompt = comment.split(": ", 1)
    assert head == "# core-p2 in practice.yaml"
    assert prompt.endswith("…") and len(prompt) <= 100
    assert LONG_PROMPT.startswith(prompt[:-1]) and LONG_PROMPT[len(prompt) - 1] == " "  # cut between words


def test_the_default_folder_nothing_settled_and_mistakes(studybot: Run, tmp_path: Path) -> None:  # noqa: F811
    assert "the database" in failure(studybot("disputes", "export"))  # none yet
    asyncio.run(seed(tmp_path / "bot.db"))
    assert failure(studybot("disputes", "export", "core-basic")) == (
        f"studybot: no lesson 'core-basic' in {CORE_PACK} (did you mean 'core-basics'?); lessons: core-basics")
    code, out, _ = studybot("disputes", "export", STUDYBOT_RESULTS_DIR=str(tmp_path / "results"))
    assert (code, out) == (0, f"wrote {tmp_path / 'results' / '@disputes' / 'core-basics.examples.yaml'} "
                              "(3 settled dispute(s))\n")
    empty = tmp_path / "empty.db"
    asyncio.run(seed(empty, disputes=False))
    assert studybot("disputes", "export", STUDYBOT_DB=str(empty))[:2] == (
        0, "no settled disputes yet; nothing written\n")
