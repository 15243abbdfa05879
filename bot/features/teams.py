"""/team: a learner's team in their cohort (`bot.kit.teams`): who is in it, and joining or leaving one
when the cohort lets learners choose (`cohorts.<id>.team_join: true`)."""

from __future__ import annotations

from bot.core.config import TEAM_NAME
from bot.core.errors import StudyError
from bot.core.messages import Command, Reply
from bot.kit.commands import Option, command
from bot.kit.context import Context
from bot.kit.feature import Feature
from bot.kit.teams import has_teams, members, team_of

SHOWN = 20  # the members /team names
USAGE = "Use /team, /team join NAME or /team leave."


@command(summary="Your team in this cohort; join or leave one when the cohort allows it",
         options=(Option("action", "join or leave", choices={"show": "", "join": "join", "leave": "leave"}),
                  Option("name", "the team to join, such as red")))
async def team(ctx: Context, cmd: Command) -> list[Reply]:
    """/team: your team and its members.
    /team join NAME: join a team, when your cohort lets learners choose.
    /team leave: leave the team you joined."""
    words = cmd.args.lower().split()
    cohort = cmd.actor.in_cohort
    chosen = ctx.settings.cohort(cohort)
    if words[:1] in (["join"], ["leave"]):
        if not chosen.team_join:
            raise StudyError("Teams in this cohort are set by your instructors; ask them to move you."
                             if chosen.teams else "This cohort has no teams.")
        if any(cmd.actor.user_id in users for users in chosen.teams.values()):
            raise StudyError("Your instructors put you in your team; ask them to move you.")
        if words[0] == "leave":
            if (await ctx.store.learners.choices(cmd.actor)).team is None:
                return [Reply("You are in no team. Join one with /team join NAME.")]
            await ctx.store.learners.choose(cmd.actor, "team", None)
            return [Reply("You left your team.")]
        if len(words) != 2 or not TEAM_NAME.match(words[1]):
            raise StudyError("Name the team in up to 24 lower-case letters, digits, - or _: /team join red.")
        await ctx.store.learners.choose(cmd.actor, "team", words[1])
        return [Reply(f"You joined team {words[1]}. See the teams with /leaderboard teams.")]
    if words:
        raise StudyError(USAGE)
    if not has_teams(ctx, cohort):
        return [Reply("This cohort has no teams.")]
    mine = await team_of(ctx, cmd.actor)
    if mine is None:
        return [Reply("You are in no team." + (" Join one with /team join NAME." if chosen.team_join else ""))]
    team_of_user = await members(ctx, cohort)
    users = sorted(user for user, t in team_of_user.items() if t == mine)
    known = await ctx.store.learners.names(cohort, users[:SHOWN])  # a look-up each: only those shown
    names = sorted(known.get(user, user) for user in users[:SHOWN])  # named as the boards name them, else by id
    more = f" and {len(users) - SHOWN} more" if len(users) > SHOWN else ""
    return [Reply(f"Your team: {mine} ({len(users)}: {', '.join(names)}{more}). "
                  "See the teams with /leaderboard teams.")]


FEATURE = Feature("teams", commands=(team,))
