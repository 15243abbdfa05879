"""Teams inside a cohort: listed in the config (`cohorts.<id>.teams`) or joined by learners with
/team join when the cohort allows it (`team_join: true`; a configured member's team is the config's).
A team's score is the sum of its three best members' scores, so a big team has no edge over a small one."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from bot.core.messages import Actor, Cohort, counted
from bot.grading.scoring import SelfGraded, competition_ranks
from bot.kit.context import Context

TOP = 3  # the members whose scores make a team's
SHOWN = 10  # the teams a board shows, as the individual board shows its top 10


@dataclass(frozen=True)
class TeamStanding:
    rank: int
    team: str
    points: int
    best: tuple[tuple[str, int], ...]  # the members counted: (name, points), best first


def has_teams(ctx: Context, cohort: Cohort) -> bool:
    chosen = ctx.settings.cohort(cohort)
    return bool(chosen.teams) or chosen.team_join


async def members(ctx: Context, cohort: Cohort) -> dict[str, str]:
    """Each team member's team, by user id: the configured ones, and those who joined (while joining is allowed)."""
    chosen = ctx.settings.cohort(cohort)
    joined = await ctx.store.learners.joined_teams(cohort) if chosen.team_join else {}
    return {**joined, **{user: team for team, users in chosen.teams.items() for user in users}}


async def team_of(ctx: Context, actor: Actor) -> str | None:
    chosen = ctx.settings.cohort(actor.in_cohort)
    configured = next((team for team, users in chosen.teams.items() if actor.user_id in users), None)
    if configured or not chosen.team_join:
        return configured
    return (await ctx.store.learners.choices(actor)).team


def team_scores(team_of_user: Mapping[str, str], scores: Mapping[str, tuple[str, int]],
                teams: set[str]) -> list[TeamStanding]:
    """Each team's score, the sum of its `TOP` best members' scores (name, points by user id), best first."""
    by_team: dict[str, list[tuple[str, int]]] = {team: [] for team in teams}
    for user, (name, points) in scores.items():
        if user in team_of_user:
            by_team.setdefault(team_of_user[user], []).append((name or user, points))
    best = {team: tuple(sorted(rows, key=lambda r: (-r[1], r[0]))[:TOP]) for team, rows in by_team.items()}
    order = sorted(best, key=lambda team: (-sum(p for _, p in best[team]), team))
    ranks = competition_ranks([sum(p for _, p in best[team]) for team in order])
    return [TeamStanding(rank, team, sum(p for _, p in best[team]), best[team])
            for rank, team in zip(ranks, order, strict=True)]


async def team_board(ctx: Context, cohort: Cohort, week: str | None,
                     policy: SelfGraded = SelfGraded.COUNT) -> list[TeamStanding]:
    """The cohort's teams for a week (None: all time), as the individual board counts points."""
    team_of_user = await members(ctx, cohort)
    scores = await ctx.store.boards.best_of(cohort, team_of_user, week, policy, TOP)
    return team_scores(team_of_user, scores, set(ctx.settings.cohort(cohort).teams) | set(team_of_user.values()))


def team_board_text(title: str, standings: list[TeamStanding], mine: str | None = None) -> str:
    """The top `SHOWN` teams, how many more there are, and the team `mine` when it is not among them."""
    if not standings:
        return f"{title}\nNo teams yet."

    def row(s: TeamStanding) -> str:
        return f"{s.rank}. {s.team} · {s.points}" + (
            f" ({', '.join(f'{name} {points}' for name, points in s.best)})" if s.best else "")

    rows = [row(s) for s in standings[:SHOWN]]
    if len(standings) > SHOWN:
        rows.append(f"… and {counted(len(standings) - SHOWN, 'more team')}")
        rows += [row(s) for s in standings[SHOWN:] if s.team == mine]
    return "\n".join([f"{title} (a team scores its {TOP} best members' points)", *rows])
