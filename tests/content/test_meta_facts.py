"""The Meta pack's facts: every number that must add up does, and the claims a review found wrong
(against the pack's checked sources) stay corrected."""

from __future__ import annotations

import re
from decimal import Decimal

import pytest
import yaml
from support import CONTENT, channel, learner

from bot.app import StudyBot
from bot.config import Settings
from bot.messages import Command

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
    return next(q for q in questions() if q["id"] == question_id)


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
    for definition in ("RoCE (RDMA over Converged Ethernet", "InfiniBand, a high-bandwidth alternative to Ethernet",
                       "PII-heavy sites (personally identifiable info", "ZeRO, Microsoft's Zero Redundancy Optimizer",
                       "(annealing: pretraining's closing", "golden set: real inputs from your product"):
        assert definition in brief, definition


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
