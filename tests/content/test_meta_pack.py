"""Structural checks on the Meta LLM-scale lesson pack (content/industry/meta).

Only PyYAML and the standard library: these tests read the pack as plain files.
"""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import urlparse

import yaml

PACK = Path(__file__).parents[2] / "content" / "industry" / "meta"

SOURCE_ID = re.compile(r"^[MPRD]\d+$")
HEADING = re.compile(r"^## (\S+) — (.+)$")
# A date, or for documentation that carries none, the versions of the pages read: "versioned pages (1.10, 2.4)".
DATE_LINE = re.compile(r"^- Date: (\d{4}-\d{2}-\d{2}|\d{4}-\d{2}"
                       r"|versioned pages? \(\d+(?:\.\d+)*(?:, \d+(?:\.\d+)*)*\))$")
LINK_LINE = re.compile(r"^- Link: (\S+)$")
GLOSSARY_BULLET = re.compile(r"^- \*\*(.+?)\*\*: \S")


def load(name: str):
    return yaml.safe_load((PACK / name).read_text(encoding="utf-8"))


def questions() -> list[dict]:
    return load("quiz.yaml")["questions"]


def terms() -> list[dict]:
    return load("glossary.yaml")["terms"]


def note_sections() -> dict[str, list[str]]:
    """Each `## ID — title` heading of notes.md, with the lines under it."""
    sections: dict[str, list[str]] = {}
    current = None
    for line in (PACK / "notes.md").read_text(encoding="utf-8").splitlines():
        if line.startswith("## "):
            match = HEADING.match(line)
            assert match, f"notes.md heading is not '## ID — title': {line!r}"
            current = match.group(1)
            assert current not in sections, f"notes.md has two sections for {current}"
            sections[current] = []
        elif current is not None:
            sections[current].append(line.strip())
    return sections


def brief_sections() -> dict[str, str]:
    text = (PACK / "brief.md").read_text(encoding="utf-8")
    parts = re.split(r"^## (.+)$", text, flags=re.MULTILINE)
    return {parts[i].strip(): parts[i + 1] for i in range(1, len(parts), 2)}


# ---------------------------------------------------------------- quiz


def test_quiz_has_exactly_ten_questions():
    assert len(questions()) == 10


def test_quiz_mixes_question_types():
    kinds = [q["type"] for q in questions()]
    assert kinds.count("mc") >= 5
    assert kinds.count("short") >= 3


def test_quiz_covers_every_goal_of_the_lesson():
    goal_ids = {g["id"] for g in load("lesson.yaml")["goals"]}
    used = {q["goal"] for q in questions()}
    assert used <= goal_ids, f"unknown goal ids: {used - goal_ids}"
    assert goal_ids <= used, f"goals without a question: {goal_ids - used}"


def test_question_ids_are_unique():
    ids = [q["id"] for q in questions()]
    assert len(ids) == len(set(ids))


def test_mc_questions_have_one_correct_choice_and_reasons_for_the_rest():
    for q in questions():
        if q["type"] != "mc":
            continue
        choices = q["choices"]
        assert 3 <= len(choices) <= 4, q["id"]
        assert sum(c.get("correct") is True for c in choices) == 1, q["id"]
        for c in choices:
            assert len(c["text"]) <= 75, (q["id"], c["text"])
            if c.get("correct") is not True:
                assert isinstance(c.get("why_wrong"), str) and c["why_wrong"].strip(), q["id"]


def test_prompts_fit_the_chat():
    for q in questions():
        assert len(q["prompt"]) <= 300, q["id"]


def test_short_answer_phrases_are_phrases_not_bare_terms():
    for q in questions():
        if q["type"] != "short":
            continue
        for point in q["rubric"]["points"]:
            for phrase in point["accept"]:
                assert len(phrase.split()) >= 2, (q["id"], point["id"], phrase)


# ---------------------------------------------------------------- sources and notes


def test_notes_has_at_least_ten_sources_with_well_formed_ids():
    sections = note_sections()
    assert len(sections) >= 10
    for source_id in sections:
        assert SOURCE_ID.match(source_id), f"bad source id in notes.md: {source_id}"


def test_every_cited_source_is_a_notes_heading():
    headings = set(note_sections())
    cited = set()
    for q in questions():
        cited.update(q.get("sources") or [])
    for t in terms():
        cited.update(t.get("sources") or [])
    assert cited, "the quiz and glossary cite no sources"
    assert cited <= headings, f"cited but not in notes.md: {sorted(cited - headings)}"


def test_brief_citations_are_notes_headings():
    headings = set(note_sections())
    text = (PACK / "brief.md").read_text(encoding="utf-8")
    cited = {i for group in re.findall(r"\[([A-Z]\d+(?:,\s*[A-Z]\d+)*)\]", text) for i in re.split(r",\s*", group)}
    assert cited <= headings, f"brief.md cites ids missing from notes.md: {sorted(cited - headings)}"


def test_every_notes_link_is_a_well_formed_url():
    for source_id, lines in note_sections().items():
        links = [m.group(1) for line in lines if (m := LINK_LINE.match(line))]
        assert links, f"{source_id} has no '- Link:' line"
        for link in links:
            parsed = urlparse(link)
            assert parsed.scheme in ("http", "https"), (source_id, link)
            assert parsed.netloc and "." in parsed.netloc, (source_id, link)


def test_every_notes_section_has_a_date():
    for source_id, lines in note_sections().items():
        dates = [line for line in lines if line.startswith("- Date:")]
        assert len(dates) == 1, f"{source_id} needs exactly one '- Date:' line"
        assert DATE_LINE.match(dates[0]), (source_id, dates[0])


# ---------------------------------------------------------------- brief


def test_brief_has_the_required_sections_in_order():
    assert list(brief_sections()) == [
        "Executive summary",
        "Training stack sketch",
        "Implications for product engineers",
        "Implications for your portfolio",
        "Glossary",
    ]


def test_brief_word_count_is_within_range():
    words = len((PACK / "brief.md").read_text(encoding="utf-8").split())
    assert 1000 <= words <= 1600, words


def test_brief_summary_has_five_bullets_and_sketch_has_a_diagram():
    sections = brief_sections()
    bullets = [line for line in sections["Executive summary"].splitlines() if line.startswith("- ")]
    assert len(bullets) == 5
    assert "```" in sections["Training stack sketch"]


def test_brief_glossary_terms_are_in_glossary_yaml():
    bullets = [
        m.group(1) for line in brief_sections()["Glossary"].splitlines() if (m := GLOSSARY_BULLET.match(line))
    ]
    assert len(bullets) == 10
    known = set()
    for t in terms():
        known.add(t["term"].lower())
        known.update(a.lower() for a in t.get("aliases") or [])
    missing = [b for b in bullets if b.lower() not in known]
    assert not missing, f"brief glossary terms not in glossary.yaml: {missing}"
    assert {"fsdp", "mfu"} <= {b.lower() for b in bullets}


# ---------------------------------------------------------------- glossary


def test_glossary_has_at_least_fifteen_terms():
    assert len(terms()) >= 15


def test_glossary_related_entries_name_existing_terms():
    names = {t["term"] for t in terms()}
    for t in terms():
        for related in t.get("related") or []:
            assert related in names, f"{t['term']}: related '{related}' is not a term"


def test_glossary_names_and_aliases_are_unique():
    seen = set()
    for t in terms():
        for name in [t["term"], *(t.get("aliases") or [])]:
            assert name.lower() not in seen, f"duplicate glossary name: {name}"
            seen.add(name.lower())
