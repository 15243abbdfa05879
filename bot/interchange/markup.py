"""HTML (Moodle, QTI, Anki fields) and Anki's own markup turned into the plain Markdown a pack holds.

Bold and italics, links, line breaks and lists survive; scripts, styles and comments go; images and
sounds are dropped from the text and their file names returned, so that the report can name them
(media is never copied)."""

from __future__ import annotations

import re
from html import escape, unescape
from html.parser import HTMLParser

_ANKI_SOUND = re.compile(r"\[sound:([^\]]+)\]")
_BLOCKS = {"p", "div", "br", "li", "tr", "h1", "h2", "h3", "h4", "h5", "h6", "ul", "ol", "table", "blockquote"}
_DROPPED = {"script", "style", "head", "title"}
_MARKS = {"b": "**", "strong": "**", "i": "*", "em": "*", "code": "`"}
_SPACES = re.compile(r"[ \t\u00a0\u200b]+")
_TAG = re.compile(r"<[A-Za-z/!][^>]*>")
MEDIA_TAGS = {"img": "src", "audio": "src", "video": "src", "source": "src", "object": "data", "embed": "src"}


class _Markdown(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.out: list[str] = []
        self.media: list[str] = []
        self.dropped = 0
        self.links: list[str | None] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        if tag in _DROPPED:
            self.dropped += 1
        elif tag in MEDIA_TAGS and values.get(MEDIA_TAGS[tag]):
            self.media.append(str(values[MEDIA_TAGS[tag]]))
        elif tag in _BLOCKS:
            self.out.append("\n- " if tag == "li" else "\n")
        elif tag in _MARKS:
            self.out.append(_MARKS[tag])
        elif tag == "a":
            href = values.get("href")
            self.links.append(href if href and href.startswith(("http://", "https://")) else None)
            self.out.append("[" if self.links[-1] else "")

    def handle_endtag(self, tag: str) -> None:
        if tag in _DROPPED:
            self.dropped = max(0, self.dropped - 1)
        elif tag in _BLOCKS and tag != "br":
            self.out.append("\n")
        elif tag in _MARKS:
            self.out.append(_MARKS[tag])
        elif tag == "a" and self.links:
            href = self.links.pop()
            self.out.append(f"]({href})" if href else "")

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)

    def handle_data(self, data: str) -> None:
        if not self.dropped:
            self.out.append(data)


def looks_like_html(text: str) -> bool:
    return bool(_TAG.search(text)) or "&" in text


def to_markdown(text: str, *, html: bool = True) -> tuple[str, list[str]]:
    """The text as Markdown, and the media files it named (images, sounds)."""
    media = [m for m in _ANKI_SOUND.findall(text)]
    text = _ANKI_SOUND.sub("", text)
    if html and looks_like_html(text):
        parser = _Markdown()
        parser.feed(text)
        parser.close()
        media += parser.media
        text = "".join(parser.out)
    lines = [_SPACES.sub(" ", line).strip() for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n")]
    out = "\n".join(lines)
    out = re.sub(r"\n{3,}", "\n\n", out).strip()
    out = out.replace("****", "").replace("\ufffc", "")
    return out, media


def to_html(text: str) -> str:
    """A pack's text as HTML for a field that holds HTML (Anki, Moodle): escaped, line breaks kept."""
    return "<br>".join(escape(line, quote=False) for line in text.split("\n"))


def plain(text: str) -> str:
    """HTML entities read, tags removed: for names and ids."""
    return _SPACES.sub(" ", unescape(_TAG.sub(" ", text))).strip()
