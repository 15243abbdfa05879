"""Classes of false rejects the reader fixes by rule (issue 35): a word said in another form of its family, a
confinement said as its negated complement, and a point said beside a misconception in another clause."""

from bot.grading.matching import grade, states
from bot.grading.rubric import KeyPoint, Rubric
from bot.grading.verdict import Doubt, Verdict
from bot.grading.words import derived


def one(*accept: str, wrong: tuple[str, ...] = ()) -> Rubric:
    return Rubric(1, (KeyPoint("p", "the point", accept, wrong),))


def test_a_word_of_the_same_family_states_the_word() -> None:
    assert states("the declaration of a variable comes first", "declare a variable")
    assert states("its execution happens once before the test", "executes once before")
    assert states("recursion calls itself on a smaller input", "recurse on a smaller input")
    assert states("it is stored locally", "stored local")
    assert derived("deletion", "delete") and derived("insertion", "insert")


def test_a_family_never_joins_words_of_their_own() -> None:
    assert not states("a pointer to memory", "point to memory")
    assert not states("the statement of the loop", "state of the loop")
    assert not states("a relative address", "relation address")
    assert not derived("variable", "variation") and not derived("position", "positive")


def test_a_word_of_the_family_is_no_typo_in_doubt() -> None:
    result = grade(one("define the function"), "the definition of the function holds its body")
    assert result.verdict is Verdict.CORRECT and result.doubt is None


def test_only_inside_is_said_as_not_outside() -> None:
    local = one("only used inside the function", "only accessible within the function")
    assert grade(local, "a local variable can't be used outside of the function body").correct
    assert grade(local, "it is never accessible outside that function").correct
    assert not grade(local, "a local variable can be used outside of the function").correct
    assert not grade(local, "it is accessible outside the function, not only inside").correct


def test_a_point_said_beside_its_misconception_in_another_clause_is_partly_right() -> None:
    loop = one("runs at least once", wrong=("while loop always runs at least once",))
    result = grade(loop, "a do while runs at least once. the while loop always runs at least once too")
    assert result.verdict is Verdict.PARTLY and result.doubt is Doubt.MISCONCEPTION and result.missing == "p"
    assert not result.correct
    assert grade(loop, "the while loop always runs at least once").verdict is Verdict.NOT_YET
    assert grade(loop, "the do while runs at least once").correct


def test_a_rubric_needing_one_point_is_partly_met_by_three_quarters_of_a_phrasing_never_by_half() -> None:
    scope = one("visible in every function of the file", "the whole program")
    result = grade(scope, "a global is visible to each function throughout its file")
    assert result.verdict is Verdict.PARTLY and result.doubt is Doubt.HALF and not result.correct
    assert grade(scope, "it is visible somewhere").verdict is Verdict.NOT_YET  # a quarter
    assert grade(scope, "visible in main, not every function").verdict is Verdict.NOT_YET  # half, and denied
    assert grade(scope, "global: visible, function, file").verdict is Verdict.NOT_YET  # a list of terms


def test_a_verb_of_prevention_denies_what_it_governs() -> None:
    by_reference = one("no copy", wrong=("reference copies the data",))
    assert grade(by_reference, "a reference avoids copying the data, so big objects are cheap").correct
    assert grade(by_reference, "passing a reference prevents a copy of the argument").correct
    assert grade(by_reference, "the reference eliminates copying, which by value needs").correct
    assert not grade(by_reference, "by reference it copies the data").correct
    assert not states("it prevents the function from changing the original", "changing the original")
