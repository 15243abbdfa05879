"""Personal data taken out of a learner's text before it leaves for the second reader: e-mail
addresses, phone numbers, card numbers, and whatever STUDYBOT_READER_REDACT matches."""

from __future__ import annotations

import re
import unicodedata

EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_DASH = "\u2010-\u2015-"  # hyphen, non-breaking hyphen, figure dash, en and em dashes, the ASCII one
CARD = re.compile(rf"\b\d(?:[ {_DASH}]?\d){{12,18}}\b")  # 13 to 19 digits, spaced or dashed as printed
# +44 20 7946 0958, also ending a sentence ("555-123-4567.")
PHONE = re.compile(rf"(?<![\w.])\+?\(?\d{{1,4}}\)?(?:[ .{_DASH}]?\(?\d{{2,4}}\)?){{2,5}}(?!\w|\.\w)")
PATTERNS = ((EMAIL, "[email]"), (CARD, "[card number]"), (PHONE, "[phone]"))
OTHER = "[redacted]"


def redact(text: str, extra: re.Pattern[str] | None = None) -> str:
    """`text` with each piece of personal data replaced by a marker that says what it was. The text is
    NFKC-normalised first (no-break and narrow spaces become spaces, full-width ＠ and digits plain ones)
    and loses its invisible format characters (zero-width spaces and joiners, direction marks), which
    would hide a phone number or an instruction to the grader inside its words."""
    text = "".join(ch for ch in unicodedata.normalize("NFKC", text) if unicodedata.category(ch) != "Cf")
    if extra is not None:
        text = extra.sub(OTHER, text)
    for pattern, marker in PATTERNS:
        text = pattern.sub(marker, text)
    return text
