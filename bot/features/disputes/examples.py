"""Settled disputes as rubric examples: per lesson, one YAML text of `examples:` entries per question
or teach-back prompt, ready to paste into `quiz.yaml` or `teachback.yaml` (`content/README.md`):
answers an instructor accepted under `correct`, answers they rejected under `wrong`, so the rubric
learns from every correction. The same answer settled twice keeps its latest verdict."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import yaml

from bot.features.disputes.storage import Dispute, DisputeState
from bot.reports.cohort_figures import short_prompt

PROMPT = 100  # characters of the prompt named above an item's entry, its ellipsis included


class _Indented(yaml.SafeDumper):
    """Lists indented under their key, as the lesson packs write them."""

    def increase_indent(self, flow: bool = False, indentless: bool = False) -> Any:
        return super().increase_indent(flow, False)


def by_lesson(disputes: Iterable[Dispute]) -> dict[str, list[Dispute]]:
    found: dict[str, list[Dispute]] = {}
    for dispute in disputes:
        found.setdefault(dispute.lesson_id, []).append(dispute)
    return found


def examples_yaml(lesson_id: str, disputes: Iterable[Dispute], items_in_pack: Mapping[str, tuple[str, str]]) -> str:
    """One lesson's settled disputes (oldest settled first) as `examples:` entries per item; `items_in_pack`
    names each item's pack file and prompt where the lesson packs still have it (`loader.pack_items`)."""
    items: dict[str, dict[str, bool]] = {}
    for dispute in disputes:
        if dispute.state is DisputeState.OPEN:
            continue
        text = " ".join(dispute.text.split())
        verdicts = items.setdefault(dispute.item_id, {})
        verdicts.pop(text, None)  # the latest verdict wins, in its place
        verdicts[text] = dispute.state is DisputeState.ACCEPTED
    lines = [f"# Settled disputes of lesson {lesson_id} as rubric examples (studybot disputes export).",
             "# Paste each item's `examples:` lines into that item in the lesson pack, beside any there already:",
             "# answers an instructor accepted are `correct`, answers they rejected are `wrong`.", ""]
    for item_id, verdicts in items.items():
        examples = {key: [t for t, accepted in verdicts.items() if accepted is want]
                    for key, want in (("correct", True), ("wrong", False))}
        entry = {item_id: {"examples": {key: texts for key, texts in examples.items() if texts}}}
        if item_id in items_in_pack:
            file, prompt = items_in_pack[item_id]
            lines.append(f"# {item_id} in {file}: {short_prompt(prompt, PROMPT)}")
        else:
            lines.append(f"# {item_id}: no longer in the lesson pack")
        lines.append(yaml.dump(entry, Dumper=_Indented, allow_unicode=True, sort_keys=False, width=1000,
                               default_flow_style=False).rstrip())
        lines.append("")
    return "\n".join(lines)
