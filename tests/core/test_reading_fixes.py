"""Reading fixes found by learners (issue 26): abbreviations and typos, punctuation inside a phrase, a short
sentence that is no bare list, and a phrasing said with "into" for "in"."""

import pytest

from bot.grading.matching import grade, states
from bot.grading.reading import read
from bot.grading.rubric import KeyPoint, Rubric


def one(*accept: str, wrong: tuple[str, ...] = ()) -> Rubric:
    return Rubric(1, (KeyPoint("p", "p", accept, wrong),))


def test_a_short_abbreviation_is_never_a_typo_of_another() -> None:
    queue = one("FIFO", "first in first out", wrong=("FILO", "LIFO"))
    assert grade(queue, "A queue is a FIFO structure").correct
    assert not grade(queue, "A queue is a FILO structure").correct
    assert not states("it is FILO", "fifo")


def test_an_accepted_phrasing_said_exactly_outweighs_a_typo_of_a_misconception() -> None:
    rubric = one("internal", wrong=("interval",))
    assert grade(rubric, "the node is internal").correct  # "internal" is one letter from "interval"
    assert not grade(rubric, "the node is interval").correct


@pytest.mark.parametrize("answer, wanted", [
    ("A queue is first in, first out.", "first in first out"),
    ("left,root,right", "left root right"),
    ("Inorder traversal is: left, root, right.", "left root right"),
    ("Traverse the left subtree. Visit the root. Traverse the right subtree.",
     "traverse the left subtree visit the root traverse the right subtree"),
    ("parent -&gt; child", "parent -> child"),
    ("parent → child", "parent -> child"),
    ("it pops in LIFO (last in, first out) order", "last in first out order"),
    ("the key: value pair", "key value pair"),
    ("a loop w/o a body", "without a body"),
])
def test_punctuation_inside_a_phrase_still_states_it(answer: str, wanted: str) -> None:
    assert states(answer, wanted)


def test_a_misconception_said_across_a_comma_voids_its_point() -> None:
    serving = one("judged on latency", "judged on throughput", wrong=("judged on throughput not latency",))
    assert not grade(serving, "serving is judged on throughput, not latency").correct
    assert grade(serving, "serving is judged on latency, not throughput").correct


def test_a_phrase_still_does_not_run_from_inside_one_sentence_into_another() -> None:
    assert not states("It splits. The model trains.", "splits the model")
    assert not states("parameters, optimizer, state, GPUs", "optimizer state")  # two listed terms


def test_a_short_full_sentence_is_no_bare_list() -> None:
    assert not read("nodes take up more memory").bare_list
    assert not read("Llama 2 took 184,320 GPU hours").bare_list
    assert grade(one("nodes take more memory"), "nodes take up more memory").correct
    assert read("sharding, parameters, communication").bare_list
    assert read("sharding parameters communication gpus").bare_list


def test_a_phrasing_tolerates_into_for_in() -> None:
    assert states("the items are put into the queue", "put in the queue")
    assert states("it is put into memory", "put in memory")
