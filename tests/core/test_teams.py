"""Teams inside a cohort: configured or joined, a team board beside the individual one (a team scores its
three best members' points), in the weekly post, and a round's tally by team."""


import pytest
from support import RecordingOutbox, channel, learner, record, with_cohort
from support import answer as answer_event

from bot.core.messages import Audience, Command, MessageRef
from bot.kit.teams import team_scores
from bot.runtime.scheduler import fire_due

pytestmark = pytest.mark.both_engines
TEAMS = {"red": ["A", "B", "C", "D"], "blue": ["E"]}


async def say(bot, name, args="", who="Z"):
    return [r.text for r in await bot.handle(Command(name, args, learner(who), channel()))]


async def score(bot, user, points):
    for n in range(points):
        await record(bot, learner(user), f"q{n}")


def test_a_team_scores_its_three_best_members() -> None:
    members = {"a": "red", "b": "red", "c": "red", "d": "red", "e": "blue"}
    scores = {"a": ("A", 5), "b": ("B", 4), "c": ("C", 1), "d": ("D", 3), "e": ("E", 9), "x": ("X", 50)}
    [red, blue] = team_scores(members, scores, {"red", "blue"})
    assert (red.team, red.points, red.best) == ("red", 12, (("A", 5), ("B", 4), ("D", 3)))  # C's 1 is not counted
    assert (blue.rank, blue.points) == (2, 9)  # X is in no team
    assert [(s.rank, s.team) for s in team_scores({}, {}, {"b", "a"})] == [(1, "a"), (1, "b")]


async def test_the_team_board_beside_the_individual_one(bot, settings) -> None:
    bot.ctx.settings = with_cohort(settings, teams=TEAMS)
    for user, points in (("A", 5), ("B", 4), ("C", 1), ("D", 3), ("E", 9), ("Z", 2)):
        await score(bot, user, points)
    [board] = await say(bot, "leaderboard", "teams")
    lines = board.splitlines()
    assert lines[0].startswith("Team board · week 2026-W49 (UTC) (a team scores its 3 best members' points)")
    assert lines[1:3] == ["1. red · 12 (name-A 5, name-B 4, name-D 3)", "2. blue · 9 (name-E 9)"]
    assert lines[-1] == "You are in no team."
    [mine] = await say(bot, "leaderboard", "teams all", who="E")
    assert "Team board · all time" in mine and mine.endswith("Your team: blue.")
    [individual] = await say(bot, "leaderboard")
    assert "1. name-E · 9" in individual and "Team board" not in individual
    [team] = await say(bot, "team", who="A")
    assert team == "Your team: red (4: name-A, name-B, name-C, name-D). See the teams with /leaderboard teams."
    [refused] = await say(bot, "team", "join blue", who="A")
    assert "set by your instructors" in refused


async def test_a_cohort_without_teams_says_how_to_have_them(bot) -> None:
    [reply] = await say(bot, "leaderboard", "teams")
    assert "This cohort has no teams." in reply and "team_join: true" in reply
    assert await say(bot, "team", "join red") == ["This cohort has no teams."]


async def test_learners_join_and_leave_teams_when_the_cohort_allows_it(bot, settings) -> None:
    bot.ctx.settings = with_cohort(settings, team_join=True, teams={"red": ["A"]})
    assert "joined team blue" in (await say(bot, "team", "join blue", who="B"))[0]
    assert "joined team red" in (await say(bot, "team", "join red", who="C"))[0]
    assert "Your instructors put you in your team" in (await say(bot, "team", "join blue", who="A"))[0]
    assert "lower-case letters" in (await say(bot, "team", "join Red Team", who="D"))[0]
    for user, points in (("A", 2), ("B", 3), ("C", 4)):
        await score(bot, user, points)
    [board] = await say(bot, "leaderboard", "teams", who="C")
    assert "1. red · 6 (name-C 4, name-A 2)" in board and "2. blue · 3 (name-B 3)" in board
    assert board.endswith("Your team: red.")
    assert await say(bot, "team", "leave", who="C") == ["You left your team."]
    [board] = await say(bot, "leaderboard", "teams", who="C")
    assert "1. blue · 3" in board and "2. red · 2" in board and board.endswith("You are in no team.")


async def test_the_weekly_post_carries_the_team_board(bot, clock, settings) -> None:
    bot.ctx.settings = with_cohort(settings, teams=TEAMS, leaderboard={"channel": "C0001", "time": "09:00"})
    clock.set("2026-11-27T12:00:00+00:00")  # Friday of week 48
    await score(bot, "A", 2)
    await bot.ctx.store.timers.ensure("leaderboard:slack:T1", clock.now())  # as start-up arms it
    outbox = RecordingOutbox()
    clock.set("2026-11-30T09:30:00+00:00")  # the Monday post shows the week just ended
    await fire_due(bot, {"slack": outbox})
    [post] = outbox.sent
    assert "Leaderboard · week 2026-W48" in post.text and "1. name-A · 2" in post.text
    assert "Team board · week 2026-W48" in post.text and "1. red · 2 (name-A 2)" in post.text
    assert "2. blue · 0" in post.text


async def test_a_rounds_summary_tallies_by_team(bot, clock, settings) -> None:
    bot.ctx.settings = with_cohort(settings, teams={"red": ["A", "B"], "blue": ["C"]})
    replies = await bot.handle(Command("quiz", "round core-basics 1", learner("A"), channel()))
    [question] = [r for r in replies if r.audience is Audience.PUBLIC]
    await bot.message_posted(question.tag, MessageRef("slack", "C1", "q1"))
    q = next(q for q in bot.library.questions.values() if q.prompt in question.text)
    for user in ("A", "B", "C", "Z"):  # Z is in no team
        await bot.handle(answer_event(q, question, learner(user), channel(), right=user != "C"))
    clock.advance(61)
    outbox = RecordingOutbox()
    await fire_due(bot, {"slack": outbox})
    [summary] = outbox.sent
    assert summary.text.startswith("Round over.") and "By team: red 2 · blue 0" in summary.text


@pytest.mark.parametrize(("players", "tally"), [(("A", "C", "Z"), "By team: red 1 · blue 0"),
                                                (("Z",), "By team: no team answered.")])
async def test_a_rounds_tally_names_the_teams_that_played(bot, clock, settings, players, tally) -> None:
    """A team none of whose members answered is not in the round's tally (with 30 joined teams the line ran on
    with zeros), and when only learners in no team answered, the summary says no team did."""
    bot.ctx.settings = with_cohort(settings, teams={"red": ["A", "B"], "blue": ["C"], "green": ["G"]})
    replies = await bot.handle(Command("quiz", "round core-basics 1", learner("A"), channel()))
    [question] = [r for r in replies if r.audience is Audience.PUBLIC]
    await bot.message_posted(question.tag, MessageRef("slack", "C1", "q1"))
    q = next(q for q in bot.library.questions.values() if q.prompt in question.text)
    for user in players:
        await bot.handle(answer_event(q, question, learner(user), channel(), right=user != "C"))
    clock.advance(61)
    outbox = RecordingOutbox()
    await fire_due(bot, {"slack": outbox})
    [summary] = outbox.sent
    assert tally in summary.text.splitlines()


async def test_team_names_its_members_as_the_boards_do(bot, settings) -> None:
    """/team once listed bare user ids (U07AB12CD on Slack); members are named as the boards name them, and one
    who never used the bot by id."""
    bot.ctx.settings = with_cohort(settings, teams={"red": ["A", "B", "N"]})
    await score(bot, "A", 1)
    await say(bot, "progress", who="B")
    assert await say(bot, "team", who="A") == ["Your team: red (3: N, name-A, name-B). See the teams with "
                                               "/leaderboard teams."]


async def test_leaving_when_in_no_team_says_so(bot, settings) -> None:
    bot.ctx.settings = with_cohort(settings, team_join=True)
    assert await say(bot, "team", "leave", who="B") == ["You are in no team. Join one with /team join NAME."]


async def test_the_team_board_shows_the_top_ten_teams_and_yours(bot, settings) -> None:
    """With team_join, every learner may make a team: the board (and the weekly post) once listed them all, a
    line each; like the individual board it shows the top 10, says how many more, and adds the viewer's team."""
    bot.ctx.settings = with_cohort(settings, team_join=True)
    for n in range(12):
        await say(bot, "team", f"join t{n:02d}", who=f"U{n}")
        await score(bot, f"U{n}", 12 - n)
    [board] = await say(bot, "leaderboard", "teams", who="U11")
    lines = board.splitlines()
    assert lines[1] == "1. t00 · 12 (name-U0 12)" and lines[10] == "10. t09 · 3 (name-U9 3)"
    assert lines[11:] == ["… and 2 more teams", "12. t11 · 1 (name-U11 1)", "Your team: t11."]
    [top] = await say(bot, "leaderboard", "teams", who="U0")
    assert top.splitlines()[11:] == ["… and 2 more teams", "Your team: t00."]


async def test_a_big_team_names_twenty_members_and_counts_the_rest(bot, settings) -> None:
    bot.ctx.settings = with_cohort(settings, teams={"big": [f"U{n:02d}" for n in range(22)]})
    [reply] = await say(bot, "team", who="U00")
    assert reply.startswith("Your team: big (22: U00, U01,") and "U19 and 2 more). See the teams" in reply
