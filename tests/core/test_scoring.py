"""The scoring rules (bot/grading/scoring.py), as pure functions."""

import pytest

from bot.grading.scoring import answer_points, competition_rank, competition_ranks, teachback_needed, teachback_points

pytestmark = pytest.mark.both_engines


@pytest.mark.parametrize("correct, first, points", [(True, True, 1), (True, False, 0), (False, True, 0),
                                                    (False, False, 0)])
def test_only_a_correct_first_answer_scores(correct: bool, first: bool, points: int) -> None:
    assert answer_points(correct, first) == points


@pytest.mark.parametrize("key_points, needed", [(1, 1), (2, 2), (3, 2), (4, 3), (5, 3), (6, 4)])
def test_a_teachback_needs_more_than_half_of_its_key_points(key_points: int, needed: int) -> None:
    assert teachback_needed(key_points) == needed


@pytest.mark.parametrize("passes, before, points", [(True, False, 1), (True, True, 0), (False, False, 0),
                                                    (False, True, 0)])
def test_a_teachback_scores_the_first_time_it_passes(passes: bool, before: bool, points: int) -> None:
    assert teachback_points(passes, before) == points


def test_competition_ranks_share_places_and_skip_after() -> None:
    assert competition_ranks([5, 3, 3, 1]) == [1, 2, 2, 4]
    assert competition_ranks([2, 2, 2]) == [1, 1, 1]
    assert competition_ranks([9, 7, 7, 7, 1]) == [1, 2, 2, 2, 5]
    assert competition_ranks([]) == []


def test_one_rank_counts_those_ahead() -> None:
    assert [competition_rank(better) for better in (0, 1, 3)] == [1, 2, 4]
    ranks = competition_ranks([5, 3, 3, 1])
    scores = [5, 3, 3, 1]
    assert ranks == [competition_rank(sum(s > mine for s in scores)) for mine in scores]
