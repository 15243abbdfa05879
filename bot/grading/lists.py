"""Whether an answer is a list of terms: items of a few words between commas, semicolons, full stops, dashes or
line breaks ("3.3M GPU hours, MFU 40%, LoRA adapter"; "- sharding - less memory"), fewer than half of which relate
words (by a relation word such as "of", "is", "it", "not", or an article after the item's first word, as
bot.grading.reading tells a bare list: "it shards the model"; a connective alone, "so", "because", relates nothing).

A list may match key points phrased as single terms, but it relates none of them: it never takes the half-point
rule, and it is never self-graded into a point (bot.grading.honor). An answer that bot.grading.reading reads as a
bare list (no relation word at all: "model parameters weights") is one too, when it has two words or more.
"""

from __future__ import annotations

import re

from bot.grading import languages
from bot.grading.languages import ENGLISH, answer_language
from bot.grading.reading import Answer
from bot.grading.rules import CONNECTIVES, DETERMINERS, LIST_JOINERS, RELATION_WORDS

LIST_ITEM_WORDS = 5  # words at most in an item of a list
_SEPARATORS = re.compile(r"[,;\n•]|\.(?=\s|$)|(?:^|\s)[-–—*](?=\s)")
_WORD = re.compile(r"[^\W_]+(?:['’.][^\W_]+)*")


def _items(text: str) -> list[list[str]]:
    """The words of each piece between separators, without a joining "and" or "or" at either end."""
    items = []
    for piece in _SEPARATORS.split(text.lower()):
        words = _WORD.findall(piece)
        while words and words[0] in LIST_JOINERS:
            words = words[1:]
        while words and words[-1] in LIST_JOINERS:
            words = words[:-1]
        if words:
            items.append(words)
    return items


def _relates(words: list[str]) -> bool:
    if (lang := answer_language()) != ENGLISH:  # another language: by its function words after the first word
        return any(w in languages.FUNCTION_WORDS[lang] for w in words[1:])
    return any(w in RELATION_WORDS and w not in CONNECTIVES or n and w in DETERMINERS for n, w in enumerate(words))


def is_list(text: str) -> bool:
    """Whether the text is a list of terms: two items or more, each of at most LIST_ITEM_WORDS words, fewer than half
    of them relating words."""
    items = _items(text)
    if len(items) < 2 or any(len(words) > LIST_ITEM_WORDS for words in items):
        return False
    return 2 * sum(_relates(words) for words in items) < len(items)


def lists_terms(text: str, answer: Answer) -> bool:
    """Whether the answer (`text`, as read) is a list of terms: by its separators, or a bare list of two words or
    more."""
    if (lang := answer_language()) != ENGLISH:
        bare = not any(w.text in languages.FUNCTION_WORDS[lang] for w in answer.words)
        return is_list(text) or (bare and len(answer.words) > 1)
    return is_list(text) or (answer.bare_list and len(answer.words) > 1)
