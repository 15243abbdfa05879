"""Leaderboards per cohort: this week (in the cohort's time zone), a past week, or all time;
and each cohort's weekly post, on a stored timer."""

from __future__ import annotations

import re
from datetime import datetime, timedelta

from bot.core.clock import iso_week
from bot.core.config import Settings
from bot.core.errors import StudyError
from bot.core.i18n import N_, Translator, current, reading
from bot.core.messages import Audience, Cohort, Command, Place, Reply, TimerKey
from bot.grading.scoring import SelfGraded
from bot.kit.commands import Option, command
from bot.kit.context import Context
from bot.kit.feature import Feature, Scheduled, TimerSpec
from bot.kit.teams import has_teams, team_board, team_board_text, team_of
from bot.reports.marks import marks_text
from bot.store.model import Standing

WEEK = re.compile(r"^\d{4}-W(0[1-9]|[1-4]\d|5[0-3])$")
USAGE = N_("Use /leaderboard, /leaderboard all, /leaderboard week 2026-W48 or /leaderboard teams.")
SCHEDULE = "leaderboard"  # the weekly post's timer, one per cohort


def parse_period(ctx: Context, cohort: Cohort, words: list[str]) -> str | None:
    """The week a leaderboard covers (None: all time)."""
    if not words or words == ["week"]:
        return ctx.week(cohort)
    if words == ["all"]:
        return None
    if len(words) == 2 and words[0] == "week" and WEEK.match(words[1].upper()):
        return words[1].upper()
    if len(words) == 1 and WEEK.match(words[0].upper()):
        return words[0].upper()
    raise StudyError(ctx._(USAGE))


def points_text(standing: Standing, policy: SelfGraded) -> str:
    """A learner's points as a board's row shows them: "12 (3 self-graded)"."""
    return f"{current().decimal(standing.points)}{marks_text(standing, policy)}"


def title_of(ctx: Context, cohort: Cohort, week: str | None, tr: Translator, teams: bool = False) -> str:
    """A board's heading in `tr`'s language: the learners' board, or the team board."""
    zone = ctx.zone(cohort).key
    if teams:
        return (tr.gettext("Team board · week {week} ({zone})", week=week, zone=zone) if week
                else tr.gettext("Team board · all time"))
    return (tr.gettext("Leaderboard · week {week} ({zone})", week=week, zone=zone) if week
            else tr.gettext("Leaderboard · all time"))


async def teams_text(ctx: Context, cohort: Cohort, week: str | None, tr: Translator, mine: str | None = None) -> str:
    """The team board (`bot.kit.teams`), for the cohort's teams (with the team `mine` shown, as the viewer's)."""
    if not has_teams(ctx, cohort):
        raise StudyError("This cohort has no teams. An instructor can list them under cohorts.<id>.teams in the "
                         "config, or let learners /team join (team_join: true).")
    standings = await team_board(ctx, cohort, week, ctx.settings.self_graded)
    return team_board_text(title_of(ctx, cohort, week, tr, teams=True), standings, mine)


async def board_text(ctx: Context, cohort: Cohort, week: str | None, tr: Translator | None = None) -> str:
    """The board in `tr`'s language: the reader's (a private view, the default) or the cohort's (a post)."""
    tr = tr or ctx.tr
    policy = ctx.settings.self_graded
    standings = await ctx.store.boards.top(cohort, week, policy)
    title = title_of(ctx, cohort, week, tr)
    if not standings:
        return title + "\n" + tr.gettext("No points yet. Answer with /quiz to get on the board.")
    with reading(tr):
        rows = [f"{s.rank}. {s.display_name or s.user_id} · {points_text(s, policy)}" for s in standings]
    note = [tr.gettext("(Self-graded points are not counted.)")] if policy is SelfGraded.EXCLUDE else []
    return "\n".join([title, *rows, *note])


@command(summary="The cohort leaderboard; instructors can post it in the channel",
         options=(Option("action", "view (privately, default) or post (instructors)",
                         choices={"view": "", "post": "post"}),
                  Option("board", "learners (default) or teams", choices={"learners": "", "teams": "teams"}),
                  Option("period", "week or all", choices={"week": "week", "all": "all"}),
                  Option("week", "an archived week, such as 2026-W48", prefix="week")))
async def leaderboard(ctx: Context, cmd: Command) -> list[Reply]:
    """/leaderboard [week|all|week 2026-W48]: the cohort's leaderboard, privately.
    /leaderboard teams [week|all|week 2026-W48]: the team board, each team's three best members' points.
    /leaderboard post [teams] [week|all]: post it in the channel (instructors)."""
    words = cmd.args.lower().split()
    post = bool(words) and words[0] == "post"
    if post:
        if not cmd.actor.is_instructor:
            raise StudyError(ctx._("Only instructors can post the leaderboard. Ask your instructor if you need it."))
        if not cmd.place.channel_id:
            raise StudyError(ctx._("Post the leaderboard from a channel."))
        words = words[1:]
    cohort = cmd.actor.in_cohort
    teams = words[:1] == ["teams"]
    week = parse_period(ctx, cohort, words[1:] if teams else words)
    if teams:
        if post:
            board = await teams_text(ctx, cohort, week, ctx.public(cohort))
            return [Reply(board, Audience.PUBLIC), Reply(ctx._("Posted."))]
        team = await team_of(ctx, cmd.actor)
        text = await teams_text(ctx, cohort, week, ctx.tr, team)
        return [Reply(text + (f"\nYour team: {team}." if team else "\nYou are in no team."))]
    if post:
        board = await board_text(ctx, cohort, week, ctx.public(cohort))
        return [Reply(board, Audience.PUBLIC), Reply(ctx._("Posted."))]
    text = await board_text(ctx, cohort, week, ctx.tr)
    policy = ctx.settings.self_graded
    mine = await ctx.store.boards.standing(cmd.actor, week, policy)
    text += "\n" + (ctx.ngettext("You: rank {rank} with {n} point{marks}.", "You: rank {rank} with {n} points{marks}.",
                                  mine.points, rank=mine.rank, marks=marks_text(mine, policy))
                    if mine else ctx._("No points for you in this period yet."))
    return [Reply(text)]


# ---------------------------------------------------------------- the weekly post


def weekly_posts(settings: Settings) -> list[Scheduled]:
    """The weekly post of each cohort that configures one."""
    return [Scheduled(TimerKey.for_cohort(SCHEDULE, cohort), f"cohorts.{cohort.id}.leaderboard.channel",
                      Place(cohort.platform, cohort.id, chosen.leaderboard.channel))
            for cohort, chosen in settings.cohorts.items() if chosen.leaderboard is not None]


def last_post(ctx: Context, cohort: Cohort, before: datetime) -> datetime:
    """The latest scheduled moment at or before `before`, in the cohort's time zone."""
    settings = ctx.settings.cohort(cohort)
    plan, zone = settings.leaderboard, settings.timezone
    if plan is None:
        raise ValueError(f"{cohort} has no weekly leaderboard")
    local = before.astimezone(zone)
    day = local.date() - timedelta(days=(local.weekday() - plan.weekday) % 7)
    moment = datetime.combine(day, plan.at, zone)
    return moment if moment <= local else moment - timedelta(weeks=1)


def next_post(ctx: Context, key: TimerKey) -> datetime:
    return last_post(ctx, key.cohort, ctx.clock.now()) + timedelta(weeks=1)


async def on_schedule(ctx: Context, key: TimerKey) -> list[Reply]:
    """Post the board of the week up to the day before the post (a Monday post shows the week
    just ended). After downtime only the latest missed post goes out."""
    cohort = key.cohort
    plan = ctx.settings.cohort(cohort).leaderboard
    if plan is None:
        return []
    moment = last_post(ctx, cohort, ctx.clock.now())
    week = iso_week(moment - timedelta(days=1), ctx.zone(cohort))
    public = ctx.public(cohort)
    text = await board_text(ctx, cohort, week, public)
    if has_teams(ctx, cohort):
        text += "\n\n" + await teams_text(ctx, cohort, week, public)
    return [Reply(text, Audience.PUBLIC, place=Place(cohort.platform, cohort.id, plan.channel))]


FEATURE = Feature(
    "leaderboard",
    commands=(leaderboard,),
    timers=(TimerSpec(SCHEDULE, on_schedule, repeat=next_post, schedule=weekly_posts),),
)
