"""Public rounds: each question posted once, everyone answers once, and when the time is
up (a stored timer) or the starter presses Next, the question's message is edited into
the reveal with the answer and the tally."""

from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING

from bot.asking import LETTERS, ask
from bot.errors import StudyError
from bot.messages import Audience, Choice, ChoiceMade, Command, Reply, TimerFired
from bot.store import PromptRow, RoundRow

if TYPE_CHECKING:
    from bot.app import StudyBot

NEXT = "n"  # a choice suffix: the starter moves the round on


def _key(round_id: int, position: int) -> str:
    return f"round:{round_id}:{position}"


async def start_round(bot: StudyBot, cmd: Command, lesson_name: str) -> list[Reply]:
    if not cmd.place.channel_id:
        raise StudyError("Start a round in a channel, where others can join; use /quiz here to practise.")
    if bot.settings.rounds_instructors_only:
        bot.require_instructor(cmd, "start rounds in this cohort")
    lesson = bot.lesson(lesson_name)
    if not lesson.questions:
        raise StudyError(f"Lesson {lesson.id} has no questions yet.")
    round_id = await bot.store.open_round(cmd.place, cmd.actor, lesson.id, [q.id for q in lesson.questions])
    round_ = await bot.store.round(round_id)
    started = Reply(f"Round started: {len(lesson.questions)} questions, {bot.settings.round_seconds} s each. "
                    "Press Next on a question to reveal it early.")
    return [started, await _post_question(bot, round_, 0)]


async def _post_question(bot: StudyBot, round_: RoundRow, position: int) -> Reply:
    """The public message of a round's question, creating its prompt and timer once."""
    question = bot.library.questions[round_.question_ids[position]]
    prompt_id = await bot.store.round_prompt(round_.id, position)
    if prompt_id is None:
        prompt_id = await bot.store.new_prompt(
            "question", round_.place, None, lesson_id=round_.lesson_id, item_id=question.id, mode="round",
            round_id=round_.id, data={"position": position},
        )
        due = bot.clock.now() + timedelta(seconds=bot.settings.round_seconds)
        await bot.store.set_timer(_key(round_.id, position), due, {"round": round_.id, "position": position})
    header = _header(bot, round_, position)
    return ask(question, prompt_id, header, Audience.PUBLIC, extra=(Choice("Next ▶", f"{prompt_id}.{NEXT}"),),
               tag=_key(round_.id, position), place=round_.place)


def _header(bot: StudyBot, round_: RoundRow, position: int) -> str:
    return f"Round · question {position + 1} of {len(round_.question_ids)} · {bot.settings.round_seconds} s"


async def on_next(bot: StudyBot, event: ChoiceMade, prompt: PromptRow) -> list[Reply]:
    round_ = await bot.store.round(prompt.round_id) if prompt.round_id else None
    if round_ is None:
        raise StudyError("That round is gone.")
    starter = await bot.store.find_learner(event.actor)
    if starter != round_.starter_id and not event.actor.is_instructor:
        raise StudyError("Only the person who started the round (or an instructor) can move it on.")
    position = int(prompt.data["position"])
    replies = await reveal(bot, round_.id, position)
    await bot.store.delete_timer(_key(round_.id, position))  # revealed now: the timer has nothing left to do
    if not replies:
        return [Reply("That question was already revealed.")]
    return [Reply("Revealed."), *replies]


async def on_timer(bot: StudyBot, event: TimerFired, key: str) -> list[Reply]:
    _, round_id, position = key.split(":")
    return await reveal(bot, int(round_id), int(position))


async def reveal(bot: StudyBot, round_id: int, position: int) -> list[Reply]:
    """Close a question and move on. Safe to repeat after a crash: the reveal is an edit,
    and a question or summary already posted is not posted again."""
    round_ = await bot.store.round(round_id)
    prompt_id = await bot.store.round_prompt(round_id, position)
    if round_ is None or prompt_id is None or round_.position > position + 1:
        return []
    advanced = await bot.store.advance_round(round_id, position, prompt_id)
    if not advanced and round_.position != position + 1:
        return []
    round_ = await bot.store.round(round_id)
    replies = [await _reveal_edit(bot, round_, position, prompt_id)]
    if round_.state == "open":
        if await bot.store.message(_key(round_id, position + 1)) is None:
            replies.append(await _post_question(bot, round_, position + 1))
    elif await bot.store.message(f"round:{round_id}:summary") is None:
        replies.append(await _summary(bot, round_))
    return replies


async def _reveal_edit(bot: StudyBot, round_: RoundRow, position: int, prompt_id: str) -> Reply:
    question = bot.library.questions[round_.question_ids[position]]
    counts = await bot.store.tally(prompt_id)
    lines = [_header(bot, round_, position), question.prompt, ""]
    if question.type == "mc":
        right = question.correct_index
        lines.append(f"Answer: {LETTERS[right]}. {question.choices[right].text}")
        lines.append(" · ".join(
            f"{LETTERS[i]}: {counts.get(f'choice:{i}', 0)}" + (" ✓" if i == right else "")
            for i in range(len(question.choices))
        ))
    else:
        lines.append(f"Model answer: {question.model_answer}")
    lines.append(f"{counts['answers']} answered, {counts['correct']} correct.")
    lines.append(question.explanation)
    ref = await bot.store.message(_key(round_.id, position))
    return Reply("\n".join(lines), Audience.PUBLIC, edit=ref, place=round_.place)


async def _summary(bot: StudyBot, round_: RoundRow) -> Reply:
    scores = await bot.store.round_scores(round_.id)
    total = len(round_.question_ids)
    if scores:
        board = "\n".join(f"{name}: {right}/{total}" for name, right, _answered in scores[:10])
    else:
        board = "Nobody answered this time."
    return Reply(f"Round over.\n{board}\nPractise privately with /quiz; see the week with /leaderboard.",
                 Audience.PUBLIC, tag=f"round:{round_.id}:summary", place=round_.place)
