"""Personal data taken out of a learner's text before it leaves for the second reader: e-mail
addresses, phone numbers, card numbers, and whatever STUDYBOT_READER_REDACT matches."""

from __future__ import annotations

import re

EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
CARD = re.compile(r"\b\d(?:[ -]?\d){12,18}\b")  # 13 to 19 digits, spaced or dashed as printed
# +44 20 7946 0958, also ending a sentence ("555-123-4567.")
PHONE = re.compile(r"(?<![\w.])\+?\(?\d{1,4}\)?(?:[ .-]?\(?\d{2,4}\)?){2,5}(?!\w|\.\w)")
PATTERNS = ((EMAIL, "[email]"), (CARD, "[card number]"), (PHONE, "[phone]"))
OTHER = "[redacted]"


def redact(text: str, extra: re.Pattern[str] | None = None) -> str:
    """`text` with each piece of personal data replaced by a marker that says what it was."""
    if extra is not None:
        text = extra.sub(OTHER, text)
    for pattern, marker in PATTERNS:
        text = pattern.sub(marker, text)
    return text
