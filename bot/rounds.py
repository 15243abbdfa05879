"""Public rounds: each question posted once, everyone answers once, and when the time is
up (a stored timer) or the starter presses Next, the question's message is edited into
the reveal with the answer and the tally."""

from __future__ import annotations

from datetime import timedelta

from bot.asking import arrangement
from bot.context import Context
from bot.errors import StudyError
from bot.messages import Audience, Choice, ChoiceMade, Command, Reply, TimerFired
from bot.store.model import AnswerMode, Prompt, PromptKind, Round, RoundState

NEXT = "n"  # a choice suffix: the starter moves the round on
TIMER = "round"  # timer keys: round:<round id>:<position>


def _key(round_id: int, position: int) -> str:
    return f"{TIMER}:{round_id}:{position}"


def _summary_tag(round_id: int) -> str:
    return f"{TIMER}:{round_id}:summary"


async def start_round(ctx: Context, cmd: Command, lesson_name: str) -> list[Reply]:
    if not cmd.place.channel_id:
        raise StudyError("Start a round in a channel, where others can join; use /quiz here to practise.")
    if ctx.settings.rounds_instructors_only:
        ctx.require_instructor(cmd.actor, "start rounds in this cohort")
    lesson = ctx.lesson(lesson_name)
    if not lesson.questions:
        raise StudyError(f"Lesson {lesson.id} has no questions yet.")
    round_id = await ctx.store.rounds.open(cmd.place, cmd.actor, lesson.id, [q.id for q in lesson.questions])
    round_ = await _round(ctx, round_id)
    started = Reply(f"Round started: {len(lesson.questions)} questions, {ctx.settings.round_seconds} s each. "
                    "Press Next on a question to reveal it early.")
    return [started, await _post_question(ctx, round_, 0)]


async def _round(ctx: Context, round_id: int) -> Round:
    round_ = await ctx.store.rounds.get(round_id)
    if round_ is None:
        raise StudyError("That round is gone.")
    return round_


async def _post_question(ctx: Context, round_: Round, position: int) -> Reply:
    """The public message of a round's question, creating its prompt and timer once."""
    question = ctx.question(round_.question_ids[position])
    prompt = await ctx.store.rounds.prompt_at(round_.id, position)
    if prompt is None:
        prompt = await ctx.store.prompts.new(
            PromptKind.QUESTION, round_.place, None, lesson_id=round_.lesson_id, item_id=question.id,
            mode=AnswerMode.ROUND, round_id=round_.id, data={"position": position})
        await ctx.store.timers.set(_key(round_.id, position),
                                   ctx.clock.now() + timedelta(seconds=ctx.settings.round_seconds))
    return question.ask(prompt.id, _header(ctx, round_, position), Audience.PUBLIC, arrangement(question, prompt),
                        extra=(Choice("Next ▶", f"{prompt.id}.{NEXT}"),), tag=_key(round_.id, position),
                        place=round_.place)


def _header(ctx: Context, round_: Round, position: int) -> str:
    return f"Round · question {position + 1} of {len(round_.question_ids)} · {ctx.settings.round_seconds} s"


async def on_next(ctx: Context, event: ChoiceMade, prompt: Prompt) -> list[Reply]:
    round_ = await _round(ctx, prompt.round_id or 0)
    if event.actor.user_id != round_.starter and not event.actor.is_instructor:
        raise StudyError("Only the person who started the round (or an instructor) can move it on.")
    position = int(prompt.data["position"])
    replies = await reveal(ctx, round_.id, position)
    await ctx.store.timers.delete(_key(round_.id, position))  # revealed now: the timer has nothing left to do
    if not replies:
        return [Reply("That question was already revealed.")]
    return [Reply("Revealed."), *replies]


async def on_timer(ctx: Context, event: TimerFired, key: str) -> list[Reply]:
    _, round_id, position = key.split(":")
    return await reveal(ctx, int(round_id), int(position))


async def reveal(ctx: Context, round_id: int, position: int) -> list[Reply]:
    """Close a question and move on. Safe to repeat after a crash: the reveal is an edit,
    and a question or summary already posted is not posted again."""
    round_ = await ctx.store.rounds.get(round_id)
    prompt = await ctx.store.rounds.prompt_at(round_id, position)
    if round_ is None or prompt is None or round_.position > position + 1:
        return []
    advanced = await ctx.store.rounds.advance(round_id, position, prompt.id)
    if not advanced and round_.position != position + 1:
        return []
    round_ = await _round(ctx, round_id)
    replies = [await _reveal_edit(ctx, round_, position, prompt)]
    if round_.state is RoundState.OPEN:
        if await ctx.store.messages.get(_key(round_id, position + 1)) is None:
            replies.append(await _post_question(ctx, round_, position + 1))
    elif await ctx.store.messages.get(_summary_tag(round_id)) is None:
        replies.append(await _summary(ctx, round_))
    return replies


async def _reveal_edit(ctx: Context, round_: Round, position: int, prompt: Prompt) -> Reply:
    question = ctx.question(round_.question_ids[position])
    tally = await ctx.store.answers.tally(prompt.id)
    shown = arrangement(question, prompt)
    lines = [_header(ctx, round_, position), question.prompt, "", *question.reveal(tally, shown),
             f"{tally.answers} answered, {tally.correct} correct.", question.explanation]
    ref = await ctx.store.messages.get(_key(round_.id, position))
    return Reply("\n".join(lines), Audience.PUBLIC, edit=ref, place=round_.place)


async def _summary(ctx: Context, round_: Round) -> Reply:
    scores = await ctx.store.rounds.scores(round_.id)
    total = len(round_.question_ids)
    board = "\n".join(f"{s.display_name}: {s.correct}/{total}" for s in scores[:10]) or "Nobody answered this time."
    return Reply(f"Round over.\n{board}\nPractise privately with /quiz; see the week with /leaderboard.",
                 Audience.PUBLIC, tag=_summary_tag(round_.id), place=round_.place)
