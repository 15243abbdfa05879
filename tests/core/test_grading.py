from bot.content.model import KeyPoint, Rubric
from bot.grading import grade, normalise

RUBRIC = Rubric(2, (
    KeyPoint("shard", "splits the model state", ("splits the model", "shards the parameters"), ("copies the whole model",)),
    KeyPoint("gather", "gathers before use", ("gathers the weights", "all gather"), ()),
    KeyPoint("memory", "saves memory", ("less memory", "saves memory"), ()),
))


def test_normalise_case_punctuation_quotes_and_ampersand() -> None:
    assert normalise("  It’s  FSDP & “ZeRO”!! ") == "its fsdp and zero"


def test_key_points_with_typos_and_an_extra_word() -> None:
    result = grade(RUBRIC, "FSDP splits the whole model and gathres the weights just in time.")
    assert result.correct and result.matched == ("shard", "gather")


def test_threshold_counts_key_points() -> None:
    assert not grade(RUBRIC, "It saves memory.").correct
    assert grade(RUBRIC, "It saves memory because it shards the parameters.").correct


def test_a_misconception_voids_its_key_point() -> None:
    result = grade(RUBRIC, "It copies the whole model to every GPU, which splits the model, and saves memory.")
    assert "shard" in result.voided and "shard" not in result.matched
    assert result.matched == ("memory",) and not result.correct


def test_short_words_are_not_typos_of_each_other() -> None:
    rubric = Rubric(1, (KeyPoint("p", "p", ("no extra cost",), ()),))
    assert not grade(rubric, "there is an extra cost").correct
    assert grade(rubric, "with no extra cost").correct


def test_bare_terms_do_not_match_phrases() -> None:
    assert not grade(RUBRIC, "model parameters weights memory gather").correct
