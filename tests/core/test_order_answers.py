"""How an order question's typed answer is read."""

from __future__ import annotations

import pytest
from support import CORE_PACK

from bot.content.loader import load_library
from bot.core.errors import StudyError
from bot.questions.order import Ordering


@pytest.mark.parametrize("text, read", [("4 1 3 2", [4, 1, 3, 2]), ("4132", [4, 1, 3, 2]), ("4-1-3-2", [4, 1, 3, 2]),
                                        ("4, 1, 3 then 2", [4, 1, 3, 2])])
def test_an_order_answer_is_read_as_typed(text: str, read: list[int]) -> None:
    assert _ordering().parse(text) == read


@pytest.mark.parametrize("text", ["-1 -2 -3 -4", "4 1 3 -2", "1 2 3"])
def test_an_order_answer_with_minus_signs_or_a_missing_step_is_refused(text: str) -> None:
    """"-1 -2 -3 -4" is not "1 2 3 4": it is refused, and nothing is recorded."""
    with pytest.raises(StudyError, match="Give each number from 1 to 4 once"):
        _ordering().parse(text)


def _ordering() -> Ordering:
    lesson = next(iter(load_library(CORE_PACK).lessons.values()))
    found = next(q for q in lesson.questions if isinstance(q, Ordering))
    assert len(found.steps) == 4
    return found
