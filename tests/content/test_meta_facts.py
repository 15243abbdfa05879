"""The Meta pack's facts: every number that must add up does, and the claims a review found wrong
(against the pack's checked sources) stay corrected."""

from __future__ import annotations

import re
from decimal import ROUND_HALF_UP, Decimal

import pytest
import yaml
from support import CONTENT, channel, learner

from bot.core.config import Settings
from bot.core.messages import Command
from bot.runtime.app import StudyBot

PACK = CONTENT / "industry" / "meta"

# Llama 2's pretraining GPU-hours per model and in all, as the paper's Table 2 gives them.
LLAMA2_GPU_HOURS = {"7B": 184_320, "13B": 368_640, "34B": 1_038_336, "70B": 1_720_320}
LLAMA2_TOTAL = 3_311_616


def text(name: str) -> str:
    return (PACK / name).read_text(encoding="utf-8")


def flat(name: str) -> str:
    """The file's text on one line (Markdown wraps nothing, but tables and lists do break lines)."""
    return " ".join(text(name).split())


def load(name: str):
    return yaml.safe_load(text(name))


def number(written: str) -> Decimal:
    return Decimal(written.replace(",", ""))


def sentences(*texts: str) -> list[str]:
    return [s for t in texts for s in re.split(r"(?<=[.!?])\s+|\n+", t) if s.strip()]


def questions() -> list[dict]:
    return load("quiz.yaml")["questions"]


def glossary(term: str) -> dict:
    return next(t for t in load("glossary.yaml")["terms"] if t["term"] == term)


def prompt(prompt_id: str) -> dict:
    return next(p for p in load("teachback.yaml")["prompts"] if p["id"] == prompt_id)


def question(question_id: str) -> dict:
    """A question of the quiz or of the practice set."""
    return next(q for q in questions() + load("practice.yaml")["questions"] if q["id"] == question_id)


def taught_text() -> list[str]:
    """What the pack states as true: brief, notes, README, glossary definitions, and the quiz's and teach-backs'
    prompts, keys, model answers, explanations and key points (not the wrong choices or misconceptions)."""
    parts = [text("brief.md"), text("notes.md"), text("README.md")]
    parts += [t["definition"] for t in load("glossary.yaml")["terms"]]
    for q in questions():
        parts += [q["prompt"], q["explanation"], q.get("model_answer", "")]
        parts += [c["text"] for c in q.get("choices", []) if c.get("correct")]
        parts += [p["point"] for p in (q.get("rubric") or {}).get("points", [])]
    for p in load("teachback.yaml")["prompts"]:
        parts += [p["prompt"], *(k["point"] for k in p["key_points"])]
    return parts


# ---------------------------------------------------------------- numbers that must add up


def test_the_readme_gpu_hour_total_is_the_sum_of_all_four_models():
    line = re.search(r"([\d,]+) \(7B\) \+ ([\d,]+) \(13B\) \+ ([\d,]+) \(34B[^)]*\) \+ ([\d,]+) \(70B\) = ([\d,]+)",
                     flat("README.md"))
    assert line, "README.md lists Llama 2's GPU-hours per model"
    *parts, total = (number(g) for g in line.groups())
    assert parts == list(LLAMA2_GPU_HOURS.values())
    assert sum(parts) == total == LLAMA2_TOTAL


def test_the_notes_list_the_same_four_models_and_total():
    section = flat("notes.md").split("## P2 —")[1].split("## ")[0]
    total = re.search(r"([\d,]+) A100-80GB GPU-hours in all", section)
    assert total and number(total.group(1)) == LLAMA2_TOTAL
    listed = {m.group(2): number(m.group(1)) for m in re.finditer(r"([\d,]+) for (\d+B)", section)}
    assert listed == LLAMA2_GPU_HOURS and sum(listed.values()) == LLAMA2_TOTAL


def test_the_rounded_family_figure_matches_the_total():
    for name in ("brief.md", "README.md"):
        for million in re.findall(r"(\d+(?:\.\d+)?) million (?:A100 )?GPU-hours", flat(name)):
            assert Decimal(million) == round(Decimal(LLAMA2_TOTAL) / 10**6, 1), (name, million)


def test_each_cost_table_row_is_hours_times_price():
    rows = re.findall(r"\| \$([\d.]+) \| ([\d,]+) × \$([\d.]+) = \$([\d,]+), about \$([\d.]+)M \|", text("README.md"))
    assert len(rows) == 3
    for price, hours, again, dollars, rounded in rows:
        assert price == again and number(hours) == LLAMA2_TOTAL
        assert number(hours) * Decimal(price) == number(dollars)
        assert round(number(dollars) / 10**6, 1) == Decimal(rounded)


def test_the_flops_to_gpu_hours_example_adds_up():
    readme = flat("README.md")
    step = re.search(r"3\.8 × 10\^25 ÷ \(4 × 10\^14\) ≈ ([\d.]+) × 10\^(\d+) GPU-seconds, and [\d.]+ × 10\^\d+ ÷ "
                     r"3,600 ≈ ([\d.]+) million H100-hours", readme)
    assert step, "README.md works FLOPs into GPU-hours"
    seconds = Decimal("3.8e25") / Decimal("4e14")
    assert seconds == Decimal(step.group(1)) * 10 ** int(step.group(2))
    hours = seconds / 3600
    assert round(hours / 10**6, 1) == Decimal(step.group(3))
    # 400 TFLOPs per GPU is the figure the paper gives for 16,384 GPUs at 41% MFU
    assert "400 TFLOPs per GPU (41% MFU on 16,384 H100s)" in readme


def test_the_goodput_step_divides_useful_hours_by_the_share_of_useful_time():
    step = re.search(r"([\d.]+) million useful hours above would need ([\d.]+) million ÷ 0\.90 ≈ ([\d.]+) million paid",
                     flat("README.md"))
    assert step
    useful, again, paid = (Decimal(g) for g in step.groups())
    assert useful == again and round(useful / Decimal("0.9"), 1) == paid


def test_mfu_is_38_to_43_percent_wherever_the_pack_quotes_llama_3():
    quoted = 0
    for s in sentences(*taught_text()):
        if "Llama 3" in s and "Llama 3.1" not in s and re.search(r"MFU|FLOPs utili[sz]ation", s):
            for low, high in re.findall(r"(\d+)[–-](\d+)%", s):
                assert (low, high) == ("38", "43"), s
                quoted += 1
    assert quoted >= 3


# ---------------------------------------------------------------- claims that were wrong


def test_the_annealing_exclusion_gives_the_papers_reason():
    q09 = question("meta-q09")
    key = next(c for c in q09["choices"] if c.get("correct"))
    assert "few-shot" in key["text"]
    assert "few-shot" in q09["explanation"] and "out of domain" in q09["explanation"]
    for part in (text("brief.md"), glossary("Annealing")["definition"], glossary("Benchmark contamination")
                 ["definition"], flat("notes.md").split("## P1 —")[1].split("## ")[0]):
        assert "few-shot" in part
    taught = " ".join(taught_text()).lower()
    assert "not memory of the test" not in taught and "reflects ability" not in taught


def test_benchmark_exclusion_is_about_training_sets_in_the_annealing_data():
    brief = flat("brief.md")
    assert "benchmark material" not in brief
    assert re.search(r"no benchmark\W+training sets in annealing data", brief)


def test_fsdp_is_never_said_to_copy_the_model():
    for s in sentences(*taught_text()):
        if "FSDP" in s and not re.search(r"\b(unlike|while|contrast)\b", s, re.IGNORECASE):
            assert not re.search(r"\bcop(y|ies)\b|\breplica", s, re.IGNORECASE), s


def test_mfu_is_a_throughput_ratio_not_a_share_of_time():
    clauses = [c for s in sentences(*taught_text()) for c in re.split(r"[,;:(]\s*|\s(?:and|while)\s", s)]
    for clause in clauses:
        if re.search(r"\bMFU\b|FLOPs utili[sz]ation", clause):
            assert not re.search(r"share of|of (the )?time|fraction of", clause, re.IGNORECASE), clause
    taught = " ".join(taught_text())
    assert "memory traffic and waiting" not in taught
    assert glossary("MFU")["definition"].startswith("A throughput ratio")


def test_mixed_precision_names_loss_scaling_bf16_and_the_fp32_state():
    brief = flat("brief.md").split("**Mixed precision.**")[1].split("**Activation checkpointing.**")[0]
    definition = glossary("Mixed precision")["definition"]
    for part in (brief, definition):
        assert "loss" in part and "BF16" in part and "FP16" in part
        assert "master" in part and "optimizer state" in part and "full size" in part
    assert "halves" not in brief and "halves" not in definition


def test_millions_of_gpu_hours_is_said_of_a_family_not_of_the_7b_model():
    for s in sentences(*taught_text()):
        if re.search(r"millions of GPU-hours|3\.3 million", s) and "184,320" in s:
            assert "family" in s or "Llama 2 family" in s, s


def test_gpipe_is_not_said_to_have_trained_its_largest_example():
    section = flat("notes.md").split("## P8 —")[1].split("## ")[0]
    assert "largest" not in section and "6B" in section


def test_llama_3_pretraining_is_shown_without_activation_checkpointing():
    for name in ("brief.md", "README.md"):
        assert "Llama 3's 8K" in text(name) and "without it" in text(name), name


def test_the_golden_set_gate_is_on_the_release_path_not_the_request_path():
    readme = text("README.md")
    request = next(line for line in readme.splitlines() if "user --> gateway" in line)
    assert "golden" not in request
    assert "every release (offline" in readme and "not on the request path" in readme


def test_every_teachback_the_readme_names_is_a_prompt_of_the_pack():
    # `/teachback <prompt id>` asks that prompt; the README must name only prompts that exist
    named = re.findall(r"/teachback (\S+?)`", text("README.md"))
    assert named == ["meta-tb7", "meta-tb5", "meta-tb6"]
    ids = {p["id"] for p in load("teachback.yaml")["prompts"]}
    assert set(named) <= ids


def test_open_weights_reduce_lock_in_they_do_not_remove_it():
    for s in sentences(*taught_text()):
        assert not re.search(r"\b(remove|removes|eliminate|eliminates)\b[^.]*lock-in", s), s
    assert "reduce lock-in" in text("brief.md") and "reduces vendor lock-in" in glossary("Open weights")["definition"]


@pytest.mark.parametrize(("item", "cited", "not_cited"), [
    ("meta-q05", {"P2"}, {"P1"}),
    ("meta-q07", {"P1", "P5", "P10", "P11"}, {"P2"}),
    ("BF16", {"P9"}, set()),
    ("Adapter", {"P14"}, set()),
    ("Data parallelism", {"D2"}, set()),
])
def test_citations_support_their_claims(item, cited, not_cited):
    sources = set((question(item) if item.startswith("meta-") else glossary(item)).get("sources") or [])
    assert cited <= sources and not sources & not_cited


def test_lora_is_cited_only_where_lora_is_the_claim():
    for s in sentences(text("brief.md")):
        if "[P13]" in s:
            assert "LoRA" in s, s


def test_the_brief_says_what_its_jargon_means():
    brief = flat("brief.md")
    for definition in ("PII-heavy sites (personally identifiable info", "ZeRO, Microsoft's Zero Redundancy Optimizer",
                       "(annealing: pretraining's closing", "golden set: real inputs from your product",
                       "Few-shot means doing a task from a handful of examples in the prompt", "the KV cache"):
        assert definition in brief, definition


def test_network_jargon_is_named_but_not_glossed_beyond_the_sources():
    # the checked sources name RoCE and InfiniBand but define neither: no RDMA gloss, in the brief or the glossary
    for taught in (flat("brief.md"), glossary("RoCE")["definition"], glossary("InfiniBand")["definition"]):
        assert "RDMA" not in taught and "each other's memory" not in taught and "alternative to Ethernet" not in taught
    assert "RDMA over Converged Ethernet" not in glossary("RoCE")["aliases"]


# ---------------------------------------------------------------- what the lesson asks for


def readme_table(heading: str) -> list[list[str]]:
    section = text("README.md").split(f"## {heading}")[1].split("\n## ")[0]
    rows = [line for line in section.splitlines() if line.startswith("|")]
    return [[cell.strip() for cell in row.strip("|").split("|")] for row in rows[2:]]


def test_three_patterns_each_mapped_to_an_artifact_of_your_own():
    rows = readme_table("Three patterns to carry into your own stack")
    assert len(rows) == 3
    for pattern, meta, yours in rows:
        assert pattern and re.search(r"\[[A-Z]\d", meta) and yours.startswith("Your")


def test_the_tradeoffs_table_has_scale_safety_and_cost():
    rows = readme_table("Tradeoffs: scale, safety, cost")
    assert [r[0] for r in rows] == ["Scale", "Safety", "Cost"]
    assert [r[1] for r in rows] == ["What breaks at 10× traffic?", "Where are the human and policy gates?",
                                    "Where do tokens and GPUs dominate?"]


def test_the_simplification_you_refuse_to_ship_without_is_asked_for():
    tb6 = prompt("meta-tb6")
    assert "refuse to ship without" in tb6["prompt"] and "gap" not in tb6["prompt"]
    assert {k["id"] for k in tb6["key_points"]} >= {"kept-simplification", "refuse-without"}
    readme = text("README.md")
    assert "### Your own eval gate: the simplification you refuse to ship without" in readme
    assert "**LoRA, not GEM.**" in text("brief.md")


async def test_the_readme_teachback_commands_ask_those_prompts(tmp_path, clock):
    bot = await StudyBot.start(Settings(db_path=tmp_path / "studybot.db", content_dir=CONTENT,
                                        results_dir=tmp_path / "results"), clock)
    try:
        for prompt_id in ("meta-tb7", "meta-tb5", "meta-tb6"):
            [reply] = await bot.handle(Command("teachback", prompt_id, learner(), channel()))
            assert reply.form is not None and reply.text == f"Teach-back ({prompt_id}): {prompt(prompt_id)['prompt']}"
    finally:
        await bot.close()


# ---------------------------------------------------------------- the third pass: figures checked against sources

# The Llama 3.1 model card's published training compute for the 405B model, in H100-80GB GPU-hours [R2]. It counts
# all of the model's training, not pretraining alone.
LLAMA31_405B_GPU_HOURS = Decimal("30.84e6")
# ZeRO's count of model state per parameter with Adam [P5]: mixed precision holds 16-bit weights and gradients plus
# FP32 optimizer state (master weights, momentum, variance); plain FP32 holds 4 + 4 + 8.
MIXED_PRECISION_ADAM = {"weights": 2, "gradients": 2, "optimizer state": 12}
FP32_ADAM = {"weights": 4, "gradients": 4, "optimizer state": 8}
H100_MEMORY_GB = 80  # [P1]


def test_the_readme_checks_its_derived_405b_hours_against_the_published_figure():
    readme = flat("README.md")
    published = re.search(r"gives ([\d.]+) million H100 GPU-hours for the 405B model \[R2\]", readme)
    assert published and Decimal(published.group(1)) * 10**6 == LLAMA31_405B_GPU_HOURS
    paid = re.search(r"≈ ([\d.]+) million paid hours", readme)
    assert paid
    estimate = Decimal(paid.group(1)) * 10**6
    share = re.search(r"Our pretraining estimate of ([\d.]+) million lands just below it, at about (\d+)% of the "
                      r"published figure", readme)
    assert share and Decimal(share.group(1)) * 10**6 == estimate
    assert estimate < LLAMA31_405B_GPU_HOURS  # no more than the card reports for the model's whole training
    assert round(estimate / LLAMA31_405B_GPU_HOURS * 100) == int(share.group(2))
    assert "does not say how much of it was pretraining" in readme  # the card does not split it


def test_model_state_is_16_bytes_per_parameter_with_or_without_mixed_precision():
    assert sum(MIXED_PRECISION_ADAM.values()) == sum(FP32_ADAM.values()) == 16
    brief = flat("brief.md")
    memory = brief.split("**Memory: count the bytes.**")[1].split("**Parallelism.**")[0]
    counted = re.search(r"costs (\d+) bytes of 16-bit weights, (\d+) of 16-bit gradients and (\d+) of FP32 optimizer "
                        r"state .*?: (\d+) bytes \[P5\]", memory)
    assert counted and [int(g) for g in counted.groups()] == [*MIXED_PRECISION_ADAM.values(), 16]
    for taught in (brief, glossary("Mixed precision")["definition"], question("meta-q13")["explanation"]):
        assert "16 bytes per parameter" in taught
    for s in sentences(*taught_text()):
        assert not re.search(r"state (barely|hardly) shrinks|(?<!not )shrinks? the (optimizer|model) state", s), s
    zero = flat("notes.md").split("## P5 —")[1].split("## ")[0]
    fp32 = re.search(r"FP32 Adam is (\d+) \+ (\d+) \+ (\d+), also (\d+)", zero)
    assert fp32 and [int(g) for g in fp32.groups()] == [*FP32_ADAM.values(), 16]


def test_the_byte_counts_of_the_memory_paragraph_add_up():
    memory = flat("brief.md").split("**Memory: count the bytes.**")[1].split("**Parallelism.**")[0]
    summary = flat("brief.md").split("## Executive summary")[1].split("## Training stack sketch")[0]
    big = re.search(r"(\d+) billion × 16 bytes ≈ ([\d.]+) TB, the memory of at least (\d+) H100s at (\d+) GB each "
                    r"\[P1\]", summary)
    assert big
    params, terabytes, gpus, per_gpu = (Decimal(g) for g in big.groups())
    state = params * 10**9 * 16
    assert params == 405 and per_gpu == H100_MEMORY_GB
    assert round(state / 10**12, 1) == terabytes
    assert gpus == -(-state // (per_gpu * 10**9))  # rounded up: 81 GPUs' memory for the state alone
    small = re.search(r"about (\d+) GB \((\d+) billion × 2 bytes\), while training it holds about (\d+) GB of state "
                      r"\((\d+) billion × 16 bytes\)", memory)
    assert small
    serve, n, train, again = (int(g) for g in small.groups())
    assert n == again == 7 and serve == n * 2 and train == n * sum(MIXED_PRECISION_ADAM.values())
    assert "(our arithmetic)" in summary


def test_more_than_90_percent_is_said_of_the_whole_run_not_the_54_day_snapshot():
    found = 0
    for s in sentences(*taught_text()):
        if re.search(r"(over|more than|above|higher than) 90%", s):
            found += 1
            assert "54" not in s or re.search(r"across|as a whole|its training", s), s
    assert found >= 4
    for s in sentences(*taught_text()):
        if "466" in s and re.search(r"\b54\b|54-day", s):
            assert "snapshot" in s or "Table" in s, s


def test_hfu_counts_recomputation_done_to_save_memory():
    definition = glossary("HFU")["definition"]
    assert "recomputation done to save memory" in definition and "efficiency tricks" not in definition


def test_plain_data_parallelism_is_told_apart_from_fsdp():
    definition = glossary("Data parallelism")["definition"]
    assert "Plain data parallelism (DDP)" in definition and "FSDP" in definition
    assert "D1" in glossary("Data parallelism")["sources"]


def test_a_training_checkpoint_is_not_called_a_model_checkpoint():
    term = glossary("Training checkpoint")
    assert "model checkpoint" not in [a.lower() for a in term["aliases"]]
    assert "activation checkpointing" in term["definition"] and "release artifact" in term["definition"]
    assert "nothing to do with training checkpoints" in glossary("Activation checkpointing")["definition"]


def test_the_torchtitan_mfu_is_quoted_with_its_caveats():
    section = flat("notes.md").split("## R1 —")[1].split("## ")[0]
    assert "33–39% MFU" in section and "underestimate" in section and "SXM" in section and "Float8" in section


def test_keeping_benchmark_training_sets_out_is_eval_hygiene_not_a_policy_gate():
    [safety] = [row for row in readme_table("Tradeoffs: scale, safety, cost") if row[0] == "Safety"]
    policy, hygiene = safety[2].split("Keeping benchmark training sets out of annealing is eval hygiene")
    assert "benchmark" not in policy and "rather than policy" in hygiene


def test_goodput_is_llama_3s_effective_training_time():
    glossary_bullet = next(line for line in text("brief.md").splitlines() if line.startswith("- **Goodput**"))
    assert "Llama 3 calls it effective training time" in glossary_bullet


def test_pipeline_parallelism_is_taught_with_its_micro_batches():
    brief = flat("brief.md")
    bullet = next(line for line in text("brief.md").splitlines() if line.startswith("- **Pipeline parallelism**"))
    assert "micro-batches" in bullet and "fed a stream of micro-batches [P7, P8]" in brief


def test_q05_distractor_a_is_wrong_for_its_claim_not_only_its_reason():
    first = question("meta-q05")["choices"][0]
    assert first["text"].startswith("Serving becomes nearly free") and not first.get("correct")


def test_the_synonyms_have_no_duplicates_and_no_word_that_rewrites_id():
    lines = [line.split("#")[0] for line in text("lesson.yaml").split("synonyms:")[1].splitlines()]
    keys = [line.split(":")[0].strip() for line in lines if ":" in line]
    assert len(keys) == len(set(keys)), [k for k in keys if keys.count(k) > 1]
    assert "id" not in load("lesson.yaml")["synonyms"]


def test_fsdp_splitting_the_batch_is_not_a_misconception_but_only_splitting_it_is():
    shards = next(p for p in question("meta-q06")["rubric"]["points"] if p["id"] == "shards-state")
    assert not {"splits the batch", "shards the batch", "shards the data"} & set(shards["misconceptions"])
    assert "only splits the batch" in shards["misconceptions"]


def test_serving_is_judged_first_on_latency_and_cost_and_throughput_is_not_a_misconception():
    judged = next(p for p in question("meta-q07")["rubric"]["points"] if p["id"] == "judged-on")
    assert "serving is judged on throughput" not in judged["misconceptions"]
    assert "serving is judged only on throughput" in judged["misconceptions"]
    brief = flat("brief.md")
    assert "Training is throughput-oriented" in brief
    assert "judged first on latency per request and cost per call; batching is how that cost falls" in brief
    for s in sentences(*taught_text()):
        assert not re.search(r"latency,? not throughput|not on (training )?throughput", s), s


def test_bf16_range_and_loss_scaling_are_cited_to_their_own_sources():
    brief = flat("brief.md")
    assert "BF16, with FP32's range of values [P16, D5], does not require loss scaling [D6]" in brief
    assert {"P16", "D5", "D6"} <= set(glossary("BF16")["sources"])
    assert {"P16", "D6"} <= set(question("meta-q13")["sources"])
    for s in sentences(*taught_text()):
        assert "rarely needs loss scaling" not in s and "rarely does" not in s, s


def test_annealing_and_contamination_are_defined_from_the_paper():
    annealing = glossary("Annealing")["definition"]
    assert "final 40M tokens, as the paper prints it" in annealing and "linearly to zero" in annealing
    contamination = glossary("Benchmark contamination")["definition"]
    assert "8-grams" in contamination and "some benchmarks and none on others" in contamination
    evaluation = flat("brief.md").split("**Evaluation.**")[1].split("## ")[0]
    assert "exact matches of benchmark prompts" in evaluation and "few-shot" in evaluation
    # the paper-level detail (the 8-gram method, the annealing test's figures) lives in the reading log
    notes = flat("notes.md").split("## P1 —")[1].split("## ")[0]
    assert "24.0% and 6.4%" in notes and "8-grams" in notes and "8-gram" not in evaluation
    assert "contamination checks" not in " ".join(taught_text())
    assert "a few labs" not in glossary("Pretraining")["definition"]


def test_the_serving_side_is_cited():
    assert {"S1", "S2"} <= set(glossary("Inference")["sources"])
    serving = flat("brief.md").split("**Serving a small model is a different job from training one.**")[1]
    assert "[S1]" in serving and "[S2]" in serving


def test_open_weights_carry_licence_terms():
    brief = flat("brief.md")
    assert "700 million monthly active users at release must ask Meta for a licence [R2]" in brief
    assert "licence" in glossary("Open weights")["definition"] and "R2" in glossary("Open weights")["sources"]


def test_the_lesson_names_its_failure_modes_common_questions_and_anti_patterns():
    readme = text("README.md")
    for needed in ("## Failure modes", "**Cargo-culting brand names without metrics.**", "**Inventing citations.**",
                   "**Cloning the UI instead of the architecture.**", "the backlog of your next sprint",
                   "## Common questions", "**Is this overkill for a side project?**",
                   "**Should I rewrite my project from scratch to apply this?**", "**Which metric matters most?**",
                   "> **Anti-patterns", "**Buzzword soup.**", "**Open weights as free training.**",
                   "**Ignoring data governance.**"):
        assert needed in readme, needed
    tb7 = prompt("meta-tb7")
    assert "run logs" in tb7["prompt"] and {k["id"] for k in tb7["key_points"]} == {"failure-mode", "own-example",
                                                                                  "gap-list"}


def test_gem_is_the_briefs_worked_efficiency_example():
    gem = flat("brief.md").split("**LoRA, not GEM.**")[1].split("**Serving a small model")[0]
    for fact in ("23 times the effective training FLOPs on 16 times the GPUs", "MFU up 1.43-fold", "[M6]",
                 "20–25%", "[M7]"):
        assert fact in gem, fact


# ---------------------------------------------------------------- every citation resolves to a checked source

# The checked sources this pack may cite: each one's link(s), and the figures its VERIFIED facts give (years and
# dates included). Copied from the lesson's checked source list; a source or figure that list marks UNVERIFIED
# is not here, so citing it fails.
VERIFIED: dict[str, tuple[tuple[str, ...], str]] = {
    "M1": (("https://engineering.fb.com/2024/03/12/data-center-engineering/building-metas-genai-infrastructure/",),
           "24576 350000 600000 16000 400 2022 2024"),
    "M2": (("https://engineering.fb.com/2024/06/12/data-infrastructure/training-large-language-models-at-scale-meta/",),
           "700 4 4000 16 16000 24 24000 2024"),
    "M3": (("https://engineering.fb.com/2024/08/05/data-center-engineering/roce-network-distributed-ai-training-at-scale/",),
           "2024"),
    "M4": (("https://engineering.fb.com/2024/06/12/production-engineering/maintaining-large-scale-ai-capacity-meta/",),
           "600000 2024"),
    "M5": (("https://engineering.fb.com/2025/07/22/data-infrastructure/how-meta-keeps-its-ai-hardware-reliable/",),
           "66 1000 45 60 41 2025"),
    "M6": (("https://engineering.fb.com/2025/11/10/ml-applications/metas-generative-ads-model-gem-the-central-brain-"
            "accelerating-ads-recommendation-ai-innovation/",),
           "5 3 23 1.43 16 7 4 2 2025"),
    "M7": (("https://engineering.fb.com/2026/08/03/ml-applications/training-gem-at-llm-scale-meta-ads-recommendation-"
            "foundation-model/",),
           "20 25 4 12 50 2 30 24 1 5 128 256 1000 2026"),
    "P1": (("https://arxiv.org/abs/2407.21783",),
           "405 15.6 3.8e25 50 15 1.8 16000 16384 8192 700 80 8 38 43 430 400 380 41 131072 16 54 466 47 419 78 58.7 "
           "3 90 240 7500 2 7 1 4 24000 3072 400 6 30 25 17 402 16.55 40 128 800 24.0 6.4 70 85 14.8 55 8.5 7.9 8.1 "
           "95 26.0 36.0 41.0 52 1.6 0.9 0.8 0.1 1.3 0 100000 1200 2024 23 31"),
    "P2": (("https://arxiv.org/abs/2307.09288",),
           "3.3 3311616 350 400 539 100 184320 31.22 368640 62.44 1038336 1720320 291.42 2 2022 7 13 34 70 2023"),
    "P3": (("https://github.com/facebookresearch/metaseq/tree/main/projects/OPT/chronicles",),
           "175 300 2022 6 4.30e23 33 1024 80 90 2 0.1 0.95 2021 11 17 1 7"),
    "P4": (("https://arxiv.org/abs/2304.11277",), "512 80 2023"),
    "P5": (("https://arxiv.org/abs/1910.02054",),
           "4 8 50 100 400 15 10 13 2 12 16 1.5 24 3 7.5 64 31.4 16.6 1.9 120 1 60 33 1.4 32 2019"),
    "P6": (("https://arxiv.org/abs/1909.08053",), "8.3 512 15.1 76 39 30 2019"),
    "P7": (("https://arxiv.org/abs/2104.04473",), "10 1 502 3072 52 2021"),
    "P8": (("https://arxiv.org/abs/1811.06965",), "557 84.4 6 128 2018 2019"),
    "P9": (("https://arxiv.org/abs/1710.03740",), "16 32 2017 2018"),
    "P10": (("https://arxiv.org/abs/1604.06174",), "1000 48 7 30 2016"),
    "P11": (("https://arxiv.org/abs/2204.02311",),
            "21.3 32.5 4096 30.2 2240 46.2 6144 45.7 57.8 238.3 2048 20 100 200 500 540 2022"),
    "P12": (("https://arxiv.org/abs/2203.15556",), "400 70 16 5 500 4 1.4 280 67.5 20 2022"),
    "P13": (("https://arxiv.org/abs/2106.09685",), "10000 3 175 2021"),
    "P14": (("https://arxiv.org/abs/2305.14314",), "65 48 4 16 99.3 24 2023"),
    "P15": (("https://arxiv.org/abs/2410.06511",), "2024 2025"),
    "R1": (("https://github.com/pytorch/torchtitan",), "8 405 512 33 39 2024"),
    "D1": (("https://docs.pytorch.org/docs/stable/fsdp.html",
            "https://docs.pytorch.org/docs/stable/distributed.fsdp.fully_shard.html"), "1.11 3 2 2024 2025"),
    "D2": (("https://pytorch.org/docs/1.10/generated/torch.nn.parallel.DistributedDataParallel.html",
            "https://pytorch.org/docs/2.4/_sources/notes/ddp.rst.txt"), "1.10 2.4 1"),
    "D3": (("https://docs.pytorch.org/docs/stable/distributed.checkpoint.html",), "2022 2025"),
    "D4": (("https://pytorch.org/docs/1.0.0/checkpoint.html",), ""),
    "P16": (("https://arxiv.org/abs/1905.12322",), "32 16 2019"),
    "D5": (("https://cloud.google.com/tpu/docs/bfloat16",
            "https://cloud.google.com/blog/products/ai-machine-learning/bfloat16-the-secret-to-high-performance-on-"
            "cloud-tpus"), "8 7 23 1 16 32 2019"),
    "D6": (("https://www.deepspeed.ai/docs/config-json/",), "16"),
    "R2": (("https://github.com/meta-llama/llama-models/blob/main/models/llama3_1/MODEL_CARD.md",
            "https://github.com/meta-llama/llama-models/blob/main/models/llama3_1/LICENSE"),
           "39.3 700 80 8 1.46 70 7.0 405 30.84 420 2040 8930 11390 0 100 2020 15 25 2023 2024 23 1 2 5"),
    "S1": (("https://arxiv.org/abs/2309.06180",),
           "2 4 10 13 40 65 30 800 5120 2048 1.6 20.4 38.2 60 80 2023"),
    "S2": (("https://engineering.fb.com/2025/10/17/ai-research/scaling-llm-inference-innovations-tensor-parallelism-"
            "context-parallelism-expert-parallelism/",), "350 25 30 10 50 2025 17"),
}
# Figures the pack works out itself ("our arithmetic"), each checked by a test above: the byte counts, the
# FLOPs-to-hours example and its goodput step, the share of the published figure, and the assumed prices.
DERIVED = "7 6.5 81 14 112 33 4e14 9.5e10 3600 26.4 0.90 29.3 95 1.00 2.00 4.00 6623232 13246464 6.6 13.2"

# Names with digits in them, sections, the scale lens's hypothetical "10× traffic", and 3.8 × 10^25 (read whole).
NAMES = re.compile(r"Llama \d(?:\.\d)?|GPT-\d|PyTorch \d\.\d|IEEE 754|§[\d.]+|10× traffic|\d+(?:\.\d+)? × 10\^\d+")
FIGURE = re.compile(r"(?<![\w.^/-])(\d[\d,]*(?:\.\d+)?)(?=(?:\s?(?:[BMTK]|TB|GB|MB|PB|ms|W|x|×|%))?(?!\w))")
CITATION = re.compile(r"\[([A-Z]\d+(?:,\s*[A-Z]\d+)*)\]")


def figures(written: str) -> set[Decimal]:
    """The numbers a text states as figures: not those inside names (Llama 3, H100, FP32, [P1]); 3.8 × 10^25 is one."""
    found = {Decimal(f"{m.group(1)}e{m.group(2)}") for m in re.finditer(r"(\d+(?:\.\d+)?) × 10\^(\d+)", written)}
    written = CITATION.sub(" ", NAMES.sub(" ", written))
    return found | {Decimal(m.replace(",", "")) for m in FIGURE.findall(written)}


def allowed(*source_ids: str) -> set[Decimal]:
    out = {Decimal(f) for f in DERIVED.split()}
    for source_id in source_ids:
        out |= {Decimal(f) for f in VERIFIED[source_id][1].split()}
    return out


def test_every_source_of_the_reading_log_is_a_checked_source_with_its_link():
    headings = re.findall(r"^## (\S+) — ", text("notes.md"), flags=re.MULTILINE)
    assert set(headings) <= set(VERIFIED), sorted(set(headings) - set(VERIFIED))
    for source_id in headings:
        section = text("notes.md").split(f"## {source_id} — ")[1].split("\n## ")[0]
        links = tuple(re.findall(r"^- Link: (\S+)$", section, flags=re.MULTILINE))
        assert links and set(links) <= set(VERIFIED[source_id][0]), (source_id, links)


def test_every_reading_log_figure_is_a_checked_figure_of_its_source():
    for source_id in re.findall(r"^## (\S+) — ", text("notes.md"), flags=re.MULTILINE):
        section = text("notes.md").split(f"## {source_id} — ")[1].split("\n## ")[0]
        body = [line for line in section.splitlines()[1:] if not line.startswith(("- Link:", "- Date:"))]
        stated = figures(" ".join(body)) - allowed(source_id)
        assert not stated, (source_id, sorted(stated))


def cited_sentences(document: str) -> list[tuple[str, tuple[str, ...]]]:
    """Each sentence of a Markdown file with a figure, and the sources it rests on: its own citations, else its
    paragraph's."""
    out = []
    document = re.sub(r"Ids (?:like|such as) \[P1\]", "Ids", document)  # an example id, not a citation
    for paragraph in re.split(r"\n\s*\n", document):
        paragraph_ids = tuple(i for g in CITATION.findall(paragraph) for i in re.split(r",\s*", g))
        for s in sentences(paragraph):
            own = tuple(i for g in CITATION.findall(s) for i in re.split(r",\s*", g))
            if figures(s) and (own or paragraph_ids):
                out.append((s, own or paragraph_ids))
    return out


@pytest.mark.parametrize("name", ["brief.md", "README.md"])
def test_every_cited_figure_of_the_brief_and_readme_comes_from_a_cited_checked_source(name):
    checked = 0
    for s, cited in cited_sentences(text(name)):
        assert set(cited) <= set(VERIFIED), (s, cited)
        stated = figures(s) - allowed(*cited)
        assert not stated, (s, cited, sorted(stated))
        checked += 1
    assert checked >= 10


def test_every_figure_of_an_item_comes_from_the_sources_it_cites():
    items = [(t["term"], t["definition"], t.get("sources") or []) for t in load("glossary.yaml")["terms"]]
    for q in questions() + load("practice.yaml")["questions"]:
        said = [q["prompt"], q["explanation"], q.get("model_answer", "")]
        said += [c["text"] + " " + c.get("why_wrong", "") for c in q.get("choices", [])]
        items.append((q["id"], " ".join(said), q.get("sources") or []))
    checked = 0
    for item, said, cited in items:
        if not figures(said):
            continue
        assert cited and set(cited) <= set(VERIFIED), (item, cited)
        stated = figures(said) - allowed(*cited)
        assert not stated, (item, cited, sorted(stated))
        checked += 1
    assert checked >= 20


# ---------------------------------------------------------------- the fourth pass: serving and adapter numbers


def test_the_kv_cache_figures_are_the_papers_and_add_up():
    per_token = 2 * 5120 * 40 * 2  # keys and values, hidden size, layers, 2 bytes [S1]
    assert round(per_token / 1024) == 800 and round(per_token * 2048 / 2**30, 1) == 1.6  # KB and GB of 1,024
    brief = flat("brief.md")
    assert "800 KB per token for OPT-13B, up to 1.6 GB per 2,048-token request" in brief
    assert "served on 16 GPUs, tensor parallel inside each machine, pipeline parallel between the two [P1]" in brief


def test_adapter_memory_against_full_fine_tuning_adds_up():
    weights_gb = Decimal(65) * Decimal("0.5")  # 65B parameters at 4 bits
    adam_tb = Decimal(65) * 16 / 1000  # 16 bytes per parameter [P5]
    assert weights_gb.quantize(Decimal(1), rounding=ROUND_HALF_UP) == 33 and round(adam_tb) == 1
    assert "about 33 GB of weights, against about 1 TB of Adam state" in flat("brief.md")


def test_the_break_even_template_adds_up_and_marks_its_prices_as_assumptions():
    readme = flat("README.md")
    section = readme.split("### Hosted API against self-hosting: a break-even template")[1].split("## ")[0]
    assert "ASSUMPTION" in section
    api = Decimal(300_000) * 2_000 / 10**6 * Decimal("2.00")
    own = 1 * 730 * Decimal("2.00") + 1_500
    assert f"= ${api:,.0f}." in section and f"= ${own:,.0f}." in section
    assert f"{own / (Decimal(2_000) / 10**6 * Decimal('2.00')):,.0f} requests a month" in section
