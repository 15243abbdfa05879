"""Public rounds: each question posted once, everyone answers once, and when the time is up (a
stored timer) the question's message is edited into the reveal with the answer and the tally.

The timers drive every step: Next makes the current question's timer due now, so a reveal is
always delivered by the scheduler, which retries it until it is delivered. Each step is one
transaction (see bot/store/rounds.py); a reveal repeated after a crash is an edit, and a question
or summary already posted is not posted again.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from bot.asking import arrangement
from bot.context import Context
from bot.errors import StudyError
from bot.messages import Actor, Audience, Choice, ChoiceMade, Command, Reply, TimerFired
from bot.store.model import Prompt, Round, RoundState

NEXT = "n"  # a choice suffix: the starter moves the round on
TIMER = "round"  # timer keys: round:<round id>:<position>


def timer_key(round_id: int, position: int) -> str:
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
    round_id, first = await ctx.store.rounds.open(cmd.place, cmd.actor, lesson.id, [q.id for q in lesson.questions],
                                                  timer_key, _due(ctx))
    round_ = await _round(ctx, round_id)
    started = Reply(f"Round started: {len(lesson.questions)} questions, {ctx.settings.round_seconds} s each. "
                    "Press Next on a question to reveal it early.")
    return [started, _question(ctx, round_, first)]


def _due(ctx: Context) -> datetime:
    """When a question posted now is revealed."""
    return ctx.clock.now() + timedelta(seconds=ctx.settings.round_seconds)


async def _round(ctx: Context, round_id: int) -> Round:
    round_ = await ctx.store.rounds.get(round_id)
    if round_ is None:
        raise StudyError("That round is gone.")
    return round_


def _question(ctx: Context, round_: Round, prompt: Prompt) -> Reply:
    """The public message of a round's question (its prompt and timer are stored already)."""
    question = ctx.question(prompt.item_id)
    position = int(prompt.data["position"])
    return question.ask(prompt.id, _header(ctx, round_, position), Audience.PUBLIC, arrangement(question, prompt),
                        extra=(Choice("Next ▶", f"{prompt.id}.{NEXT}"),), tag=timer_key(round_.id, position),
                        place=round_.place)


def _header(ctx: Context, round_: Round, position: int) -> str:
    return f"Round · question {position + 1} of {len(round_.question_ids)} · {ctx.settings.round_seconds} s"


async def on_next(ctx: Context, event: ChoiceMade, prompt: Prompt) -> list[Reply]:
    """The starter (or an instructor) reveals the question now: its timer becomes due at once."""
    round_ = await _round(ctx, prompt.round_id or 0)
    if event.actor.user_id != round_.starter and not event.actor.is_instructor:
        raise StudyError("Only the person who started the round (or an instructor) can move it on.")
    position = int(prompt.data["position"])
    if round_.state is not RoundState.OPEN or round_.position != position:
        return [Reply("That question was already revealed.")]
    await ctx.store.timers.hurry(timer_key(round_.id, position), ctx.clock.now())
    return [Reply("Revealing it now.")]


async def on_timer(ctx: Context, event: TimerFired, key: str) -> list[Reply]:
    _, round_id, position = key.split(":")
    return await reveal(ctx, int(round_id), int(position))


async def reveal(ctx: Context, round_id: int, position: int) -> list[Reply]:
    """Close a question and move on; safe to repeat after a crash."""
    round_ = await ctx.store.rounds.get(round_id)
    prompt = await ctx.store.rounds.prompt_at(round_id, position)
    if round_ is None or prompt is None or round_.position > position + 1:
        return []
    if round_.position == position and round_.state is RoundState.DONE:
        return []  # the round was stopped before this question was revealed
    if round_.position == position:
        if await ctx.store.messages.get(timer_key(round_id, position)) is None:
            # the question never reached the channel (a crash, a failed post): post it now, reveal it later
            await ctx.store.timers.move(timer_key(round_id, position), _due(ctx))
            return [_question(ctx, round_, prompt)]
        await ctx.store.rounds.advance(round_, prompt.id, timer_key, _due(ctx))
        round_ = await _round(ctx, round_id)
    replies = [await _reveal_edit(ctx, round_, position, prompt)]
    if round_.state is RoundState.OPEN:
        following = await ctx.store.rounds.prompt_at(round_id, position + 1)
        if following is not None and await ctx.store.messages.get(timer_key(round_id, position + 1)) is None:
            replies.append(_question(ctx, round_, following))
    elif await ctx.store.messages.get(_summary_tag(round_id)) is None:
        replies.append(await _summary(ctx, round_))
    return replies


async def _reveal_edit(ctx: Context, round_: Round, position: int, prompt: Prompt) -> Reply:
    question = ctx.question(round_.question_ids[position])
    tally = await ctx.store.answers.tally(prompt.id)
    shown = arrangement(question, prompt)
    lines = [_header(ctx, round_, position), question.prompt, "", *question.reveal(tally, shown),
             f"{tally.answers} answered, {tally.correct} correct.", question.explanation]
    ref = await ctx.store.messages.get(timer_key(round_.id, position))
    return Reply("\n".join(lines), Audience.PUBLIC, edit=ref, place=round_.place)


async def _summary(ctx: Context, round_: Round, note: str = "") -> Reply:
    scores = await ctx.store.rounds.scores(round_.id)
    total = len(round_.question_ids)
    board = "\n".join(f"{s.display_name}: {s.correct}/{total}" for s in scores[:10]) or "Nobody answered this time."
    return Reply(f"Round over.{note}\n{board}\nPractise privately with /quiz; see the week with /leaderboard.",
                 Audience.PUBLIC, tag=_summary_tag(round_.id), place=round_.place)


async def on_given_up(ctx: Context, key: str, reason: str) -> list[Reply]:
    """A question could not be revealed or posted for good: the round ends, and its starter is told
    by direct message (the channel may be the very thing that fails)."""
    _, round_id, _position = key.split(":")
    round_ = await ctx.store.rounds.close(int(round_id))
    if round_ is None or round_.starter is None:
        return []
    starter = Actor(round_.platform, round_.cohort, round_.starter)
    return [Reply(f"Your round of {round_.lesson_id} was stopped after question {round_.position + 1}: studybot "
                  f"could not post in its channel ({reason}). Every answer given so far is kept. Check that "
                  "studybot may post there, then start a new round.", Audience.DM, to=starter)]


async def repair(ctx: Context) -> int:
    """At start-up: give every open round whose current question lost its timer a timer due now."""
    stranded = await ctx.store.rounds.stranded(timer_key)
    for round_ in stranded:
        await ctx.store.timers.set(timer_key(round_.id, round_.position), ctx.clock.now())
    return len(stranded)
