"""GIFT, Moodle's text format for question banks (https://docs.moodle.org/en/GIFT_format).

Our own parser: the Python ones on PyPI are unmaintained (pygiftparser, last release years ago,
numerical lists not covered; pygiftparserrgmf, a 0.0.x lex/yacc experiment). It follows Moodle's
own reading: questions are separated by blank lines, `//` lines are comments, `$CATEGORY:` lines
name a category, and `\\~ \\= \\# \\{ \\} \\: \\\\ \\n` are escapes."""

from __future__ import annotations

import re
from collections.abc import Callable

from bot.interchange.markup import to_markdown
from bot.interchange.model import Choice, Found, Item

ESCAPES = {"\\\\": "\ue000", "\\~": "\ue001", "\\=": "\ue002", "\\#": "\ue003", "\\{": "\ue004", "\\}": "\ue005",
           "\\:": "\ue006", "\\n": "\ue007"}
_LITERAL = {"\ue000": "\\", "\ue001": "~", "\ue002": "=", "\ue003": "#", "\ue004": "{", "\ue005": "}",
            "\ue006": ":", "\ue007": "\n"}  # an escaped line break stays inside its question
_ESCAPE = re.compile(r"\\[\\~=#{}:n]")
_TITLE = re.compile(r"^::(.*?)::", re.DOTALL)
_FORMAT = re.compile(r"^\s*\[(html|moodle|plain|markdown)\]", re.IGNORECASE)
_TF = re.compile(r"^(T|TRUE|F|FALSE)\s*(?:#([^#]*))?(?:#([^#]*))?$", re.IGNORECASE | re.DOTALL)
_WEIGHT = re.compile(r"^%(-?\d+(?:\.\d+)?)%")
BLANK = "_____"


def _hide(text: str) -> str:
    return _ESCAPE.sub(lambda m: ESCAPES[m.group(0)], text)


def _show(text: str) -> str:
    for hidden, literal in _LITERAL.items():
        text = text.replace(hidden, literal)
    return text


def _chunks(text: str) -> list[tuple[int, str]]:
    """The questions (and category lines) of a file with their first line: blocks of lines between blank
    lines, comments dropped; a block whose answer braces are still open runs on into the next."""
    chunks: list[tuple[int, str]] = []
    current: list[str] = []
    start = 0
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if stripped.startswith("//"):
            continue
        if not stripped:
            joined = "\n".join(current)
            if current and joined.count("{") <= joined.count("}"):
                chunks.append((start, joined))
                current = []
            continue
        if not current:
            start = number
        current.append(line)
    if current:
        chunks.append((start, "\n".join(current)))
    return chunks


def _text(raw: str, media: list[str], fmt: str = "moodle") -> str:
    """A GIFT text field as Markdown: its format marker read (else `fmt`, the question's), escapes turned back."""
    if (m := _FORMAT.match(raw)) is not None:
        fmt, raw = m.group(1).lower(), raw[m.end():]
    text = _show(raw).strip()
    if fmt in ("markdown", "plain"):
        return text
    out, found = to_markdown(text)
    media += found
    return out


def read(text: str, source: str) -> Found:
    found = Found()
    for line, chunk in _chunks(_hide(text)):
        head = chunk.strip()
        if head.startswith("$CATEGORY:"):
            continue
        _question(head, line, source, found)
    return found


def _question(chunk: str, line: int, source: str, found: Found) -> None:
    title = ""
    if (m := _TITLE.match(chunk)) is not None:
        title, chunk = _show(m.group(1)).strip(), chunk[m.end():]
    ref = f"'{title}' (line {line})" if title else f"line {line}"
    open_at = chunk.find("{")
    if open_at < 0:
        found.skip(source, ref, "a description (no answers): nothing to ask")
        return
    close_at = chunk.rfind("}")
    if close_at < open_at:
        found.skip(source, ref, "its answer block has no closing }")
        return
    before, block, after = chunk[:open_at], chunk[open_at + 1:close_at], chunk[close_at + 1:].strip()
    media: list[str] = []
    fmt = m.group(1).lower() if (m := _FORMAT.match(before)) is not None else "moodle"

    def text(raw: str) -> str:  # answers and feedback are read in the question's format unless they say
        return _text(raw, media, fmt)

    prompt = text(before)
    if re.search(r"\w", after):
        prompt = f"{prompt} {BLANK} {text(after)}"
    elif after in (".", "?", "!", ":"):
        prompt = f"{prompt} {BLANK}{after}"
    block, _, general = block.partition("####")
    explanation = text(general) if general.strip() else ""
    kind, reason, item = _answers(block.strip(), prompt, explanation, source, ref, title, text)
    found.media += [m for m in media if m not in found.media]
    if item is None:
        found.skip(source, ref, reason)
    elif not item.prompt:
        found.skip(source, ref, "its question text is empty (an image or sound only)")
    else:
        found.items.append(item)


def _answers(block: str, prompt: str, explanation: str, source: str, ref: str, title: str,
             text: Callable[[str], str]) -> tuple[str, str, Item | None]:
    if not block:
        return "essay", "an essay: studybot grades typed answers by a rubric of key points; write one by hand", None
    if block.startswith("#"):
        return "numerical", "a numerical question (numbers with tolerances): studybot has no numerical type", None
    if (tf := _TF.match(block)) is not None:
        truth = tf.group(1).upper().startswith("T")
        wrong_fb = text(tf.group(2) or "")
        right_fb = text(tf.group(3) or "")
        choices = tuple(Choice(label, label == ("True" if truth else "False"),
                               right_fb if label == ("True" if truth else "False") else wrong_fb)
                        for label in ("True", "False"))
        return "mc", "", Item("mc", source, ref, prompt, choices, explanation=explanation, title=title)
    answers = _split(block)
    if not answers:  # `{One}`: one right answer written without its sign
        answers = [("=", block)]
    if all(sign == "=" and "->" in raw for sign, raw in answers):
        return "match", "a matching question: studybot has no matching type", None
    parsed = []
    for sign, raw in answers:
        weight = 100.0 if sign == "=" else 0.0
        if (w := _WEIGHT.match(raw.strip())) is not None:
            weight, raw = float(w.group(1)), raw.strip()[w.end():]
        body, _, feedback = raw.partition("#")
        parsed.append((sign, weight, text(body), text(feedback)))
    if all(sign == "=" for sign, *_ in parsed):
        accepted = tuple(text for _, weight, text, _ in parsed if weight >= 100 and text.strip("*"))
        if not accepted:
            return "short", "a short answer without a fully right answer", None
        return "short", "", Item("short", source, ref, prompt, answers=accepted, explanation=explanation, title=title)
    right = [p for p in parsed if p[1] >= 100]
    if len(right) != 1:
        return "multi", (f"a multiple-response question ({len([p for p in parsed if p[1] > 0])} answers earn "
                         "credit): studybot's multiple choice has exactly one right answer"), None
    choices = tuple(Choice(text, weight >= 100, feedback) for _, weight, text, feedback in parsed)
    return "mc", "", Item("mc", source, ref, prompt, choices, explanation=explanation, title=title)


def _split(block: str) -> list[tuple[str, str]]:
    """The answers of a block, each with its sign (`=` right, `~` wrong)."""
    return [(m.group(1), m.group(2)) for m in re.finditer(r"([=~])([^=~]*)", block)]
