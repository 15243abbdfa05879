"""The three verdicts of bot.grading.verdict, each rule with an answer it applies to and one it does not: correct
earns the point; partly right names what is there and the one point missing or in doubt; not yet."""

from bot.grading.honor import real_attempt
from bot.grading.lists import is_list
from bot.grading.matching import grade
from bot.grading.rubric import KeyPoint, Rubric
from bot.grading.verdict import LIST_REASON, Doubt, Verdict

RUBRIC = Rubric(2, (
    KeyPoint("shard", "It splits the model state", ("splits the model", "shards the parameters"),
             ("copies the whole model",)),
    KeyPoint("gather", "It gathers the weights before use", ("gathers the weights", "all gather"), ()),
    KeyPoint("memory", "It saves memory", ("less memory", "saves memory"), ()),
))


def one(*accept: str, misconceptions: tuple[str, ...] = ()) -> Rubric:
    return Rubric(1, (KeyPoint("p", "the point", accept, misconceptions),))


def test_enough_points_are_correct_and_fewer_not_yet() -> None:
    found = grade(RUBRIC, "FSDP splits the model and gathers the weights before each layer.")
    assert found.verdict is Verdict.CORRECT and found.correct and found.missing is None and found.doubt is None
    short = grade(RUBRIC, "It saves memory.")
    assert short.verdict is Verdict.NOT_YET and not short.correct and short.missing is None


def test_a_half_point_is_partly_right_and_names_the_point_missing() -> None:
    found = grade(RUBRIC, "FSDP splits the model and gathers what each layer needs.")
    assert found.verdict is Verdict.PARTLY and not found.correct
    assert (found.matched, found.missing, found.doubt) == (("shard",), "gather", Doubt.HALF)
    assert found.partly == ("gather", ("gathers",))
    assert 'Part of "It gathers the weights before use"' in found.reason and "'gathers'" in found.reason
    assert grade(RUBRIC, "FSDP splits the model.").verdict is Verdict.NOT_YET


def test_a_teachback_rubric_that_needs_all_its_points_is_partly_met_by_all_but_a_half() -> None:
    needs_all = Rubric(3, RUBRIC.points)
    found = grade(needs_all, "It splits the model and saves memory, then gathers what the layer needs.")
    assert found.verdict is Verdict.PARTLY and found.missing == "gather"
    assert grade(needs_all, "It splits the model and saves memory, then gathers the weights.").correct


def test_a_list_takes_no_half_point_and_is_told_why() -> None:
    listed = grade(RUBRIC, "shards the parameters, memory, fewer copies")
    assert listed.verdict is Verdict.NOT_YET and listed.listed and listed.reason == LIST_REASON
    said = grade(RUBRIC, "It shards the parameters, so the memory each GPU uses goes down")
    assert said.verdict is Verdict.PARTLY and not said.listed
    assert grade(RUBRIC, "- splits the model\n- gathers the weights").correct  # a list that states enough


def test_a_list_is_items_of_a_few_words_between_separators() -> None:
    for text in ("3.3M GPU hours, MFU 40%, 466 interruptions, LoRA adapter", "sharding - gathering - memory",
                 "shards params. gathers weights. less memory",
                 "hosted API, open weights, lock in, gap is knowledge, own domain"):
        assert is_list(text), text
    for text in ("It shards the parameters, so each GPU holds less", "sharding",
                 "it splits the model, it gathers the weights, and it saves memory",
                 "FSDP splits the model across every GPU of the node, gathers weights"):
        assert not is_list(text), text


def test_a_list_cannot_be_self_graded_into_a_point() -> None:
    prompt = "Why does FSDP save memory?"
    assert not real_attempt("sharding, gathering, fewer copies, less memory", prompt, ())
    assert real_attempt("each GPU keeps only its shard and gathers the rest when needed", prompt, ())
    assert not grade(RUBRIC, "sharding, gathering, fewer copies").self_gradable
    assert grade(RUBRIC, "each GPU keeps its shard and fetches the rest").self_gradable


def test_no_half_point_from_a_point_the_answer_denies() -> None:
    # "gather" is the point's own word, said only under a negation: the answer denies the point
    assert grade(RUBRIC, "FSDP splits the model and never gathers anything, the weights stay put").verdict \
        is Verdict.NOT_YET
    assert grade(RUBRIC, "FSDP splits the model, and the weights stay put until needed").verdict is Verdict.PARTLY


def test_a_point_stated_and_denied_is_partly_right() -> None:
    found = grade(one("splits the model"), "FSDP splits the model. No, FSDP does not split the model.")
    assert found.verdict is Verdict.PARTLY and found.doubt is Doubt.DENIED and found.missing == "p"
    assert grade(one("splits the model"), "FSDP splits the model. It does not copy it.").correct
    assert grade(one("splits the model"), "It splits the model; no, it does not split the model").verdict \
        is Verdict.PARTLY
    assert grade(one("has a return type"), "A function has a return type; a constructor has no return type").correct
    assert grade(one("has a return type"), "A function has a return type. A constructor is run once, and has no "
                 "return type").correct  # the clause with no subject of its own is said of the clause before
    assert grade(one("splits the model"), "unlike DDP, which copies instead of splitting the model, FSDP splits the "
                 "model").correct  # a contrast denies nothing
    assert grade(one("not copy the model"), "it does not copy the model, it splits it").correct


def test_a_misconceptions_words_beside_the_point_make_it_partly_right() -> None:
    rubric = Rubric(1, (KeyPoint("p", "Each GPU holds only a shard of the model", ("shards the parameters",),
                                 ("every gpu holds the whole model",)),))
    found = grade(rubric, "the whole model is what every GPU holds and FSDP shards the parameters")
    assert found.verdict is Verdict.PARTLY and found.doubt is Doubt.MISCONCEPTION and found.missing == "p"
    assert grade(rubric, "every GPU holds a slice and FSDP shards the parameters of the model").correct
    assert grade(rubric, "every GPU holds the whole model and FSDP shards the parameters").verdict is Verdict.NOT_YET
    assert grade(rubric, "every GPU holds a slice of the batch and the whole run uses FSDP which shards the parameters "
                 "of the model").correct  # the words far apart in a long clause: no misconception said


def test_a_point_stated_only_through_a_real_word_one_letter_off_is_partly_right() -> None:
    rubric = one("causal mask")
    found = grade(rubric, "it applies a casual mask")
    assert found.verdict is Verdict.PARTLY and found.doubt is Doubt.TYPO and "'casual'" in found.reason
    assert grade(rubric, "it applies a causl mask").correct  # no word of its own: a plain typo
    assert grade(rubric, "it applies a causal mask").correct


def test_a_contrast_keeps_its_direction() -> None:
    rubric = one("judged on latency", misconceptions=("throughput, not latency",))
    for said in ("serving is judged on latency not throughput", "serving is judged on latency, not throughput"):
        assert grade(rubric, said).correct, said
    assert grade(rubric, "serving: latency not throughput").voided == ()
    for said in ("serving is judged on throughput not latency", "serving: throughput not latency, judged on latency"):
        assert grade(rubric, said).voided == ("p",), said
    assert grade(one("not provide a constructor"), "when a constructor is not provided").correct


def test_a_word_the_point_itself_says_under_a_negation_denies_nothing() -> None:
    rubric = Rubric(2, (KeyPoint("frozen", "It freezes the base", ("freezes the base",), ()),
                        KeyPoint("small", "It ships a small adapter and adds no latency",
                                 ("ships a small adapter", "no added latency"), ())))
    assert grade(rubric, "LoRA freezes the base and ships the adapter, no latency").verdict is Verdict.PARTLY
    assert grade(rubric, "LoRA freezes the base and never ships an adapter").verdict is Verdict.NOT_YET


def test_one_word_is_no_list_but_two_bare_terms_are() -> None:
    one_word = grade(one("shards the parameters"), "sharding")
    assert not one_word.listed and one_word.reason == "" and one_word.self_gradable
    assert grade(one("shards the parameters"), "sharding parameters weights").listed


def test_a_misconception_stated_beside_enough_other_points_is_never_correct() -> None:
    # Three of four points needed: a wrong claim about the fourth is a wrong claim, not a point left out.
    rubric = Rubric(2, (
        *RUBRIC.points[1:],
        KeyPoint("why", "Low utilisation is model math against the peak rate", ("against the peak rate",),
                 ("the gpus were idle",)),
    ))
    found = grade(rubric, "It gathers the weights and saves memory; MFU is low because the GPUs were idle a lot.")
    assert found.verdict is Verdict.PARTLY and not found.correct
    assert (found.missing, found.doubt) == ("why", Doubt.MISCONCEPTION) and "'idle'" in found.reason
    assert grade(rubric, "It gathers the weights and saves memory.").correct  # nothing wrong said: correct

