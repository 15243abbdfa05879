"""Every scope rule of bot.grading.rules, by its own examples: one answer that states its phrase, one that does
not."""

import pytest

from bot.grading.matching import states
from bot.grading.rules import SCOPE_RULES, ScopeRule


@pytest.mark.parametrize("row", SCOPE_RULES, ids=lambda row: row.name)
def test_a_scope_rule_reads_its_examples(row: ScopeRule) -> None:
    assert states(row.states, row.phrase), f"{row.name}: {row.states!r} should state {row.phrase!r}"
    assert not states(row.does_not_state, row.phrase), f"{row.name}: {row.does_not_state!r} states {row.phrase!r}"


def test_each_rule_has_its_own_name() -> None:
    assert len({row.name for row in SCOPE_RULES}) == len(SCOPE_RULES)
