from bot.grading.matching import grade
from bot.grading.reading import Synonyms
from bot.grading.rubric import KeyPoint, Rubric
from bot.grading.selfcheck import RubricIssue, audit_rubric, bare_list

PROMPT = "In a sentence: what does FSDP do with the model's state, and what does it cost?"
RUBRIC = Rubric(2, (
    KeyPoint("shard", "splits the state", ("shards the parameters", "splits the model"), ("copies the whole model",)),
    KeyPoint("comm", "costs communication", ("more communication", "gathers the weights"), ()),
))


def errors(issues: list[RubricIssue]) -> list[RubricIssue]:
    return [i for i in issues if not i.warning]


def test_a_sound_rubric_with_agreeing_examples_has_no_issue() -> None:
    good = ["It shards the parameters, so it needs more communication."]
    bad = ["It copies the whole model to every GPU and needs more communication.", ""]
    assert audit_rubric(RUBRIC, PROMPT, good, bad) == []


def test_a_correct_example_graded_wrong_is_reported_with_its_key_points() -> None:
    long_answer = "It shards the parameters across the GPUs, which is really all there is to say about it."
    issues = audit_rubric(RUBRIC, PROMPT, ["It shards the parameters and needs more communication.", long_answer])
    assert issues == [RubricIssue(
        ("examples", "correct", 1),
        'graded wrong but listed as correct: "It shards the parameters across the GPUs, which is really…"'
        " (matched: shard; missed: comm)")]


def test_a_voided_key_point_is_named() -> None:
    issues = audit_rubric(RUBRIC, PROMPT, ["It copies the whole model, splits the model, and more communication."])
    assert issues[0].message.endswith("(matched: comm; missed: shard; voided: shard)")


def test_a_wrong_example_graded_correct_is_reported() -> None:
    issues = audit_rubric(RUBRIC, PROMPT, [], ["x", "It splits the model but needs more communication."])
    assert issues == [RubricIssue(
        ("examples", "wrong", 1),
        'graded correct but listed as wrong: "It splits the model but needs more communication." '
        "(matched: shard, comm)")]


def test_warns_when_the_prompt_is_graded_correct() -> None:
    echo = Rubric(1, (KeyPoint("p", "p", ("with the model", "shards"), ()),))
    issues = audit_rubric(echo, PROMPT)
    assert RubricIssue(("prompt",), "the question's own prompt is graded correct (matched: p)", True) in issues
    assert not any(i.where == ("prompt",) for i in audit_rubric(RUBRIC, PROMPT))


def test_warns_when_an_empty_answer_is_graded_correct() -> None:
    issues = audit_rubric(Rubric(0, RUBRIC.points), PROMPT)
    assert RubricIssue(("rubric",), "an empty answer is graded correct (matched: none)", True) in issues
    assert not any("empty answer" in i.message for i in audit_rubric(RUBRIC, PROMPT))


def test_a_bare_list_of_the_accepted_words_graded_correct_is_an_error() -> None:
    # an error since issue 26 (keyword lists never pass), a warning before
    words = Rubric(2, (KeyPoint("a", "a", ("sharding",), ()),
                       KeyPoint("b", "b", ("communication", "more traffic"), ())))
    assert bare_list(words) == "sharding, communication, more, traffic"
    issues = audit_rubric(words, PROMPT)
    assert RubricIssue(("rubric",), 'a bare list of the accepted words is graded correct: '
                       '"sharding, communication, more, traffic" (matched: a, b); give those key points phrasings '
                       'that relate two words or more', False) in issues
    assert not any("bare list" in i.message for i in audit_rubric(RUBRIC, PROMPT))


def test_a_keyword_list_strung_with_connectives_is_still_a_bare_list() -> None:
    relation = Rubric(1, (KeyPoint("a", "a", ("shards the parameters",), ()),))
    assert bare_list(relation, joiner=" so ") == "shards so parameters"
    assert not grade(relation, "shards so parameters because communication").correct
    assert not any("bare list" in i.message for i in audit_rubric(relation, PROMPT))
    assert grade(relation, "it shards the parameters, so it needs communication").correct


def test_the_bare_list_reads_synonyms() -> None:
    rubric = Rubric(1, (KeyPoint("a", "a", ("uses DP",), ()),))
    assert bare_list(rubric, Synonyms({"DP": "data parallelism"})) == "uses, data, parallelism"


def test_warns_when_an_accepted_word_is_one_typo_from_a_prompt_word() -> None:
    rubric = Rubric(1, (KeyPoint("p", "p", ("shards the parameters", "it costs"), ()),))
    issues = audit_rubric(rubric, PROMPT)
    assert RubricIssue(("rubric", "points", 0, "accept", 1), 'accepted word "costs" is one typo away from "cost"'
                       ' in the prompt', True) not in issues  # the same lemma is the same word, not a typo
    near = Rubric(1, (KeyPoint("p", "p", ("shards the parameters", "the modle state", "modle"), ()),))
    typo = RubricIssue(("rubric", "points", 0, "accept", 1),
                       'accepted word "modle" is one typo away from "model" in the prompt', True)
    assert [i for i in audit_rubric(near, PROMPT) if "typo" in i.message] == [typo]  # once, where it first occurs
    assert not [i for i in audit_rubric(RUBRIC, PROMPT) if "typo" in i.message]


def test_errors_come_before_warnings() -> None:
    issues = audit_rubric(Rubric(0, RUBRIC.points), PROMPT, ["nothing here"], ["x", "It shards the parameters."])
    # the bare list graded correct is an error since issue 26 (keyword lists never pass)
    assert [i.warning for i in issues] == [False, False, False, True, True] and len(errors(issues)) == 3


def test_a_plural_of_a_prompt_word_is_no_typo_of_it() -> None:
    rubric = Rubric(1, (KeyPoint("p", "p", ("thousands of gpus",), ()),))
    assert audit_rubric(rubric, "Why does one GPU not suffice?") == []
    near = Rubric(1, (KeyPoint("p", "p", ("a modle",), ()),))
    assert [i.message for i in audit_rubric(near, "Which model is it?") if "typo" in i.message] == [
        'accepted word "modle" is one typo away from "model" in the prompt']
