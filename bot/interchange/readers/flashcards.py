"""Flashcards as text: Quizlet's and Anki's export (term TAB definition, a card a line) and CSV
(front,back[,hint]), read with the `csv` module. A line starting with `#` is a comment (Anki's)."""

from __future__ import annotations

import csv
import io

from bot.interchange.markup import to_markdown
from bot.interchange.model import Found, Item

HEADERS = {("term", "definition"), ("front", "back"), ("question", "answer"), ("word", "meaning")}


def read(text: str, source: str) -> Found:
    found = Found()
    lines = [line for line in text.splitlines() if not line.startswith("#")]
    delimiter = "\t" if source.endswith(".tsv") or any("\t" in line for line in lines) else ","
    seen: dict[tuple[str, str], int] = {}
    rows = csv.reader(io.StringIO(text), delimiter=delimiter)
    for row in rows:
        line = rows.line_num
        if not row or (row[0].startswith("#")) or not any(cell.strip() for cell in row):
            continue
        if line == 1 and tuple(c.strip().lower() for c in row[:2]) in HEADERS:
            continue
        ref = f"line {line}"
        if len(row) < 2:
            found.skip(source, ref, f"one field only (no {'tab' if delimiter == chr(9) else 'comma'}): a card needs "
                                    "a front and a back")
            continue
        front, front_media = to_markdown(row[0])
        back, back_media = to_markdown(row[1])
        found.media += front_media + back_media
        if not front or not back:
            found.skip(source, ref, f"its {'front' if not front else 'back'} is empty")
            continue
        if (front, back) in seen:
            found.skip(source, ref, f"the same card as line {seen[front, back]}")
            continue
        seen[front, back] = line
        found.items.append(Item("card", source, ref, front, answers=(back,)))
    return found
