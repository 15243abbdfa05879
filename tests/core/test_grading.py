import pytest

from bot.grading.matching import grade
from bot.grading.reading import Synonyms, normalise
from bot.grading.rubric import KeyPoint, Rubric
from bot.grading.verdict import Verdict

RUBRIC = Rubric(2, (
    KeyPoint("shard", "splits the model state", ("splits the model", "shards the parameters"),
             ("copies the whole model",)),
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


def test_one_point_short_with_half_of_another_is_partly_right_in_a_rubric_needing_two() -> None:
    assert grade(RUBRIC, "FSDP splits the model and gathers what each layer needs.").verdict is Verdict.PARTLY
    assert grade(RUBRIC, "It shards the parameters, which saves room on each GPU.").verdict is Verdict.PARTLY
    assert not grade(RUBRIC, "FSDP splits the model.").correct
    assert not grade(RUBRIC, "It gathers things and saves time.").correct  # two halves are no point
    assert grade(RUBRIC, "FSDP splits the model, but it does not save memory, so memory stays tight.").verdict \
        is Verdict.NOT_YET
    assert grade(Rubric(1, RUBRIC.points[1:]), "It gathers what each layer needs.").verdict is Verdict.NOT_YET


def test_bare_terms_do_not_match_phrases() -> None:
    assert not grade(RUBRIC, "model parameters weights memory gather").correct


# ---------------------------------------------------------------- the matcher's rules, each with a pass and a fail


def one(*accept: str, misconceptions: tuple[str, ...] = ()) -> Rubric:
    return Rubric(1, (KeyPoint("p", "p", accept, misconceptions),))


def test_words_compare_by_lemma() -> None:
    rubric = one("shards the parameters")
    assert grade(rubric, "FSDP is sharding each parameter across GPUs.").correct
    assert grade(rubric, "The parameters were sharded? No: it is sharding parameter tensors.").correct
    assert not grade(rubric, "FSDP stores the parameters.").correct


def test_a_typo_keeps_its_first_letter_and_short_words_stay_exact() -> None:
    rubric = one("constant pointer")
    assert grade(rubric, "a constnat pointer").correct
    assert not grade(rubric, "a nonconstant pointer").correct
    assert not grade(rubric, "a non-constant pointer").correct
    assert not grade(one("use row"), "use raw").correct


def test_a_word_is_no_typo_of_a_derivative_outside_its_family() -> None:
    assert grade(one("inserts it"), "it insrets it").correct
    assert not grade(one("points to"), "pointer to").correct  # -er makes a word of its own
    assert not grade(one("state of the object"), "statement of the object").correct  # and so does -ment


def test_articles_and_fillers_are_ignored_and_two_words_may_be_inserted() -> None:
    rubric = one("splits the model")
    assert grade(rubric, "It basically splits a model.").correct
    assert grade(rubric, "It splits the whole big model.").correct
    assert not grade(rubric, "It splits the whole big expensive model.").correct


def test_up_to_three_inserted_function_words_beside_two_content_words() -> None:
    rubric = one("gathers the weight shards")
    assert grade(rubric, "It gathers all copies of those weight shards.").correct  # 1 content, 2 function words
    assert grade(rubric, "It gathers each of all weight shards.").correct  # 3 function words
    assert not grade(rubric, "It gathers each of all of it for the weight shards.").correct  # 6 function words
    assert not grade(rubric, "It gathers the big fresh sharded weight shards.").correct  # 3 content words


def test_a_phrase_does_not_run_across_a_clause_break() -> None:
    rubric = one("splits the model")
    assert grade(rubric, "It splits the model; then it trains.").correct
    assert not grade(rubric, "It splits. The model trains.").correct


def test_numbers_are_normalised() -> None:
    assert grade(one("184,320 gpu hours"), "It took 184320 GPU-hours.").correct
    assert grade(one("184320 gpu hours"), "It took 184,320 GPU hours.").correct
    for said in ("16k GPUs", "16,000 GPUs", "16000 GPUs", "16 thousand GPUs"):
        assert grade(one("16000 gpus"), said).correct, said
        assert grade(one("16k gpus"), said).correct, said
    assert grade(one("3.3M gpu hours"), "3,300,000 GPU hours").correct
    assert grade(one("3.3 million gpu hours"), "3.3M GPU hours").correct
    assert grade(one("3.5 hours"), "about 3.5 hours").correct
    assert not grade(one("35 hours"), "about 3.5 hours").correct
    assert not grade(one("16000 gpus"), "1600 GPUs").correct
    assert grade(one("1 element"), "only one element").correct
    assert not grade(one("o(n)"), "O(n^2)").correct and grade(one("o(n)"), "O( n )").correct


def test_a_negated_key_point_is_not_credited() -> None:
    rubric = one("extra communication")
    assert grade(rubric, "The price is extra communication between GPUs.").correct
    for said in ("There's no extra communication.", "It does not add extra communication.",
                 "It doesn't need extra communication.", "It works without extra communication.",
                 "It never needs extra communication.", "It cannot avoid... no: it has not got extra communication."):
        assert not grade(rubric, said).correct, said


def test_a_negation_scope_ends_at_the_clause() -> None:
    rubric = one("extra communication")
    assert grade(rubric, "It is not free, it needs extra communication.").correct
    assert grade(rubric, "Memory is not the cost but extra communication is.").correct
    assert grade(rubric, "There is no free lunch while extra communication is needed.").correct
    assert grade(rubric, "It needs not only memory but extra communication.").correct
    assert not grade(rubric, "It needs no memory and no extra communication.").correct


def test_a_phrase_with_its_own_negator_matches() -> None:
    rubric = one("no backward pass", "does not need gradients")
    assert grade(rubric, "Inference has no backward pass.").correct
    assert grade(rubric, "Serving doesn't need gradients.").correct
    assert not grade(rubric, "Serving needs gradients and a backward pass.").correct


def test_a_negated_phrase_is_stated_by_its_words_inside_a_negation_scope() -> None:
    rubric = one("not copy the value", "no backward pass")
    assert grade(rubric, "The callee does not need any extra room to copy the value.").correct
    assert grade(rubric, "Serving never runs a single backward pass.").correct
    assert grade(rubric, "It passes an address instead of copying the value.").correct
    assert not grade(rubric, "The callee needs extra room to copy the value.").correct
    assert not grade(rubric, "It does not need room, so it copies the value.").correct  # another clause
    assert not grade(rubric, "Nothing is faster: it must copy the value.").correct


def test_a_negated_misconception_does_not_void() -> None:
    rubric = one("shards the parameters", misconceptions=("each gpu has the full model", "copies the whole model"))
    assert grade(rubric, "Unlike DDP, where each GPU has the full model, FSDP shards the parameters.").correct
    assert grade(rubric, "FSDP does not copy the whole model: it shards the parameters.").correct
    assert grade(rubric, "Instead of copying the whole model, it shards the parameters.").correct
    assert not grade(rubric, "FSDP copies the whole model, and shards the parameters.").correct
    assert not grade(rubric, "Each GPU has the full model, so it shards the parameters.").correct


def test_synonyms_apply_to_answers_and_phrases_alike() -> None:
    table = Synonyms({"DP": "data parallelism", "params": "parameters", "grads": "gradients"})
    assert grade(one("data parallelism replicates the model"), "DP replicates the model", synonyms=table).correct
    assert grade(one("DP replicates the model"), "Data parallelism replicates the model", synonyms=table).correct
    assert grade(one("shards the parameters and gradients"), "it shards params and grads", synonyms=table).correct
    assert not grade(one("data parallelism replicates the model"), "DP replicates the model").correct
    assert not grade(one("data parallelism"), "DDP replicates the model", synonyms=table).correct


def test_synonyms_are_immutable_and_hashable() -> None:
    table = Synonyms({"DP": "data parallelism"})
    assert table == Synonyms([("dp", "Data Parallelism")]) and hash(table) == hash(Synonyms({"dp": "data parallelism"}))
    with pytest.raises(AttributeError):
        table.anything = 1  # type: ignore[attr-defined]


def test_a_bare_list_states_no_relation() -> None:
    rubric = one("shards the parameters")
    assert grade(rubric, "FSDP is sharding the memory parameters.").correct
    assert not grade(rubric, "FSDP sharding memory parameters communication").correct
    assert not grade(rubric, "FSDP, sharding, parameters, communication.").correct
    assert not grade(one("gradients communication"), "parameters gradients optimizer communication").correct


def test_a_listed_term_still_counts() -> None:
    assert grade(one("optimizer state"), "parameters, optimizer state, GPUs").correct
    assert grade(one("data members", "member functions"), "data members and member functions").correct
    assert grade(one("file scope"), "File scope.").correct
    assert not grade(one("optimizer state"), "parameters, optimizer, state, GPUs").correct


def test_a_two_word_phrase_may_turn_round_over_function_words() -> None:
    assert grade(one("memory location"), "a location in memory").correct
    assert grade(one("store a value"), "a box in which values can be stored").correct
    assert not grade(one("store a value"), "the value of a variable is in the store").correct
    assert not grade(one("memory location"), "a location of the variable in memory").correct


def test_determiners_are_ignored_like_articles() -> None:
    assert grade(one("inside the function"), "only inside that function? no: inside its function").correct
    assert not grade(one("inside the function"), "inside the class").correct


def test_a_negator_starts_its_own_scope() -> None:
    rubric = one("not destroyed")
    assert grade(rubric, "It is not rebuilt on a call, and also not destroyed at the end.").correct
    assert not grade(rubric, "It is destroyed at the end.").correct


def test_an_aside_in_parentheses_is_its_own_clause() -> None:
    rubric = one("already sorted")
    assert grade(rubric, "It does not have to swap anything (the list is already sorted).").correct
    assert not grade(rubric, "It does not have to swap anything, the list is not already sorted.").correct
    assert grade(one("o(n)"), "O(n) time").correct and grade(one("main function"), "the main() function").correct


def test_symbols_read_as_words() -> None:
    assert grade(one("less than or equal to 1"), "when n <= 1").correct
    assert grade(one("less than 2"), "if n<2").correct
    assert grade(one("without a base case"), "a function w/o a base case").correct
    assert not grade(one("less than 2"), "if n>2").correct


def test_two_short_real_words_are_not_typos_of_each_other() -> None:
    assert not grade(one("base case"), "base cause").correct
    assert grade(one("base case"), "base csae").correct
    assert not grade(one("selection"), "section").correct


def test_identifiers_split_into_words_and_operators_relate() -> None:
    assert grade(one("array name"), "pass arrayName").correct
    assert grade(one("plus the index"), "*(arrayName + index)").correct
    assert not grade(one("array name"), "pass arrayname").correct


def test_function_words_of_a_phrase_may_stand_anywhere_in_its_window() -> None:
    rubric = one("only kept on the gpu")
    assert grade(rubric, "The shard is kept only on the GPU.").correct
    assert not grade(rubric, "The shard is kept on the GPU.").correct  # "only" is still needed
    rubric = one("constant pointer to nonconstant data")
    assert grade(rubric, "a constant pointer to nonconstant data").correct
    assert not grade(rubric, "a nonconstant pointer to constant data").correct  # content words keep their order
    assert not grade(one("not copied"), "the data is copied and not moved").correct  # so do negators


def test_a_misconception_is_matched_in_order() -> None:
    rubric = one("reference", misconceptions=("by value",))
    assert not grade(rubric, "by value, a reference").correct
    assert grade(rubric, "a reference to the value by the caller").correct


def test_the_score_gives_partial_credit_and_keeps_the_verdict() -> None:
    rubric = Rubric(1, (KeyPoint("shard", "shards the state", ("shards the optimizer state",), ()),
                        KeyPoint("gpu", "on every GPU", ("every gpu",), ())))
    full = grade(rubric, "It shards the optimizer state over every GPU.")
    one_point = grade(rubric, "It shards the optimizer state.")
    apart = grade(rubric, "The state of the optimizer: it shards it.")
    none = grade(rubric, "It makes training faster.")
    negated = grade(rubric, "It does not shard any optimizer state.")
    assert full.correct and one_point.correct and not apart.correct and not none.correct
    assert full.score == 1 and none.score == 0 and negated.score == 0
    assert full.score > one_point.score > apart.score > none.score
    assert apart.credit == (pytest.approx(0.7), 0.0)  # every word of the phrasing, but not as the phrase
    voided = grade(Rubric(1, (KeyPoint("p", "p", ("shards",), ("copies the model",)),)), "it shards, copies the model")
    assert voided.credit == (0.0,) and voided.score == 0 and not voided.correct


def test_unless_reads_as_if_not() -> None:
    rubric = one("not shard the optimizer state")
    assert grade(rubric, "It fits on one GPU, unless you shard the optimizer state.").correct
    assert not grade(rubric, "It fits on one GPU, because you shard the optimizer state.").correct
    assert not grade(one("shard the optimizer state"), "It fits unless you shard the optimizer state.").correct


def test_a_lone_non_reads_as_none() -> None:
    assert grade(one("none are replicated"), "in FSDP non are replicated").correct
    assert grade(one("nonconstant data"), "non constant data").correct
    assert not grade(one("none"), "non-constant").correct


def test_where_ends_a_negation() -> None:
    rubric = one("each gpu holds a shard")
    assert grade(rubric, "nothing is replicated where each GPU holds a shard").correct
    assert not grade(rubric, "nothing is replicated and each GPU holds a shard").correct


def test_an_unlike_with_no_break_holds_only_the_thing_contrasted() -> None:
    rubric = one("splits each layer")
    assert grade(rubric, "Unlike DP TP splits each layer across the GPUs of one server").correct
    assert not grade(rubric, "Unlike splitting each layer, DP copies the model").correct  # delimited by a comma
    assert not grade(rubric, "instead of splitting each layer it copies the whole model to every GPU").correct


def test_an_aside_about_the_thing_contrasted_credits_but_never_voids() -> None:
    rubric = Rubric(2, (KeyPoint("tp", "TP splits each layer", ("splits each layer",), ("tp copies the model",)),
                        KeyPoint("dp", "DP copies the model", ("copies the model",), ("dp splits each layer",))))
    assert grade(rubric, "Unlike TP, which splits each layer, DP copies the model to every GPU.").correct
    assert grade(rubric, "Unlike DP, where every GPU copies the model, TP splits each layer.").correct
    assert grade(rubric, "Unlike TP, DP splits each layer.").voided == ("dp",)
    tp_only = Rubric(1, rubric.points[:1])
    assert grade(tp_only, "Unlike DP, where every GPU copies the model, TP splits each layer.").correct
    assert not grade(tp_only, "TP copies the model, which splits each layer.").correct  # no contrast: it voids


def test_mixed_case_acronyms_stay_one_word_and_acronym_plurals_lose_their_s() -> None:
    assert grade(one("use lora adapters"), "we'd use LoRA adapters").correct
    assert grade(one("array name"), "pass arrayName").correct
    assert grade(one("thousands of gpu"), "Llama 3 used thousands of GPUs").correct
    assert not grade(one("use lora adapters"), "we'd use Lo Ra adapters").correct


def test_short_verbs_are_spelled_out() -> None:
    assert grade(one("they would need fast links"), "they'd need fast links").correct
    assert not grade(one("use lora adapters"), "lora, adapters, use").correct  # still a bare list


def test_a_word_that_states_one_point_is_no_half_of_another() -> None:
    rubric = Rubric(2, (KeyPoint("cost", "costly", ("millions of gpu hours",), ()),
                        KeyPoint("small", "fits small", ("on one gpu",), ())))
    assert not grade(rubric, "pretraining costs millions of GPU hours").correct
    # "GPU" is a word of both points: no half of "on one gpu" (issue 26: a half point needs a word of its own)
    assert grade(rubric, "pretraining costs millions of GPU hours, we fine tune on a GPU").verdict is Verdict.NOT_YET
    assert grade(rubric, "pretraining costs millions of GPU hours, we fine tune on one machine").verdict \
        is Verdict.PARTLY


def test_no_half_point_for_an_answer_with_a_misconception() -> None:
    rubric = Rubric(2, (KeyPoint("fast", "low latency", ("low latency",), ()),
                        KeyPoint("small", "weights only", ("only the weights",), ("serving needs more memory",)),
                        KeyPoint("big", "training is big", ("many gpus",), ())))
    assert grade(rubric, "it has low latency, on GPUs").verdict is Verdict.PARTLY
    assert grade(rubric, "serving needs more memory than training, and it has low latency, on GPUs").verdict \
        is Verdict.NOT_YET


def test_an_unlike_with_a_relative_clause_and_no_comma_is_an_aside() -> None:
    rubric = one("shards the parameters", misconceptions=("replicates the model",))
    assert grade(rubric, "unlike DDP which replicates the model on every GPU, FSDP shards the parameters").correct
    assert not grade(rubric, "FSDP replicates the model on every GPU, and shards the parameters").correct


def test_and_with_a_new_subject_ends_a_negation() -> None:
    rubric = one("splits each layer")
    assert grade(rubric, "TP isn't about copying the model and it splits each layer across GPUs").correct
    assert not grade(rubric, "TP isn't about copying the model and splitting each layer").correct


def test_a_negated_phrasing_is_stated_with_its_subject_before_the_negator() -> None:
    rubric = one("not provide a constructor")
    assert grade(rubric, "when a constructor is not provided by the programmer").correct
    assert not grade(rubric, "when a constructor is provided by the programmer").correct


def test_whether_or_not_negates_nothing() -> None:
    rubric = one("at least once")
    assert grade(rubric, "it checks whether or not to loop after running the body at least once").correct
    assert not grade(rubric, "it does not run the body at least once").correct


def test_a_negation_inside_a_negation_asserts() -> None:
    rubric = one("an eval gate")
    assert grade(rubric, "we never ship without an eval gate").correct
    assert not grade(rubric, "we ship without an eval gate").correct


def test_if_and_when_start_a_clause_that_a_negation_does_not_reach() -> None:
    rubric = one("base case is missing")
    assert grade(rubric, "the recursion does not stop if the base case is missing").correct
    assert not grade(rubric, "it is not true that the base case is missing").correct


def test_the_readings_of_negation_do_not_leak_into_each_other() -> None:
    assert not grade(one("not ship without an eval gate"), "we'd ship without an eval gate for the demo").correct
    assert not grade(one("not our use case"), "benchmarks aren't contaminated and they do test our use case").correct
    assert not grade(one("less memory"), "pretraining isn't that expensive and LoRA doesn't need less memory").correct
    assert grade(one("not our use case"), "benchmarks are not our use case").correct


def test_its_and_thats_are_verbs_and_a_possessive_s_goes() -> None:
    rubric = Rubric(2, (KeyPoint("g", "g", ("not need gradients",), ()),
                        KeyPoint("l", "l", ("judged on latency",), ())))
    assert grade(rubric, "serving doesnt need gradients and it's judged on latency").correct
    assert grade(rubric, "serving doesnt need gradients and is judged on latency").correct
    assert not grade(rubric, "serving doesnt need gradients or get judged on latency").correct
    assert grade(one("tp splits each layer"), "TP's job: TP splits each layer").correct
    assert grade(one("need a golden set"), "benchmarks miss our domain and that's why we need a golden set").correct


def test_an_undelimited_contrast_holds_two_words_or_runs_to_its_relative() -> None:
    rubric = one("lora fits on one gpu", misconceptions=("pretraining fits on one gpu",))
    assert grade(rubric, "unlike full pretraining LoRA fits on one GPU").correct
    assert not grade(rubric, "pretraining fits on one GPU, LoRA fits on one GPU too").correct
    shards = one("shards the params", misconceptions=("each gpu has the full model",))
    assert grade(shards, "unlike DDP where each GPU has the full model FSDP shards the params").correct
    assert grade(shards, "unlike plain DDP training which means each GPU has the full model, FSDP shards the params"
                 ).correct


def test_unless_after_a_negation_states_the_condition() -> None:
    rubric = one("passes the eval gate")
    assert grade(rubric, "we wont ship unless it passes the eval gate").correct
    assert not grade(rubric, "we ship unless it passes the eval gate").correct


def test_no_half_point_from_what_a_clause_denies() -> None:
    rubric = Rubric(2, (KeyPoint("w", "w", ("only the weights",), ()),
                        KeyPoint("l", "l", ("latency per request",), ())))
    assert grade(rubric, "serving only needs the weights, and each request has its latency").verdict is Verdict.PARTLY
    assert grade(rubric, "serving only needs the weights and latency is not important").verdict is Verdict.NOT_YET


def test_a_without_undoes_only_a_close_negation() -> None:
    rubric = one("an eval gate")
    assert grade(rubric, "there is no way we ship without an eval gate").correct
    assert not grade(rubric, "nothing stops us from shipping without an eval gate").correct
    assert not grade(rubric, "I did not write tests and shipped without an eval gate").correct


def test_a_negated_phrasing_needs_its_subject_right_before_the_negator() -> None:
    rubric = one("golden set is not needed")
    assert grade(rubric, "the golden set is not needed").correct
    assert grade(one("not provide a constructor"), "when a constructor is not provided").correct
    assert not grade(one("not provide a constructor"), "a constructor and its destructor are not provided").correct
    assert not grade(one("nothing about our"), "not sure about that").correct  # no content word left to state


def test_no_half_point_for_a_point_whose_opposite_is_said() -> None:
    rubric = Rubric(2, (KeyPoint("s", "s", ("shards the parameters",), ()),
                        KeyPoint("c", "c", ("more communication",), ())))
    assert grade(rubric, "FSDP shards the parameters, so the GPUs talk a lot: communication").verdict is Verdict.PARTLY
    assert grade(rubric, "FSDP shards the parameters and needs less communication").verdict is Verdict.NOT_YET


def test_an_aside_states_only_points_about_the_thing_contrasted() -> None:
    rubric = Rubric(2, (KeyPoint("split", "It splits each layer", ("splits each layer",), ()),
                        KeyPoint("fast", "It needs the fastest links", ("needs the fastest links",), ())))
    assert not grade(rubric, "unlike pipeline parallelism, which needs the fastest links, TP splits each layer").correct
    assert grade(rubric, "TP splits each layer, so it needs the fastest links").correct
    about_pp = Rubric(1, (KeyPoint("pp", "Pipeline parallelism needs slow links only", ("needs slow links",), ()),))
    assert grade(about_pp, "unlike pipeline parallelism, which needs slow links, TP needs the fastest").correct


def test_vs_is_a_contrast_and_an_aside_must_name_the_whole_thing_contrasted() -> None:
    rubric = one("shards the params", misconceptions=("each gpu has the full model",))
    assert grade(rubric, "vs DDP, where each gpu has the full model, FSDP shards the params").correct
    assert not grade(rubric, "each gpu has the full model, FSDP shards the params").correct
    synonyms = Synonyms({"DP": "data parallelism"})
    links = Rubric(2, (KeyPoint("split", "TP splits each layer", ("splits each layer",), ()),
                       KeyPoint("fast", "It exchanges data every layer: fast links", ("needs fast links",), ())))
    assert not grade(links, "unlike DP, which needs fast links, TP splits each layer", synonyms=synonyms).correct
    about_dp = Rubric(1, (KeyPoint("dp", "Data parallelism copies the model", ("copies the model",), ()),))
    assert grade(about_dp, "unlike DP, which copies the model, TP splits each layer", synonyms=synonyms).correct


def test_a_negated_phrasing_with_do_is_stated_in_the_passive() -> None:
    rubric = one("doesnt need parallelism")
    assert grade(rubric, "serving runs forward only, and parallelism isnt needed").correct
    assert not grade(rubric, "serving runs forward only, and parallelism is needed").correct


def test_and_with_a_noun_and_a_verb_after_a_clause_starts_a_new_one() -> None:
    rubric = one("model might have memorized")
    assert grade(rubric, "benchmarks dont test our refund policy and the model might have memorized them").correct
    assert not grade(rubric, "benchmarks dont test our refund policy or whether the model might have memorized").correct
    assert grade(one("any function can use"), "if declared global, any function or class can use it").correct


def test_a_subject_of_two_after_a_denial_stays_denied() -> None:
    rubric = one("gradients are sharded")
    assert not grade(rubric, "I don't think the weights and gradients are sharded across GPUs").correct
    assert not grade(rubric, "it is not true that the weights and the gradients are sharded").correct
    assert grade(rubric, "the weights and gradients are sharded across GPUs").correct


def test_a_misconception_about_the_thing_contrasted_said_in_its_aside_voids() -> None:
    rubric = Rubric(1, (KeyPoint("scale", "Training needs many GPUs; the small model fits on one GPU",
                                 ("fits on a single gpu",), ("training fits on a single gpu",)),))
    assert not grade(rubric, "serving is judged on latency, vs training, which fits on a single GPU").correct
    assert grade(rubric, "unlike training, which needs many GPUs, the small model fits on a single GPU").correct


def test_a_half_point_needs_a_word_of_that_point_alone_and_names_it() -> None:
    rubric = Rubric(2, (KeyPoint("shard", "splits the model", ("splits the model",), ()),
                        KeyPoint("comm", "costs communication", ("communication traffic", "the model syncs"), ())))
    found = grade(rubric, "It splits the model, with traffic.")
    assert found.verdict is Verdict.PARTLY and found.partly == ("comm", ("traffic",))
    # "model" is in the other point too, "communication" is in the prompt: neither is a half of its own
    assert grade(rubric, "It splits the model, and a model.").verdict is Verdict.NOT_YET
    assert grade(rubric, "It splits the model; communication.", prompt="What costs communication?").verdict \
        is Verdict.NOT_YET
    assert grade(rubric, "It splits the model; communication.").partly == ("comm", ("communication",))
