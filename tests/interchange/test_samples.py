"""Every published sample imports with each question accounted for: imported, or skipped with its reason.

The samples (GIFT, Moodle XML, Anki, QTI and flashcard files from Moodle's, Anki's and QTI tools'
repositories) are read from the folder STUDYBOT_QUESTION_BANKS names, never copied here; without it
these tests are skipped with a message saying so."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from bot.interchange import readers
from bot.interchange.model import ImportRefused

VARIABLE = "STUDYBOT_QUESTION_BANKS"
HOW = f"set {VARIABLE} to the question-banks folder (gift/, moodle-xml/, anki/, qti/ ...) to test the importers"
READ = ("gift", "moodle-xml", "anki", "qti", "flashcards-csv")

# (imported, skipped) per sample, counted by hand against each file's questions (GIFT: against the
# parse the GIFT grammar's own project publishes beside each file, see test_gift_matches_the_grammar_oracle).
EXPECTED = {
    "anki/ankitects-anki/diffmodels2-1.apkg": (1, 0),
    "anki/ankitects-anki/diffmodeltemplates-1.apkg": (1, 0),
    "anki/ankitects-anki/media.apkg": (0, 1),
    "anki/ankitects-anki/text-2fields.txt": (5, 4),
    "anki/ankitects-anki/text-tags.txt": (2, 0),
    "anki/ankitects-anki/update1.apkg": (1, 0),
    "anki/ankitects-anki/update2.apkg": (1, 0),
    "anki/dharmaturtle-CardOverflow/AllDefaultTemplatesAndImageAndMp3-21.colpkg": (6, 2),
    "anki/dharmaturtle-CardOverflow/AllDefaultTemplatesAndImageAndMp3.apkg": (6, 2),
    "anki/dharmaturtle-CardOverflow/RandomReviews.apkg": (0, 25),
    "anki/patarapolw-ankisync2/example1.apkg": (0, 1),
    "flashcards-csv/dalier97-homelearnai/invalid_flashcards.csv": (2, 2),
    "flashcards-csv/dalier97-homelearnai/large_import.csv": (500, 0),
    "flashcards-csv/dalier97-homelearnai/quizlet_export.txt": (10, 0),
    "flashcards-csv/dalier97-homelearnai/valid_flashcards.csv": (10, 0),
    "gift/fuhrmanator-GIFT-grammar-PEG.js/TFTwoFeedback.gift": (3, 0),
    "gift/fuhrmanator-GIFT-grammar-PEG.js/category1.gift": (0, 0),
    "gift/fuhrmanator-GIFT-grammar-PEG.js/categorySpecialCharacter.gift": (0, 0),
    "gift/fuhrmanator-GIFT-grammar-PEG.js/description1.gift": (1, 1),
    "gift/fuhrmanator-GIFT-grammar-PEG.js/descriptionTitleEscapedColon.gift": (1, 1),
    "gift/fuhrmanator-GIFT-grammar-PEG.js/descriptionWithID.gift": (1, 1),
    "gift/fuhrmanator-GIFT-grammar-PEG.js/escapeAll.gift": (1, 0),
    "gift/fuhrmanator-GIFT-grammar-PEG.js/escapeColon.gift": (0, 1),
    "gift/fuhrmanator-GIFT-grammar-PEG.js/escapeEquals.gift": (1, 0),
    "gift/fuhrmanator-GIFT-grammar-PEG.js/essay1.gift": (0, 1),
    "gift/fuhrmanator-GIFT-grammar-PEG.js/formatExamples.gift": (1, 0),
    "gift/fuhrmanator-GIFT-grammar-PEG.js/giftFormatPhpExamples.gift": (7, 3),
    "gift/fuhrmanator-GIFT-grammar-PEG.js/markdown.gift": (0, 4),
    "gift/fuhrmanator-GIFT-grammar-PEG.js/matching1.gift": (0, 2),
    "gift/fuhrmanator-GIFT-grammar-PEG.js/mc1.gift": (1, 0),
    "gift/fuhrmanator-GIFT-grammar-PEG.js/mc2.gift": (1, 0),
    "gift/fuhrmanator-GIFT-grammar-PEG.js/mc4.gift": (1, 0),
    "gift/fuhrmanator-GIFT-grammar-PEG.js/mc5.gift": (4, 0),
    "gift/fuhrmanator-GIFT-grammar-PEG.js/mcHTMLComment.gift": (1, 0),
    "gift/fuhrmanator-GIFT-grammar-PEG.js/multiLineFeedback1.gift": (2, 0),
    "gift/fuhrmanator-GIFT-grammar-PEG.js/multipleAnswersFloat.gift": (0, 1),
    "gift/fuhrmanator-GIFT-grammar-PEG.js/newlineAndLaTeX.gift": (0, 1),
    "gift/fuhrmanator-GIFT-grammar-PEG.js/numerical1.gift": (0, 10),
    "gift/fuhrmanator-GIFT-grammar-PEG.js/options1.gift": (11, 3),
    "gift/fuhrmanator-GIFT-grammar-PEG.js/shortAnswer1.gift": (2, 0),
    "gift/fuhrmanator-GIFT-grammar-PEG.js/shortAnswer2.gift": (2, 0),
    "gift/fuhrmanator-GIFT-grammar-PEG.js/shortAnswerNotMatching.gift": (2, 0),
    "gift/fuhrmanator-GIFT-grammar-PEG.js/shortFirstEmbedded.gift": (2, 0),
    "gift/fuhrmanator-GIFT-grammar-PEG.js/shortFirstEmbeddedUnderline.gift": (2, 0),
    "gift/fuhrmanator-GIFT-grammar-PEG.js/shortFirstEmbeddedUnderlineHTML.gift": (2, 0),
    "gift/fuhrmanator-GIFT-grammar-PEG.js/symbolsAll.gift": (1, 0),
    "gift/fuhrmanator-GIFT-grammar-PEG.js/tag_id.gift": (0, 1),
    "gift/fuhrmanator-GIFT-grammar-PEG.js/tag_id_and_two_tags.gift": (0, 1),
    "gift/fuhrmanator-GIFT-grammar-PEG.js/tag_two_tags.gift": (0, 1),
    "gift/fuhrmanator-GIFT-grammar-PEG.js/tf1.gift": (1, 0),
    "gift/fuhrmanator-GIFT-grammar-PEG.js/tf1_html.gift": (1, 0),
    "gift/fuhrmanator-GIFT-grammar-PEG.js/tf1_markdown.gift": (1, 0),
    "gift/fuhrmanator-GIFT-grammar-PEG.js/tf2.gift": (2, 0),
    "gift/fuhrmanator-GIFT-grammar-PEG.js/totara_moodle_backslash.gift": (0, 1),
    "gift/fuhrmanator-GIFT-grammar-PEG.js/totara_moodle_essay.gift": (0, 1),
    "gift/fuhrmanator-GIFT-grammar-PEG.js/totara_moodle_match.gift": (0, 1),
    "gift/fuhrmanator-GIFT-grammar-PEG.js/totara_moodle_multichoice.gift": (1, 0),
    "gift/fuhrmanator-GIFT-grammar-PEG.js/totara_moodle_multichoice_multi.gift": (0, 1),
    "gift/fuhrmanator-GIFT-grammar-PEG.js/totara_moodle_numerical.gift": (0, 1),
    "gift/fuhrmanator-GIFT-grammar-PEG.js/totara_moodle_pre_content.gift": (0, 1),
    "gift/fuhrmanator-GIFT-grammar-PEG.js/totara_moodle_shortanswer.gift": (1, 0),
    "gift/fuhrmanator-GIFT-grammar-PEG.js/totara_moodle_shortanswer_general_feedback.gift": (1, 0),
    "gift/fuhrmanator-GIFT-grammar-PEG.js/totara_moodle_truefalse.gift": (1, 0),
    "gift/fuhrmanator-GIFT-grammar-PEG.js/totara_moodle_truefalse_true_answer1.gift": (1, 0),
    "gift/fuhrmanator-GIFT-grammar-PEG.js/totara_moodle_truefalse_true_answer2.gift": (1, 0),
    "gift/fuhrmanator-GIFT-grammar-PEG.js/type_inferred_multiline_markdown.gift": (1, 0),
    "gift/moodle/examples.txt": (30, 13),
    "gift/moodle/questions.gift.txt": (5, 4),
    "gift/moodle/questions_in_category.gift.txt": (3, 1),
    "gift/rgmf-pygiftparser/gift_file_all_questions.txt": (10, 9),
    "gift/rgmf-pygiftparser/gift_file_categories.txt": (10, 9),
    "gift/rgmf-pygiftparser/test4.txt": (30, 0),
    "gift/rgmf-pygiftparser/test5.txt": (40, 0),
    "moodle-xml/moodle/html_chars_in_idnumbers.xml": (1, 0),
    "moodle-xml/moodle/multianswer.xml": (0, 1),
    "moodle-xml/moodle/nested_categories_with_questions.xml": (4, 1),
    "moodle-xml/moodle/qtype_essay/testquestion.moodle.xml": (0, 1),
    "moodle-xml/moodle/qtype_match/testquestion.moodle.xml": (0, 1),
    "moodle-xml/moodle/qtype_multichoice/testquestion.moodle.xml": (0, 1),
    "moodle-xml/moodle/qtype_shortanswer/testquestion.moodle.xml": (1, 0),
    "moodle-xml/moodle/sample_questions_with_old_image_tag.xml": (1, 1),
    "qti/instructure-qti/all_canvas_simple_1.2.xml": (3, 7),
    "qti/instructure-qti/edge_cases_1.2.xml": (2, 2),
    "qti/instructure-qti/feedback_quiz_1.2.xml": (2, 1),
    "qti/instructure-qti/items_1.2/canvas_multiple_fib.xml": (0, 1),
    "qti/instructure-qti/items_1.2/essay.xml": (0, 1),
    "qti/instructure-qti/items_1.2/matching_feedback.xml": (0, 1),
    "qti/instructure-qti/items_1.2/mc_feedback.xml": (1, 0),
    "qti/instructure-qti/items_1.2/multiple_answer_canvas.xml": (0, 1),
    "qti/instructure-qti/items_1.2/multiple_choice.xml": (1, 0),
    "qti/instructure-qti/items_1.2/numeric_margin_error.xml": (0, 1),
    "qti/instructure-qti/items_1.2/question_group.xml": (10, 0),
    "qti/instructure-qti/items_1.2/true_false.xml": (1, 0),
    "qti/instructure-qti/items_2.1/Example02-feedbackInline.xml": (1, 0),
    "qti/instructure-qti/items_2.1/choice.xml": (1, 0),
    "qti/instructure-qti/items_2.1/essay.xml": (0, 1),
    "qti/instructure-qti/items_2.1/match.xml": (0, 1),
    "qti/instructure-qti/items_2.1/order.xml": (1, 0),
    "qti/instructure-qti/items_2.1/text_entry.xml": (1, 0),
    "qti/instructure-qti/test_qti_1.2.zip": (2, 1),
    "qti/instructure-qti/test_qti_1.2_canvas/i00f37ac2af026e5a607e4a5d9a70b1d5/assessment_meta.xml": (0, 0),
    "qti/instructure-qti/test_qti_1.2_canvas/i00f37ac2af026e5a607e4a5d9a70b1d5/"
    "i00f37ac2af026e5a607e4a5d9a70b1d5.xml": (2, 2),
    "qti/instructure-qti/test_qti_1.2_canvas/imsmanifest.xml": (0, 0),
    "qti/instructure-qti/test_qti_2.2.zip": (2, 3),
    "qti/instructure-qti/with_banks/g9a20cf3af178b54e4792cbe992f65790/assessment_meta.xml": (0, 0),
    "qti/instructure-qti/with_banks/g9a20cf3af178b54e4792cbe992f65790/assessment_qti.xml": (1, 1),
    "qti/instructure-qti/with_banks/imsmanifest.xml": (0, 0),
    "qti/instructure-qti/with_banks/non_cc_assessments/g195e078fb6e3c4054e38e5c9226287ba.xml.qti": (0, 2),
    "qti/instructure-qti/with_banks/non_cc_assessments/g9a20cf3af178b54e4792cbe992f65790.xml.qti": (1, 1),
    "qti/instructure-qti/with_banks/non_cc_assessments/gab22de457404cb5cf022078f1e4da75e.xml.qti": (1, 0),
    "qti/instructure-qti/with_banks/non_cc_assessments/gf3edf8167be16b3a65a00ca923132b07.xml.qti": (2, 1),
    "qti/vosslab-qti_package_maker/minimal_qti_1.2_sample.zip": (1, 0),
    "qti/vosslab-qti_package_maker/minimal_qti_2.1_sample.zip": (1, 1),
}
# Samples refused as a whole, with what the one-line refusal says.
REFUSED = {
    "qti/instructure-qti/items_1.2/fib.xml": "not well-formed XML (mismatche",
}


def banks() -> Path:
    value = os.environ.get(VARIABLE, "").strip()
    if not value or not (Path(value) / "README.md").is_file():
        pytest.skip(HOW)
    return Path(value)


def samples(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file() and p.parts[len(root.parts)] in READ
                  and p.name != "LICENSE" and p.suffix != ".json")


def test_every_sample_is_listed() -> None:
    root = banks()
    assert sorted({*EXPECTED, *REFUSED}) == samples(root)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_sample_accounts_for_every_question(name: str) -> None:
    found = readers.read(banks() / name)
    assert (len(found.items), len(found.skipped)) == EXPECTED[name]
    assert all(s.reason and s.source.endswith(Path(name).name) or ":" in s.source for s in found.skipped)
    assert all(item.prompt for item in found.items)


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_a_broken_sample_is_refused_in_one_line(name: str) -> None:
    with pytest.raises(ImportRefused) as refused:
        readers.read(banks() / name)
    assert "\n" not in str(refused.value) and name.split("/")[-1] in str(refused.value)
    assert REFUSED[name] in str(refused.value)


def test_gift_matches_the_grammar_oracle() -> None:
    """The GIFT grammar project publishes its expected parse beside each file: every question it finds
    is ours too (imported or skipped), and each multiple choice keeps its right answer and feedback."""
    folder = banks() / "gift" / "fuhrmanator-GIFT-grammar-PEG.js"
    checked = 0
    for gift in sorted(folder.glob("*.gift")):
        oracle = [q for q in json.loads(gift.with_suffix(".json").read_text()) if q["type"] != "Category"]
        found = readers.read(gift)
        assert found.accounted == len(oracle), gift.name
        keys = {c.text for i in found.items for c in i.choices if c.correct}
        for q in oracle:
            choices = q.get("choices") if isinstance(q.get("choices"), list) else []
            right = [c for c in choices if c.get("isCorrect") and c.get("weight") in (None, 100)]
            if q["type"] == "MC" and len(right) == 1 and sum(c.get("isCorrect", False) for c in choices) == 1:
                if right[0]["text"]["format"] == "moodle":
                    assert right[0]["text"]["text"].strip() in keys, gift.name
                checked += 1
    assert checked >= 10


def test_the_gradebooks_keep_the_columns_the_lms_samples_import_by() -> None:
    """Canvas's own upload fixture names learners by Student/ID/SIS Login ID/Section, with a Points Possible
    row first; Moodle's import test maps learners by "ID number": ours have the same columns."""
    import csv
    import io

    from bot.content.model import Library
    from bot.core.messages import Actor
    from bot.reports import gradebook

    root = banks() / "gradebook"
    canvas = list(csv.reader(io.StringIO((root / "canvas-lms" / "basic_course_with_sis_login_id.csv").read_text())))
    moodle = next(csv.reader(io.StringIO((root / "moodle" / "load_data_test.oktext.csv").read_text()),
                             skipinitialspace=True))
    who = [Actor("slack", "T1", "U1", "Ana")]
    ours_canvas = list(csv.reader(io.StringIO(gradebook.build("canvas", who, [], Library(), {"U1": "s1"})
                                              .data.decode("utf-8-sig"))))
    ours_moodle = next(csv.reader(io.StringIO(gradebook.build("moodle", who, [], Library(), {"U1": "s1"})
                                              .data.decode("utf-8-sig"))))
    identity = [c for c in canvas[0] if c in ("Student", "ID", "SIS User ID", "SIS Login ID", "Section")]
    assert identity and set(identity) <= set(ours_canvas[0])
    assert canvas[1][0] == ours_canvas[1][0] == "Points Possible"
    assert "ID number" in moodle and "ID number" in ours_moodle


def test_hostile_html_in_a_sample_becomes_plain_markdown() -> None:
    """Canvas's true/false fixture hides a script attribute in an image: the image is named as media, and
    nothing of the markup reaches the pack."""
    found = readers.read(banks() / "qti" / "instructure-qti" / "items_1.2" / "true_false.xml")
    [item] = found.items
    texts = [item.prompt, item.explanation, *(c.text for c in item.choices), *(c.feedback for c in item.choices)]
    assert not [t for t in texts if "<" in t or "alert(" in t or "script" in t]
    assert any(m.endswith("image.png") for m in found.media)
