"""The catalogues and the translators: complete and current catalogues, plural rules, Babel's
numbers and dates, the fallback to English, and the pseudo-locale."""

from __future__ import annotations

import logging
import re
import shlex
from datetime import date
from pathlib import Path

import pytest
from babel.messages.frontend import CommandLineInterface

from bot.core import i18n

REPO = Path(__file__).resolve().parents[2]
PLACEHOLDER = re.compile(r"\{[^{}]*\}")
TRANSLATED = [lang for lang in i18n.SHIPPED if lang != i18n.SOURCE]


def keywords() -> list[str]:
    """The extraction keywords, as the Makefile gives them to pybabel."""
    line = next(x for x in (REPO / "Makefile").read_text().splitlines() if x.startswith("KEYWORDS"))
    return shlex.split(line.split(":=", 1)[1])


def ids(catalog) -> set:
    return {(m.context, m.id) for m in catalog if m.id}


def test_the_template_is_current(tmp_path: Path) -> None:
    """Every message in the code is in the template (and nothing else): run `make messages-update`."""
    out = tmp_path / "studybot.pot"
    CommandLineInterface().run(["pybabel", "-q", "extract", "-F", str(REPO / "babel.cfg"), *keywords(),
                                "--no-location", "-o", str(out), str(REPO)])
    with out.open("rb") as f:
        from babel.messages.pofile import read_po
        extracted = read_po(f)
    assert ids(extracted) == ids(i18n.template())


@pytest.mark.parametrize("language", TRANSLATED)
def test_every_shipped_language_has_every_message_with_its_placeholders(language: str) -> None:
    catalog = i18n.read(language)
    template = {m.id: m for m in i18n.template() if m.id}
    assert ids(catalog) == ids(i18n.template()), "run make messages-update, then translate"
    for message in catalog:
        if not message.id:
            continue
        assert not message.fuzzy, f"{language}: fuzzy: {message.id!r}"
        sources = message.id if isinstance(message.id, tuple) else (message.id,)
        strings = message.string if isinstance(message.string, tuple) else (message.string,)
        assert all(strings), f"{language}: untranslated: {message.id!r}"
        wanted = set(PLACEHOLDER.findall(sources[-1])) | ({"{n}"} if len(sources) > 1 else set())
        for string in strings:
            assert set(PLACEHOLDER.findall(string)) == wanted, f"{language}: placeholders of {message.id!r}"
        assert message.id in template


def test_a_translator_follows_the_catalogue_and_its_plural_rules() -> None:
    es, de = i18n.translator("es-ES"), i18n.translator("de_DE.UTF-8")
    assert es.gettext("Posted.") == "Publicado." and de.gettext("Posted.") == "Veröffentlicht."
    assert es.gettext("Related: {terms}", terms="FSDP") == "Relacionados: FSDP"
    assert es.ngettext("{n} self-graded", "{n} self-graded", 1) == "1 autoevaluado"
    assert es.ngettext("{n} self-graded", "{n} self-graded", 3) == "3 autoevaluados"
    assert de.ngettext("You: rank {rank} with {n} point{marks}.", "You: rank {rank} with {n} points{marks}.", 1234,
                       rank=2, marks="") == "Du: Rang 2 mit 1.234 Punkten."


def test_numbers_and_dates_follow_the_locale() -> None:
    de, es, en = i18n.translator("de"), i18n.translator("es"), i18n.translator("en")
    assert (de.decimal(1234.5), en.decimal(1234.5)) == ("1.234,5", "1,234.5")
    assert de.percent(0.25) == "25\xa0%" and en.percent(0.25) == "25%"
    assert es.date(date(2026, 12, 5), "long") == "5 de diciembre de 2026"


def test_an_unknown_locale_reads_english_said_once_in_the_log(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, "studybot.i18n"):
        for _ in range(3):
            assert i18n.translator("tlh-KL").gettext("Posted.") == "Posted."
        assert i18n.translator("en-GB").language == "en" and i18n.translator(None).language == "en"
    said = [r.getMessage() for r in caplog.records if "tlh-KL" in r.getMessage()]
    assert len(said) == 1 and "using English" in said[0]


def test_the_pseudo_locale_marks_every_message_and_keeps_placeholders() -> None:
    qps = i18n.translator("qps")
    for message in i18n.template():
        if message.id and not isinstance(message.id, tuple):
            shown = qps.pgettext(message.context, message.id) if message.context else qps.gettext(message.id)
            assert shown.startswith("⟦") and shown.endswith("⟧")
            assert PLACEHOLDER.findall(shown) == PLACEHOLDER.findall(message.id)
    assert qps.gettext("No term '{query}' in the glossary. Type /glossary to list every term.",
                       query="abc").startswith("⟦Ñö térm 'abc' îñ")
    assert qps.ngettext("{n} self-graded", "{n} self-graded", 2) == "⟦2 sélf-grådéd⟧"
    assert es_plural_forms() == 3


def es_plural_forms() -> int:
    return i18n.read("es").num_plurals


@pytest.mark.parametrize("language", TRANSLATED)
def test_every_shipped_language_keeps_its_terms_beside_its_catalogue(language: str) -> None:
    terms = (i18n.LOCALES / language / "terms.md").read_text()
    for term in ("quiz", "round", "teach-back", "key point", "leaderboard"):
        assert f"| {term} |" in terms, f"{language}/terms.md lacks {term}"
