"""The interface in the reader's language: gettext catalogues managed with Babel, one translator per
language, and Babel's dates and numbers.

    _ = translator("es-ES").gettext
    _("No term '{query}'.", query="foo")          # translated, then filled in
    tr.ngettext("{n} point", "{n} points", n)     # by the catalogue's plural rules

The catalogues are `bot/locales/<lang>/LC_MESSAGES/studybot.po`, read (and compiled in memory) once per
language, so no compiled file can go stale. English is the source language; an unknown or unsupported
locale falls back to it, said once per locale in the log, never to the learner. The pseudo-locale `qps`
is made from the template: every message wrapped in ⟦…⟧ with its letters accented, so a test can find
text that escaped the catalogue. `N_` marks a string for extraction where it is defined (a module
constant) and translated where it is shown."""

from __future__ import annotations

import ast
import logging
import re
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from datetime import date, datetime
from functools import cache
from io import BytesIO
from pathlib import Path
from typing import Any

from babel import Locale
from babel.dates import format_date, format_datetime
from babel.messages.catalog import Catalog
from babel.messages.extract import extract_python
from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po
from babel.numbers import format_decimal, format_percent
from babel.support import NullTranslations, Translations

log = logging.getLogger("studybot.i18n")

LOCALES = Path(__file__).resolve().parent.parent / "locales"
DOMAIN = "studybot"
TEMPLATE = LOCALES / f"{DOMAIN}.pot"
SOURCE = "en"
PSEUDO = "qps"
SHIPPED = ("en", "de", "es")  # English (the source) and every language with a complete catalogue
_ACCENTS = str.maketrans("aceinouyACEINOUY", "åçéîñöûýÅÇÉÎÑÖÛÝ")
_PLACEHOLDER = re.compile(r"(\{[^{}]*\})")


def N_(message: str) -> str:  # noqa: N802 (gettext's name for "mark only")
    """Mark a message for extraction; translate it where it is shown."""
    return message


def pseudo(message: str) -> str:
    """The pseudo-locale's form of a message: accented, in ⟦…⟧, placeholders untouched."""
    parts = _PLACEHOLDER.split(message)
    return "⟦" + "".join(p if _PLACEHOLDER.fullmatch(p) else p.translate(_ACCENTS) for p in parts) + "⟧"


class Translator:
    """One language's messages (gettext, ngettext, pgettext, each filled in with its placeholders)
    and its dates and numbers."""

    def __init__(self, language: str, translations: NullTranslations) -> None:
        self.language = language
        self.locale = Locale.parse(SOURCE if language == PSEUDO else language)
        self._t = translations

    def gettext(self, message: str, /, **values: object) -> str:
        return _fill(self._t.gettext(message), values)

    _ = gettext

    def ngettext(self, singular: str, plural: str, n: int, /, **values: object) -> str:
        """`n` is given to the message as `{n}`, written as the language writes numbers."""
        return _fill(self._t.ngettext(singular, plural, n), {"n": self.decimal(n), **values})

    def pgettext(self, context: str, message: str, /, **values: object) -> str:
        return _fill(str(self._t.pgettext(context, message)), values)

    def date(self, day: date | datetime, form: str = "medium") -> str:
        return format_date(day, form, locale=self.locale)

    def datetime(self, moment: datetime, form: str = "medium") -> str:
        return format_datetime(moment, form, locale=self.locale)

    def decimal(self, number: float) -> str:
        return format_decimal(number, locale=self.locale)

    def percent(self, ratio: float) -> str:
        return format_percent(ratio, locale=self.locale)

    def __repr__(self) -> str:
        return f"Translator({self.language!r})"


def _fill(text: str, values: dict[str, object]) -> str:
    return text.format(**values) if values else text


def language_of(code: str | None) -> str | None:
    """The shipped language (or the pseudo-locale) a locale code names ("es-ES", "de_DE.UTF-8", "EN"),
    or None."""
    if not code:
        return None
    base = code.split(".")[0].split("@")[0].replace("-", "_").split("_")[0].lower()
    return base if base in SHIPPED or base == PSEUDO else None


_said: set[str] = set()


def translator(code: str | None = None) -> Translator:
    """The translator for a locale code; English for none, and for an unknown or unsupported one (said
    once per code in the log)."""
    language = language_of(code)
    if language is None:
        if code and code not in _said and code.split("_")[0].split("-")[0].lower() != SOURCE:
            _said.add(code)
            log.info("locale %r is not one studybot ships (%s); using English", code[:40], ", ".join(SHIPPED))
        language = SOURCE
    return _translator(language)


@cache
def _translator(language: str) -> Translator:
    if language == SOURCE:
        return Translator(language, NullTranslations())
    return Translator(language, _compiled(pseudo_catalog() if language == PSEUDO else read(language)))


def catalogue_path(language: str) -> Path:
    return LOCALES / language / "LC_MESSAGES" / f"{DOMAIN}.po"


def read(language: str) -> Catalog:
    with catalogue_path(language).open("rb") as f:
        return read_po(f, locale=language, domain=DOMAIN)


def template() -> Catalog:
    with TEMPLATE.open("rb") as f:
        return read_po(f, domain=DOMAIN)


def pseudo_catalog() -> Catalog:
    """Every message of the template in its pseudo form (plurals too: English's two forms)."""
    catalog = Catalog(locale=SOURCE, domain=DOMAIN)
    for message in template():
        if not message.id:
            continue
        if isinstance(message.id, (list, tuple)):
            string: str | tuple[str, ...] = tuple(pseudo(m) for m in message.id)
        else:
            string = pseudo(message.id)
        catalog.add(message.id, string, context=message.context)
    return catalog


def _compiled(catalog: Catalog) -> Translations:
    buffer = BytesIO()
    write_mo(buffer, catalog)  # fuzzy entries are left out, as gettext does
    buffer.seek(0)
    return Translations(buffer, domain=DOMAIN)


# ---------------------------------------------------------------- the reader of this event

_current: ContextVar[Translator | None] = ContextVar("studybot_translator", default=None)


def current() -> Translator:
    """The translator of the event being handled (English outside one)."""
    return _current.get() or _translator(SOURCE)


@contextmanager
def reading(tr: Translator) -> Iterator[Translator]:
    """Handle an event for a reader of `tr`'s language: `current()` is `tr` inside."""
    token = _current.set(tr)
    try:
        yield tr
    finally:
        _current.reset(token)


# ---------------------------------------------------------------- extraction (babel.cfg)

Extracted = tuple[Any, ...]  # (line, keyword or None, message or forms, comments), as Babel takes them


def extract(fileobj: object, keywords: Mapping[str, object], comment_tags: list[str],
            options: dict[str, object]) -> Iterator[Extracted]:
    """Babel's Python extraction, and the commands' declarations: each `@command`'s summary, its
    options' descriptions and its docstring's usage lines (what /help and Discord show)."""
    yield from extract_python(fileobj, keywords, comment_tags, options)  # type: ignore[arg-type]
    fileobj.seek(0)  # type: ignore[attr-defined]
    tree = ast.parse(fileobj.read())  # type: ignore[attr-defined]
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield from _declared(node)


def _declared(handler: ast.FunctionDef | ast.AsyncFunctionDef) -> Iterator[Extracted]:
    for decorator in handler.decorator_list:
        if not (isinstance(decorator, ast.Call) and getattr(decorator.func, "id", None) == "command"):
            continue
        for node in ast.walk(decorator):
            if isinstance(node, ast.keyword) and node.arg == "summary" and isinstance(node.value, ast.Constant):
                yield node.value.lineno, None, str(node.value.value), ["a command's description"]
            if (isinstance(node, ast.Call) and getattr(node.func, "id", None) == "Option" and len(node.args) > 1
                    and isinstance(node.args[1], ast.Constant)):
                yield node.lineno, None, str(node.args[1].value), ["a command option's description"]
        for line in (ast.get_docstring(handler) or "").splitlines():
            if line.strip().startswith("/"):
                yield handler.lineno, None, line.strip(), ["a /help line: keep the command and its typed words"]
