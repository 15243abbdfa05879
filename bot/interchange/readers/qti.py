"""IMS QTI 1.2 (Canvas's and most LMSs' quiz export) and QTI 2.1/2.2 items, as XML files or in a zip
package, read with defusedxml. No maintained Python reader exists (the QTI tools on PyPI write
packages; Instructure's reader is Ruby), so this reads the parts studybot can ask: single-answer
choice, true/false, text entry and ordering."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bot.interchange.markup import to_markdown
from bot.interchange.model import Choice, Found, ImportRefused, Item
from bot.interchange.safety import MAX_FILE, open_package, parse_xml, read_bytes

CANVAS_SKIPPED = {
    "essay_question": "an essay: studybot grades typed answers by a rubric of key points; write one by hand",
    "file_upload_question": "a file upload: nothing studybot can ask",
    "text_only_question": "text only (no answers): nothing to ask",
    "numerical_question": "a numerical question (numbers with tolerances): studybot has no numerical type",
    "calculated_question": "a calculated question: studybot has no numerical type",
    "matching_question": "a matching question: studybot has no matching type",
    "multiple_answers_question": "a multiple-answer question: studybot's multiple choice has exactly one right answer",
    "fill_in_multiple_blanks_question": "several blanks: studybot asks one question at a time",
    "multiple_dropdowns_question": "several drop-downs: studybot asks one question at a time",
}
INTERACTIONS_SKIPPED = {
    "extendedTextInteraction": "an essay: studybot grades typed answers by a rubric of key points; write one by hand",
    "associateInteraction": "a matching question: studybot has no matching type",
    "matchInteraction": "a matching question: studybot has no matching type",
    "gapMatchInteraction": "a gap-match question: studybot has no such type",
    "inlineChoiceInteraction": "inline drop-downs: studybot has no such type",
    "hotspotInteraction": "a hotspot on an image: studybot has no such type",
    "uploadInteraction": "a file upload: nothing studybot can ask",
    "sliderInteraction": "a slider: studybot has no numerical type",
}
_BLOCKS = {"p", "div", "br", "li", "ul", "ol", "table", "tr"}


def _local(tag: Any) -> str:
    return str(tag).rsplit("}", 1)[-1]


def _find(element: Any, name: str) -> Any:
    return next((e for e in element.iter() if _local(e.tag) == name), None)


def _all(element: Any, name: str) -> list[Any]:
    return [e for e in element.iter() if _local(e.tag) == name]


def read_file(path: Path, source: str) -> Found:
    """A QTI XML file, or a zip package of them."""
    if path.suffix.lower() == ".zip":
        found = Found()
        with open_package(path) as package:
            for member in sorted(package.names()):
                if member.lower().endswith((".xml", ".qti")) and not member.endswith(("imsmanifest.xml",
                                                                                      "assessment_meta.xml")):
                    found.extend(read(package.read(member), f"{source}:{member}"))
        return found
    return read(read_bytes(path, MAX_FILE), source)


def read(data: bytes, source: str) -> Found:
    root = parse_xml(data, source)
    kind = _local(root.tag)
    found = Found()
    if kind == "questestinterop":
        for number, item in enumerate(_all(root, "item"), start=1):
            _item12(item, number, source, found)
    elif kind == "assessmentItem":
        _item21(root, source, found)
    elif kind not in ("assessmentTest", "manifest", "quiz"):
        raise ImportRefused(f"{source}: not QTI (its root is <{kind[:40]}>)")
    return found


# ---------------------------------------------------------------- QTI 1.2


def _mattext(element: Any, media: list[str]) -> str:
    if element is None:
        return ""
    parts = []
    for node in element.iter():
        name = _local(node.tag)
        if name == "mattext":
            text, found = to_markdown(node.text or "")
            media += found
            parts.append(text)
        elif name in ("matimage", "mataudio", "matvideo") and node.get("uri"):
            media.append(str(node.get("uri")))
    return "\n".join(p for p in parts if p)


def _metadata(item: Any) -> dict[str, str]:
    return {(f.findtext("{*}fieldlabel") or f.findtext("fieldlabel") or ""):
            (f.findtext("{*}fieldentry") or f.findtext("fieldentry") or "") for f in _all(item, "qtimetadatafield")}


def _scores(item: Any) -> tuple[set[str], dict[str, str]]:
    """The response values that earn the item's highest score, and which feedback each shows (value -> id)."""
    scored: list[tuple[float, list[str]]] = []
    shows: dict[str, str] = {}
    for condition in _all(item, "respcondition"):
        values = [v.text.strip() for v in _all(condition, "varequal") if v.text and not _under_not(condition, v)]
        setvar = _find(condition, "setvar")
        try:
            scored.append((float(setvar.text) if setvar is not None and setvar.text else 0.0, values))
        except ValueError:
            pass
        for feedback in _all(condition, "displayfeedback"):
            for value in values:
                shows.setdefault(value, str(feedback.get("linkrefid", "")))
    best = max((score for score, _ in scored), default=0.0)
    right = {v for score, values in scored if best > 0 and score == best for v in values}
    return right, shows


def _under_not(condition: Any, value: Any) -> bool:
    return any(value in list(n.iter()) for n in _all(condition, "not"))


def _item12(item: Any, number: int, source: str, found: Found) -> None:
    title = str(item.get("title") or "")
    ref = f"item {item.get('ident') or number}" + (f" '{title[:40]}'" if title else "")
    canvas = _metadata(item).get("question_type", "")
    if canvas in CANVAS_SKIPPED:
        found.skip(source, ref, CANVAS_SKIPPED[canvas])
        return
    media: list[str] = []
    presentation = _find(item, "presentation")
    if presentation is None:
        found.skip(source, ref, "no presentation: nothing to ask")
        return
    prompt = _mattext(next((m for m in presentation if _local(m.tag) in ("material", "flow")), None), media)
    if not prompt:
        prompt = _mattext(presentation.find("{*}material") or presentation.find("material"), media)
    feedback = {str(f.get("ident")): _mattext(f, media) for f in _all(item, "itemfeedback")}
    explanation = feedback.get("general_fb", "")
    lids, strs = _all(presentation, "response_lid"), _all(presentation, "response_str")
    right, shows = _scores(item)
    found.media += [m for m in media if m not in found.media]
    if len(lids) == 1 and not strs:
        lid = lids[0]
        if lid.get("rcardinality", "Single") != "Single":
            found.skip(source, ref, CANVAS_SKIPPED["multiple_answers_question"])
            return
        labels = _all(lid, "response_label")
        choices = tuple(Choice(_mattext(label, media), str(label.get("ident")) in right,
                               feedback.get(shows.get(str(label.get("ident")), ""), "")) for label in labels)
        if sum(c.correct for c in choices) != 1:
            found.skip(source, ref, f"{sum(c.correct for c in choices)} choices earn full marks: studybot's multiple "
                                    "choice has exactly one right answer")
            return
        _add(found, Item("mc", source, ref, prompt, choices, explanation=explanation, title=title))
    elif len(strs) == 1 and not lids:
        if not right:
            found.skip(source, ref, "an essay (no right answer given): studybot grades typed answers by a rubric; "
                                    "write one by hand")
            return
        _add(found, Item("short", source, ref, prompt, answers=tuple(sorted(right)), explanation=explanation,
                         title=title))
    elif _all(presentation, "response_num"):
        found.skip(source, ref, "a numerical question (numbers with tolerances): studybot has no numerical type")
    elif _all(presentation, "response_grp") or len(lids) > 1:
        found.skip(source, ref, "several answers to one question (matching or blanks): studybot asks one at a time")
    else:
        found.skip(source, ref, "no answer studybot can ask for")


def _add(found: Found, item: Item) -> None:
    if not item.prompt:
        found.skip(item.source, item.ref, "its question text is empty (an image or sound only)")
    else:
        found.items.append(item)


# ---------------------------------------------------------------- QTI 2.1


def _flow(element: Any, media: list[str], skip: frozenset[str] = frozenset()) -> str:
    """The text of an XHTML flow (QTI 2 bodies), without the elements named in `skip`."""
    out: list[str] = []

    def walk(node: Any) -> None:
        name = _local(node.tag)
        if name in skip:
            out.append(node.tail or "")
            return
        if name in ("img", "object") and (node.get("src") or node.get("data")):
            media.append(str(node.get("src") or node.get("data")))
        if name in _BLOCKS:
            out.append("\n")
        out.append(node.text or "")
        for child in node:
            walk(child)
        if name in _BLOCKS:
            out.append("\n")
        out.append(node.tail or "")

    out.append(element.text or "")
    for child in element:
        walk(child)
    text, _ = to_markdown("".join(out), html=False)
    return text


def _item21(root: Any, source: str, found: Found) -> None:
    title = str(root.get("title") or "")
    ref = f"item {root.get('identifier') or '?'}" + (f" '{title[:40]}'" if title else "")
    body = _find(root, "itemBody")
    interactions = [e for e in (body.iter() if body is not None else ()) if _local(e.tag).endswith("Interaction")]
    if body is None or not interactions:
        found.skip(source, ref, "no interaction: nothing to ask")
        return
    if len(interactions) > 1:
        found.skip(source, ref, f"{len(interactions)} interactions: studybot asks one question at a time")
        return
    interaction = interactions[0]
    kind = _local(interaction.tag)
    if kind in INTERACTIONS_SKIPPED:
        found.skip(source, ref, INTERACTIONS_SKIPPED[kind])
        return
    media: list[str] = []
    inner = frozenset({kind, "feedbackInline", "modalFeedback", "rubricBlock"})
    prompt_node = _find(interaction, "prompt")
    prompt = "\n\n".join(p for p in (_flow(body, media, inner),
                                     _flow(prompt_node, media) if prompt_node is not None else "") if p)
    correct = [v.text.strip() for v in _all(_find(root, "correctResponse") or root, "value")
               if v.text and _find(root, "correctResponse") is not None]
    explanation = "\n".join(_flow(m, media) for m in _all(root, "modalFeedback"))
    found.media += [m for m in media if m not in found.media]
    choices = _all(interaction, "simpleChoice")
    texts = {str(c.get("identifier")): _flow(c, media, frozenset({"feedbackInline"})) for c in choices}
    if kind == "choiceInteraction":
        if interaction.get("maxChoices", "1") != "1" or len(correct) != 1:
            found.skip(source, ref, "a multiple-answer question: studybot's multiple choice has exactly one right "
                                    "answer")
            return
        item_choices = tuple(Choice(texts[str(c.get("identifier"))], str(c.get("identifier")) == correct[0],
                                    " ".join(_flow(f, media) for f in _all(c, "feedbackInline"))) for c in choices)
        _add(found, Item("mc", source, ref, prompt, item_choices, explanation=explanation, title=title))
    elif kind == "orderInteraction":
        _add(found, Item("order", source, ref, prompt, answers=tuple(texts[i] for i in correct if i in texts),
                         explanation=explanation, title=title))
    elif kind == "textEntryInteraction":
        mapped = [str(e.get("mapKey")) for e in _all(root, "mapEntry") if float(e.get("mappedValue", "0") or 0) > 0]
        accepted = tuple(dict.fromkeys(correct + mapped))
        if not accepted:
            found.skip(source, ref, "a text entry without a right answer")
            return
        _add(found, Item("short", source, ref, prompt.replace("\n\n", " _____ ", 0), answers=accepted,
                         explanation=explanation, title=title))
    else:
        found.skip(source, ref, f"a {kind}: studybot has no such type")
