"""The Meta pack's rubrics as an instructor revised them: every rubric ends with examples of the field's
shorthand and of points said in other words, every teach-back says why it needs that many points, q08 and tb3
judge the same ideas by the same phrasings, and the shorthand reads as what it stands for."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import pytest
import yaml

from bot.content.loader import PRACTICE_FILE, QUIZ_FILE, TEACHBACK_FILE, load_library, pack_folders
from bot.core.yamlcheck import EXAMPLE_KINDS
from bot.grading.matching import grade, states
from bot.grading.reading import Synonyms, content_words

CONTENT = Path(__file__).parents[2] / "content"


@cache
def library():
    return load_library(CONTENT)


def meta():
    return library().lessons["meta-llm-scale"]


def rubric_items(folder: Path) -> list[tuple[str, dict]]:
    """Each short question and teach-back prompt of a pack, as plain YAML (id, item)."""
    items = []
    for name, key in ((QUIZ_FILE, "questions"), (PRACTICE_FILE, "questions"), (TEACHBACK_FILE, "prompts")):
        if (folder / name).exists():
            for item in yaml.safe_load((folder / name).read_text(encoding="utf-8"))[key]:
                if key == "prompts" or item["type"] == "short":
                    items.append((item["id"], item))
    return items


def tagged(item: dict) -> list[tuple[int, str, str]]:
    """The tagged examples of an item: (position in its list, kind, answer)."""
    return [(n, e["kind"], e["answer"]) for answers in (item.get("examples") or {}).values()
            for n, e in enumerate(answers) if isinstance(e, dict)]


def uses_the_table(answer: str, synonyms: Synonyms) -> bool:
    return content_words(answer, synonyms) != content_words(answer)


@pytest.mark.parametrize("folder", pack_folders(CONTENT), ids=lambda f: f.name)
def test_every_rubric_ends_with_shorthand_and_paraphrase_examples(folder: Path) -> None:
    lesson = next(lesson for lesson in library().lessons.values() if lesson.path == folder)
    for item_id, item in rubric_items(folder):
        examples = tagged(item)
        assert {kind for _, kind, _ in examples} == set(EXAMPLE_KINDS), item_id
        for answers in item["examples"].values():
            kinds = [isinstance(e, dict) for e in answers]
            assert kinds == sorted(kinds), f"{item_id}: a tagged example stands before an untagged one"
        for _, kind, answer in examples:
            if kind == "shorthand":
                assert uses_the_table(answer, lesson.synonyms), (item_id, answer)


def test_a_shorthand_example_is_recognised_by_the_synonyms_it_uses() -> None:
    table = meta().synonyms
    assert uses_the_table("FT'd SLM on 1 gpu, PT on 16k GPUs", table)
    assert not uses_the_table("we fine-tune a small model on one GPU", table)


def test_every_teachback_says_why_it_needs_that_many_points() -> None:
    for prompt in meta().prompts:
        assert prompt.needed_because and "\n" not in prompt.needed_because, prompt.id


def test_q08_and_tb3_judge_the_same_ideas_by_the_same_phrasings() -> None:
    q08 = {p.id: p for p in library().questions["meta-q08"].rubric.points}
    tb3 = {p.id: p for p in library().prompts["meta-tb3"].key_points}
    for mine, theirs in (("pretrain-cost", ("pretrain-cost",)), ("lora-mechanism", ("few-params",)),
                         ("small-artifact", ("cheap-hardware", "swappable"))):
        assert set(tb3[mine].accept) == {a for p in theirs for a in q08[p].accept}, mine
        assert set(tb3[mine].misconceptions) == {m for p in theirs for m in q08[p].misconceptions}, mine


SHORTHAND = [  # (what a learner types, what it stands for)
    ("the FM took millions of GPU-hrs", "the foundation model took millions of GPU hours"),
    ("PT costs millions", "pretraining costs millions"),
    ("FT a small model", "fine tuning a small model"),
    ("an OSS model", "an open weights model"),
    ("an SLM on one GPU", "a small language model on one GPU"),
    ("DP copies the model", "data parallelism copies the model"),
    ("TP splits each layer", "tensor parallelism splits each layer"),
    ("PP goes across servers", "pipeline parallelism goes across servers"),
    ("FSDP shards the state", "fully sharded data parallel shards the state"),
    ("ZeRO shards the state", "the zero redundancy optimizer shards the state"),
    ("the math is in bf16", "the math is in BF-16"),
    ("in fp16 you need loss scaling", "in FP-16 you need loss scaling"),
    ("restart from the last ckpt", "restart from the last checkpoint"),
    ("MFU of 40", "model flops utilization of 40"),
    ("a hosted API", "a hosted application programming interface"),
    ("184,320 GPU-hr", "184320 GPU hours"),
    ("no backprop when serving", "no backward pass when serving"),
    ("API b/c we have no GPU", "API because we have no GPU"),
    ("never ship w/o an eval gate", "never ship without an eval gate"),
    ("user -> gateway", "user to gateway"),
]


@pytest.mark.parametrize(("typed", "meant"), SHORTHAND, ids=[typed for typed, _ in SHORTHAND])
def test_the_field_s_shorthand_reads_as_what_it_stands_for(typed: str, meant: str) -> None:
    assert states(typed, meant, meta().synonyms) and states(meant, typed, meta().synonyms)


READER_PUNCTUATION = ("needs the reader to read punctuation inside a phrase (commas, slashes, parentheses, colons, "
                      "arrows); then move the answer into the pack's examples, or add `$/call: cost per call` to "
                      "lesson.yaml's synonyms")


@pytest.mark.parametrize(("item_id", "answer"), [
    ("meta-tb6", "user -> gateway -> fwd pass on 1 GPU. Kept: SQLite. refuse to ship w/o an eval gate"),
    ("meta-tb6", "req -> gw -> forward pass. Kept: mock auth. Must have: eval gate"),
], ids=["kept-label", "must-have-label"])
def test_a_terse_label_states_its_point(item_id: str, answer: str) -> None:
    assert grade(library().prompts[item_id].rubric, answer, synonyms=meta().synonyms).correct


@pytest.mark.xfail(strict=True, reason=READER_PUNCTUATION)
def test_dollars_per_call_reads_as_cost_per_call() -> None:
    rules = {" ".join(said): " ".join(meant) for said, meant in meta().synonyms.rules}
    table = Synonyms({**rules, "$/call": "cost per call"})
    assert states("we pay a higher cost per call", "higher cost per call", table)
    assert states("we pay a higher $/call", "higher cost per call", table)


# True statements that a misconception without its subject once voided (the fourth review's W1-W3): a misconception
# is a whole claim with its subject, so these stand and are credited.
TRUE_STATEMENTS = [
    ("meta-q16", "Keep personal data out of the adapter: scrub PII from the tickets before training.", "scrub-pii"),
    ("meta-q06", "DDP costs more memory since every GPU has the model; FSDP shards the params and pays in extra "
                 "communication.", "comm-cost"),
    ("meta-tb4", "We run a local model over the hosted API for privacy; the cost is GPU memory and ops work.",
     "reason"),
]


@pytest.mark.parametrize(("item_id", "answer", "point"), TRUE_STATEMENTS, ids=[t[0] for t in TRUE_STATEMENTS])
def test_a_true_statement_is_not_voided_by_a_fragment(item_id: str, answer: str, point: str) -> None:
    item = library().questions.get(item_id) or library().prompts[item_id]
    result = grade(item.rubric, answer, synonyms=meta().synonyms)
    assert point not in result.voided and point in result.matched, result


FRAGMENTS = {"meta-q16": ["personal data out of the adapter"], "meta-q06": ["costs more memory", "cost is more memory"],
             "meta-tb4": ["api for data privacy", "api for privacy"]}


def test_the_voiding_fragments_are_gone() -> None:
    for item_id, fragments in FRAGMENTS.items():
        item = library().questions.get(item_id) or library().prompts[item_id]
        said = {m for point in item.rubric.points for m in point.misconceptions}
        assert not said & set(fragments), item_id


def test_tb1_passes_only_with_a_number_from_the_brief() -> None:
    # the prompt asks for one: both cost points take only the brief's numbers, so three of four carry one
    tb1 = library().prompts["meta-tb1"]
    for point in tb1.key_points:
        if point.id in {"compute-budget", "efficiency-in-price"}:
            assert all(any(c.isdigit() for c in phrasing) for phrasing in point.accept), point.id
    without = ("Pretraining costs millions of GPU hours on thousands of GPUs and the hardware keeps failing; we "
               "fine tune an adapter on open weights, add RAG, and serving is judged on latency per request.")
    assert not grade(tb1.rubric, without, synonyms=meta().synonyms).correct
    assert grade(tb1.rubric, without.replace("millions of GPU hours", "3.3 million GPU hours"),
                 synonyms=meta().synonyms).correct
