"""Public rounds: each question posted once, everyone answers once, and when the time is up (a
stored timer) the question's message is edited into the reveal with the answer and the tally.

The timers drive every step: Next makes the current question's timer due now, so a reveal is
always delivered by the scheduler, which retries it until it is delivered. Each step is one
transaction (see bot/store/round_rows.py); a reveal repeated after a crash is an edit, and a question
or summary already posted is not posted again.
"""

from __future__ import annotations

import logging
from dataclasses import replace
from datetime import datetime, timedelta

from bot.answering.asking import ask, revealed
from bot.core.errors import StudyError
from bot.core.messages import Actor, Audience, Choice, ChoiceMade, Cohort, Command, Reply, TimerKey, counted
from bot.kit.commands import CommandForm
from bot.kit.context import Context, Mode
from bot.kit.feature import Feature, TimerSpec
from bot.kit.teams import has_teams, members, team_scores
from bot.questions.base import Tally
from bot.store.model import AnswerMode, Prompt, Round, RoundScore, RoundState

log = logging.getLogger("studybot")

NEXT = "n"  # a choice suffix: the starter moves the round on
REMOVED = ("This question was removed from the lesson; the next one follows when its time is up (or when the "
           "round's starter presses Next).")
TIMER = "round"  # timer keys: round:<round id>:<position>


def timer_key(round_id: int, position: int) -> str:
    """The key of the timer that reveals a round's question (and the tag of its post), as stored."""
    return str(TimerKey.of(TIMER, round_id, position))


def _summary_tag(round_id: int) -> str:
    return str(TimerKey.of(TIMER, round_id, "summary"))


def _end_key(round_id: int, *why: str) -> str:
    return str(TimerKey.of(END, round_id, *why))


USAGE = ("Use /quiz round [lesson] [practice] [number of questions] [seconds:N], /quiz round stop "
         "or /quiz round resume.")
PRACTICE = "practice"  # a round word: ask the lesson's practice set instead of its quiz
STALE = timedelta(days=1)  # a round older than this is closed at start-up, never resumed by surprise
END = "roundend"  # timer keys: roundend:<round id>, delivering a stopped round's last reveal and summary


async def round_command(ctx: Context, cmd: Command, words: list[str]) -> list[Reply]:
    """/quiz round ...: start a round, or stop or resume the one in this channel."""
    if not cmd.place.channel_id:
        raise StudyError("Start a round in a channel, where others can join; use /quiz here to practise.")
    if words[:1] == ["stop"]:
        return await stop_round(ctx, cmd)
    if words[:1] == ["resume"]:
        return await resume_round(ctx, cmd)
    return await start_round(ctx, cmd, words)


def looks_like_number(word: str) -> bool:
    """Whether a word was meant as a number (-3, 12, ², ①), readable or not."""
    return word.lstrip("-").isdigit()


def parse(ctx: Context, words: list[str]) -> tuple[str, int | None, int | None, bool]:
    """(lesson name, number of questions, seconds per question, practice set) from
    `[lesson] [practice] [N] [seconds:S]`."""
    lesson: list[str] = []
    count = seconds = None
    practice = False
    rest = iter(words)
    for word in rest:
        if word.lower() == PRACTICE:
            practice = True
        elif word.lower().startswith("seconds"):
            value = word[len("seconds"):].lstrip(":=") or next(rest, "")
            if not value.isdecimal():  # isdigit() would take ² and ①, which int() cannot read
                raise StudyError("Give the seconds per question as a number, such as seconds:30.")
            seconds = int(value)
        elif looks_like_number(word):
            if not word.lstrip("-").isdecimal():
                raise StudyError("Give the number of questions as a number, such as 5.")
            count = int(word)  # a negative one is refused with the lesson's range below
        else:
            lesson.append(word)
    shortest, longest = ctx.settings.round_seconds_range
    if seconds is not None and not shortest <= seconds <= longest:
        raise StudyError(f"Pick {shortest} to {longest} seconds per question.")
    return " ".join(lesson), count, seconds, practice


async def start_round(ctx: Context, cmd: Command, words: list[str]) -> list[Reply]:
    running = await ctx.store.rounds.in_channel(cmd.place)
    if running is not None:
        return [await _running(ctx, cmd.actor, running)]
    if ctx.settings.rounds_instructors_only:
        ctx.require_instructor(cmd.actor, "start rounds in this cohort")
    name, count, seconds, practice = parse(ctx, words)
    lesson = ctx.lesson(name)
    pool, kind = (lesson.practice, "practice question") if practice else (lesson.questions, "question")
    if not pool:
        raise StudyError(f"Lesson {lesson.id} has no {kind}s yet.")
    if count is not None and not 1 <= count <= len(pool):
        pick = "leave the number out, or give 1" if len(pool) == 1 else f"pick 1 to {len(pool)}"
        raise StudyError(f"Lesson {lesson.id} has {counted(len(pool), kind)}; {pick}.")
    chosen = [q.id for q in pool][:count]
    per_question = seconds or ctx.settings.round_seconds
    round_id, first = await ctx.store.rounds.open(cmd.place, cmd.actor, lesson.id, chosen, timer_key,
                                                  ctx.clock.now() + timedelta(seconds=per_question), seconds)
    round_ = await _round(ctx, round_id)
    started = Reply(ctx.ngettext("Round started: {n} question, {seconds} s each. Press Next on a question to "
                                 "reveal it early; /quiz round stop ends it.",
                                 "Round started: {n} questions, {seconds} s each. Press Next on a question to "
                                 "reveal it early; /quiz round stop ends it.", len(chosen), seconds=per_question))
    return [started, _question(ctx, round_, first)]


async def _running(ctx: Context, actor: Actor, round_: Round) -> Reply:
    """The answer to starting a round in a channel that has one: its open question again, privately,
    to answer there (the post may have scrolled away, or be in an earlier console chat), and how it ends."""
    steers = _steers(actor, round_)
    if round_.state is RoundState.PAUSED:
        return Reply("A round is paused in this channel. " + (
            "/quiz round resume goes on with it; /quiz round stop ends it." if steers
            else "Its starter or an instructor can resume it or stop it."))
    then = ("To start another, end this one with /quiz round stop." if steers
            else "Another can start once it ends.")
    prompt = await ctx.store.rounds.prompt_at(round_.id, round_.position)
    if prompt is None:
        return Reply(f"A round is already running in this channel. {then}")
    question = _question(ctx, round_, prompt)
    return replace(question, text=f"A round is already running in this channel; its question again, to answer "
                                  f"here. {then}\n{question.text}", audience=Audience.PRIVATE, tag=None, place=None)


async def stop_round(ctx: Context, cmd: Command) -> list[Reply]:
    """The starter or an instructor ends the round at once; its last reveal and summary follow."""
    round_ = await ctx.store.rounds.in_channel(cmd.place)
    if round_ is None:
        raise StudyError("No round is running in this channel.")
    _may_steer(cmd.actor, round_, "stop it")
    await ctx.store.rounds.close(round_.id, timer_key, then=_end_key(round_.id))
    return [Reply("Round stopped: the summary follows in the channel.")]


async def resume_round(ctx: Context, cmd: Command) -> list[Reply]:
    round_ = await ctx.store.rounds.in_channel(cmd.place)
    if round_ is None or round_.state is not RoundState.PAUSED:
        raise StudyError("No paused round here. Start one with /quiz round.")
    _may_steer(cmd.actor, round_, "resume it")
    prompt = await ctx.store.rounds.resume(round_, timer_key, _due(ctx, round_))
    if prompt is None:
        raise StudyError("That round is running again already.")
    return [Reply("Round resumed."), _question(ctx, await _round(ctx, round_.id), prompt)]


def _steers(actor: Actor, round_: Round) -> bool:
    """Whether `actor` may stop, resume or move on this round: its starter or an instructor."""
    return actor.user_id == round_.starter or actor.is_instructor


def _may_steer(actor: Actor, round_: Round, what: str) -> None:
    if not _steers(actor, round_):
        raise StudyError(f"Only the person who started the round (or an instructor) can {what}.")


def _due(ctx: Context, round_: Round) -> datetime:
    """When a question of this round posted now is revealed."""
    return ctx.clock.now() + timedelta(seconds=_seconds(ctx, round_))


def _seconds(ctx: Context, round_: Round) -> int:
    return round_.seconds or ctx.settings.round_seconds


async def _round(ctx: Context, round_id: int) -> Round:
    round_ = await ctx.store.rounds.get(round_id)
    if round_ is None:
        raise StudyError("That round is gone.")
    return round_


def _question(ctx: Context, round_: Round, prompt: Prompt) -> Reply:
    """The public message of a round's question (its prompt and timer are stored already)."""
    position = int(prompt.data["position"])
    question = ctx.library.questions.get(prompt.item_id or "")
    if question is None:  # removed by a reload meanwhile: the round goes on without it
        return Reply(f"{_header(ctx, round_, position)}\n{REMOVED}", Audience.PUBLIC,
                     choices=(_next(ctx, round_, prompt),), tag=timer_key(round_.id, position),
                     place=round_.place)
    return ask(ctx, question, prompt, _header(ctx, round_, position), Audience.PUBLIC,
               extra=(_next(ctx, round_, prompt),), tag=timer_key(round_.id, position), place=round_.place)


def _header(ctx: Context, round_: Round, position: int) -> str:
    """A round question's first line, in its cohort's language (a public post)."""
    return ctx.public(round_.place.in_cohort).gettext("Round · question {number} of {total} · {seconds} s",
                                                       number=position + 1, total=len(round_.question_ids),
                                                       seconds=_seconds(ctx, round_))


def _next(ctx: Context, round_: Round, prompt: Prompt) -> Choice:
    """A round question's Next button, in its cohort's language."""
    return Choice(ctx.public(round_.place.in_cohort).pgettext("button", "Next ▶"), f"{prompt.id}.{NEXT}")


async def on_next(ctx: Context, event: ChoiceMade, prompt: Prompt, suffix: str) -> list[Reply]:
    """The starter (or an instructor) reveals the question now: its timer becomes due at once."""
    round_ = await _round(ctx, prompt.round_id or 0)
    _may_steer(event.actor, round_, "move it on")
    position = int(prompt.data["position"])
    if round_.state is not RoundState.OPEN or round_.position != position:
        return [Reply("That question was already revealed.")]
    await ctx.store.timers.hurry(timer_key(round_.id, position), ctx.clock.now())
    return [Reply("Revealing it now.")]


async def on_timer(ctx: Context, key: TimerKey) -> list[Reply]:
    round_id, position = key.parts
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
            await ctx.store.timers.move(timer_key(round_id, position), _due(ctx, round_))
            return [_question(ctx, round_, prompt)]
        if await _silent_twice(ctx, round_, prompt):
            await ctx.store.rounds.pause(round_, prompt.id)
            return [await _reveal_edit(ctx, round_, position, prompt), Reply(
                "Round paused: nobody answered the last two questions. Type /quiz round resume to go on, "
                "or /quiz round stop to end it.", Audience.PUBLIC, place=round_.place)]
        await ctx.store.rounds.advance(round_, prompt.id, timer_key, _due(ctx, round_))
        round_ = await _round(ctx, round_id)
    replies = [await _reveal_edit(ctx, round_, position, prompt)]
    if round_.state is RoundState.OPEN:
        following = await ctx.store.rounds.prompt_at(round_id, position + 1)
        if following is not None and await ctx.store.messages.get(timer_key(round_id, position + 1)) is None:
            replies.append(_question(ctx, round_, following))
    elif await ctx.store.messages.get(_summary_tag(round_id)) is None:
        replies.append(await _summary(ctx, round_))
    return replies


async def _silent_twice(ctx: Context, round_: Round, prompt: Prompt) -> bool:
    """Whether nobody answered this question, nor the one before it (and another one follows). A
    question a reload removed could not be answered: it never counts as silent."""
    if not 0 < round_.position < len(round_.question_ids) - 1 or await ctx.store.answers.counts(prompt.id):
        return False
    before = await ctx.store.rounds.prompt_at(round_.id, round_.position - 1)
    asked = round_.question_ids[round_.position - 1:round_.position + 1]
    return (before is not None and all(q in ctx.library.questions for q in asked)
            and not await ctx.store.answers.counts(before.id))


async def on_end(ctx: Context, key: TimerKey) -> list[Reply]:
    """A stopped (or stale) round's last word: the open question revealed, then the summary, once."""
    round_id, *why = key.parts
    round_ = await _round(ctx, int(round_id))
    replies = []
    prompt = await ctx.store.rounds.prompt_at(round_.id, round_.position)
    if prompt is not None and await ctx.store.messages.get(timer_key(round_.id, round_.position)) is not None:
        replies.append(await _reveal_edit(ctx, round_, round_.position, prompt))
    if await ctx.store.messages.get(_summary_tag(round_.id)) is None:
        note = " (It was closed because it was started over a day ago.)" if why == ["stale"] else ""
        replies.append(await _summary(ctx, round_, note))
    return replies


async def _reveal_edit(ctx: Context, round_: Round, position: int, prompt: Prompt) -> Reply:
    question = ctx.library.questions.get(round_.question_ids[position])
    tally = Tally.of(await ctx.store.answers.counts(prompt.id))
    ref = await ctx.store.messages.get(timer_key(round_.id, position))
    header = _header(ctx, round_, position)
    text = revealed(question, prompt, tally, header) if question else f"{header}\n{REMOVED}"
    return Reply(text, Audience.PUBLIC, edit=ref, place=round_.place)


async def _summary(ctx: Context, round_: Round, note: str = "") -> Reply:
    scores = await ctx.store.rounds.scores(round_.id)
    asked, total = min(round_.position + 1, len(round_.question_ids)), len(round_.question_ids)
    board = "\n".join(f"{s.display_name}: {s.correct}/{asked}" for s in scores[:10]) or "Nobody answered this time."
    over = "Round over." if asked == total else f"Round over after {asked} of {counted(total, 'question')}."
    if has_teams(ctx, Cohort(round_.platform, round_.cohort)) and scores:
        board += "\n" + await _team_tally(ctx, round_, scores)
    return Reply(f"{over}{note}\n{board}\nPractise privately with /quiz; see the week with /leaderboard.",
                 Audience.PUBLIC, tag=_summary_tag(round_.id), place=round_.place)


async def _team_tally(ctx: Context, round_: Round, scores: list[RoundScore]) -> str:
    """The round's right answers by team, each team's three best members' counted (`bot.kit.teams`): the
    teams with a member who answered."""
    team_of_user = await members(ctx, Cohort(round_.platform, round_.cohort))
    tally = team_scores(team_of_user, {s.user_id: (s.display_name, s.correct) for s in scores},
                        {team_of_user[s.user_id] for s in scores if s.user_id in team_of_user})
    return "By team: " + " · ".join(f"{t.team} {t.points}" for t in tally) if tally else "By team: no team answered."


async def on_given_up(ctx: Context, key: TimerKey, reason: str) -> list[Reply]:
    """A question could not be revealed or posted for good: the round ends, and its starter is told
    by direct message (the channel may be the very thing that fails)."""
    round_id, _position = key.parts
    round_ = await ctx.store.rounds.close(int(round_id), timer_key)
    if round_ is None or round_.starter is None:
        return []
    starter = Actor(round_.platform, round_.cohort, round_.starter)
    return [Reply(f"Your round of {round_.lesson_id} was stopped at question {round_.position + 1}: studybot "
                  f"could not post in its channel ({reason}). Every answer given so far is kept. Check that "
                  "studybot may post there, then start a new round.", Audience.DM, to=starter)]


async def repair(ctx: Context) -> tuple[int, int]:
    """At start-up: close the rounds older than a day (their summary follows), and give every open
    round whose current question lost its timer a timer due now; returns how many of each."""
    stale = await ctx.store.rounds.stale(ctx.clock.now() - STALE)
    for round_ in stale:
        await ctx.store.rounds.close(round_.id, timer_key, then=_end_key(round_.id, "stale"))
    stranded = await ctx.store.rounds.stranded(timer_key)
    for round_ in stranded:
        await ctx.store.timers.ensure(timer_key(round_.id, round_.position), ctx.clock.now())  # never moves one
    return len(stale), len(stranded)


async def start(ctx: Context) -> None:
    """At start-up, repair what a stop left: stale rounds closed, stranded ones going on."""
    closed, mended = await repair(ctx)
    if closed:
        log.warning("%d round(s) started over a day ago were closed; their summary follows", closed)
    if mended:
        log.warning("%d open round(s) had lost their timer; they go on now", mended)


def misplaced(ctx: Context, words: list[str]) -> str | None:
    """`/quiz 5` or `/quiz seconds:30`: a round's words without `round` (and no lesson of that name)."""
    round_words = any(looks_like_number(w) or w.lower().startswith("seconds") or w.lower() == PRACTICE for w in words)
    if round_words and ctx.library.lesson(" ".join(words)) is None:
        return f"A number of questions, seconds and the practice set are for a round. {USAGE}"
    return None


MODE = Mode(AnswerMode.ROUND, buttons={NEXT: on_next}, follow_ups=False)  # it moves on by its timer

FEATURE = Feature(
    "rounds",  # the question's own buttons are answering's; the round adds its Next
    command_forms=(CommandForm("quiz", "round", round_command, misplaced=misplaced),),
    modes=(MODE,),
    timers=(TimerSpec(TIMER, on_timer, on_given_up=on_given_up), TimerSpec(END, on_end)),
    on_start=start,
)
