"""/insights export: cohort_answers.csv round-trips hostile names, and the cohort's quiz_results.txt
follows from it line for line; the report is one self-contained page."""

from __future__ import annotations

import csv
import io
import re
import shutil
from dataclasses import replace

import pygal
import pytest
from simulated_cohort import NOW, settings_for, simulate, start
from support import CORE_PACK, channel, choice_for

from bot.core.clock import FixedClock
from bot.core.messages import Actor, ChoiceMade, Command, Place
from bot.reports import cohort_report
from bot.reports.cohort_csv import COLUMNS, neutral
from bot.reports.cohort_figures import SHORT, short_prompt, titled
from bot.runtime.app import StudyBot

TEACHER = Actor("slack", "T1", "UTEACH", "Teacher", True)
PLACE = Place("slack", "T1", "C1")
NAMES = ["Smith, Jane", 'The "Boss"', "two\nlines", "=cmd()", "+1 555", "-minus", "@here", "山田 太郎",
         "Алёна", "محمد", "Ζωή 🚀", "plain"]


async def export(bot) -> tuple[list[list[str]], str]:
    files = {r.file.filename: r.file.content for r in await bot.handle(Command("insights", "export", TEACHER, PLACE))
             if r.file}
    raw = files["cohort_answers.csv"]
    assert raw.startswith(b"\xef\xbb\xbf")  # UTF-8 with a byte-order mark: spreadsheets read it as UTF-8
    rows = list(csv.reader(io.StringIO(raw.decode("utf-8-sig"), newline="")))
    return rows, files["cohort_report.html"].decode()


LONG_PROMPT = ("In **Megatron-LM**, what does `tensor parallelism` split across the "
               "[GPUs of one server](https://example.com/nvlink), and why?")


def parse_results(text: str) -> dict[tuple[str, str], list[str]]:
    """(learner, lesson) -> the lines of its block in quiz_results.txt, without the name and title."""
    blocks: dict[tuple[str, str], list[str]] = {}
    for block in text.split("\n\n")[1:]:
        lines = block.strip("\n").splitlines()
        fields = dict(line.split(": ", 1) for line in lines if ": " in line and "\t" not in line)
        blocks[(fields["learner"], fields["lesson"])] = [line for line in lines if not line.startswith(("name:",
                                                                                                        "title:"))]
    return blocks


def results_from_csv(rows: list[list[str]], titles: dict[str, int]) -> dict[tuple[str, str], list[str]]:
    """The same blocks, computed from the CSV alone (titles: lesson -> its number of questions)."""
    head, *body = rows
    col = {name: head.index(name) for name in COLUMNS}
    blocks: dict[tuple[str, str], list[str]] = {}
    graded: dict[str, int] = {}
    for row in body:
        if row[col["self_graded"]] == "1":
            graded[row[col["learner"]]] = graded.get(row[col["learner"]], 0) + 1
    for row in body:
        who, lesson = row[col["learner"]], row[col["lesson"]]
        lines = blocks.setdefault((who, lesson), [])
        answered = row[col["attempts"]] != "0"
        result = "unanswered" if not answered else "correct" if row[col["first_answer_correct"]] == "1" else "wrong"
        lines.append("\t".join([row[col["question"]], row[col["type"]], result]
                               + (["self-graded"] if row[col["self_graded"]] == "1" else [])))
    out = {}
    for (who, lesson), lines in blocks.items():
        right = sum(line.split("\t")[2] == "correct" for line in lines)
        total = titles[lesson]
        out[(who, lesson)] = [f"learner: {who}", f"lesson: {lesson}",
                              f"score: {right}/{total} ({round(100 * right / total)}%)",
                              f"self-graded: {graded.get(who, 0)}", *lines]
    return out


async def test_the_csv_round_trips_names_with_commas_quotes_newlines_formulas_and_any_script(bot) -> None:
    for n, name in enumerate(NAMES):
        who = Actor("slack", "T1", f"N{n}", name)
        [asked] = await bot.handle(Command("quiz", "", who, channel()))
        await bot.handle(ChoiceMade(choice_for(asked, n % 3).token, who, channel()))
    rows, _ = await export(bot)
    assert rows[0] == list(COLUMNS)
    questions = len(bot.library.questions)
    names = [row[1] for row in rows[1:]]
    expected = [neutral(name) for name in NAMES for _ in range(questions)]
    assert sorted(names) == sorted(expected)
    assert {"'=cmd()", "'+1 555", "'-minus", "'@here", "two\nlines", 'The "Boss"', "Smith, Jane",
            "山田 太郎"} <= set(names)
    assert all(len(row) == len(COLUMNS) for row in rows)
    assert not any(cell.startswith(("=", "+", "-", "@")) for row in rows for cell in row)
    first = next(row for row in rows[1:] if row[0] == "slack:N1" and row[3] == "core-q1")
    assert first[5:] == ["1", "1", "0", "1", "2026-11-30 09:00:00", "What does tensor parallelism split?",
                         "", "0"]  # choice 1, which has no rubric verdict, and took no hints
    unanswered = next(row for row in rows[1:] if row[0] == "slack:N1" and row[3] == "core-q2")
    assert unanswered[5:] == ["", "", "", "0", "", "What does FSDP shard, and what does it pay for it?", "", ""]


@pytest.mark.parametrize("cell, shown", [("=1+2", "'=1+2"), ("+x", "'+x"), ("-2", "'-2"), ("@SUM(A1)", "'@SUM(A1)"),
                                         ("\t=x", "'\t=x"), ("a=b", "a=b"), ("", "")])
def test_a_cell_a_spreadsheet_would_run_is_quoted(cell: str, shown: str) -> None:
    assert neutral(cell) == shown


@pytest.mark.parametrize("prompt, short", [
    ("What does MFU measure?", "What does MFU measure?"),
    ("Why is serving judged on latency rather than throughput, unlike training?",
     "Why is serving judged on latency rather than…"),
    ("Why is **serving** judged on _latency_, per [the brief](https://example.com/brief)?",
     "Why is serving judged on latency, per the brief?"),
    ("Set `fsdp_config` and the snake_case_flag for 2 * 8 GPUs", "Set fsdp_config and the snake_case_flag for 2 * 8…"),
    ("## Step 1\n> Put *these* in order:\n- load\n- train", "Step 1 Put these in order: load train"),
    ("An \\*escaped\\* star, ~~not~~ __now__ ![a chart](c.png)", "An *escaped* star, not now a chart"),
    ("\\*5 and \\_x_ and C:\\Users", "*5 and _x_ and C:\\Users"),
    ("Pneumonoultramicroscopicsilicovolcanoconiosis" * 2, "Pneumonoultramicroscopicsilicovolcanoconiosis" + "Pneu…"),
])
def test_a_prompts_short_form_is_plain_text_cut_at_a_word(prompt: str, short: str) -> None:
    assert short_prompt(prompt) == short and len(short) <= SHORT
    assert titled("q07", prompt) == f"q07 · {short}"


async def test_a_question_is_named_by_its_id_and_the_short_form_of_its_prompt_everywhere(tmp_path) -> None:
    """/insights, the report and the CSV name core-q1, whose prompt is long and in Markdown, the same
    way; the CSV keeps the id in its column and adds the prompt as a last one, the others in place."""
    content = tmp_path / "content"
    shutil.copytree(CORE_PACK, content)
    (content / "basics" / "quiz.md").unlink()  # rendered from the old prompt
    quiz = content / "basics" / "quiz.yaml"
    quiz.write_text(quiz.read_text().replace('"What does tensor parallelism split?"', f'"{LONG_PROMPT}"'))
    clock = FixedClock(NOW)
    bot = await StudyBot.start(replace(settings_for(tmp_path), content_dir=content), clock)
    try:
        await simulate(bot, clock, learners=3)  # the second and third learners answer core-q1
        [reply] = await bot.handle(Command("insights", "", TEACHER, PLACE))
        rows, html = await export(bot)
    finally:
        await bot.close()
    named = "core-q1 · In Megatron-LM, what does tensor parallelism…"
    assert [line for line in reply.text.splitlines() if "core-q1" in line][0].startswith(f"• {named} (mc): 2 answered")
    question_cells = re.findall(r'<td data-label="question">([^<]*)</td>', html)
    assert named in question_cells and f"<title>{named}</title>" in html  # the table, and the chart's tooltip
    head, *body = rows
    assert head == [*COLUMNS] and head[:-3] == ["learner", "display_name", "lesson", "question", "type",
                                                 "first_answer_correct", "points", "self_graded", "attempts",
                                                 "first_answered_at_utc"]
    assert {row[-3] for row in body if row[3] == "core-q1"} == {named.split(" · ")[1]}
    assert not [text for text in (reply.text, html, *(row[-3] for row in body)) if re.search(r"\*\*|`|\]\(", text)]


async def test_the_cohort_results_file_follows_from_the_csv(tmp_path) -> None:
    bot, clock = await start(tmp_path)
    try:
        await simulate(bot, clock, learners=30)
        rows, _ = await export(bot)
        replies = await bot.handle(Command("results", "cohort", TEACHER, PLACE))
        results = next(r.file.content.decode() for r in replies if r.file)
        titles = {lesson.id: len(lesson.questions) for lesson in bot.library.lessons.values()}
        from_csv = results_from_csv(rows, titles)
        from_file = parse_results(results)
        assert from_csv == from_file
        assert len(from_file) == 30 and any("self-graded" in line for b in from_file.values() for line in b[4:])
        assert any(line.endswith("\twrong") for b in from_file.values() for line in b)
    finally:
        await bot.close()


async def test_the_report_is_one_page_that_fetches_nothing(tmp_path) -> None:
    bot, clock = await start(tmp_path)
    try:
        await simulate(bot, clock, learners=12)
        sneaky = Actor("slack", "T1", "UX", '<img src="https://example.com/x.png" onerror="alert(1)">')
        await bot.handle(Command("progress", "", sneaky, PLACE))  # known, not started: named in the report
        _, html = await export(bot)
    finally:
        await bot.close()
    assert "&lt;img src=&quot;https://example.com/x.png&quot; onerror=&quot;alert(1)&quot;&gt;" in html
    assert html.startswith("<!doctype html>") and '<meta name="viewport"' in html
    tags = re.findall(r"<[a-zA-Z][^>]*>", html)
    assert not [t for t in tags if re.match(r"<(script|link|img|iframe|object|embed|image|use)\b", t, re.I)]
    assert not [t for t in tags if re.search(r"\b(src|srcset|xlink:href)=|url\(|javascript:", t, re.I)]
    assert all(ref.startswith("#") for t in tags for ref in re.findall(r'\bhref="([^"]*)"', t))
    assert "@import" not in html and "url(" not in html
    assert not re.search(r"<!--", html)  # pygal's credits (with web addresses) are left out
    for anchor in ("chart-questions", "chart-active", "chart-points", "chart-scores", "chart-teachbacks"):
        assert f'id="{anchor}"' in html
    questions = html.split('id="chart-questions"')[1].split("</figure>")[0]
    wide, narrow = questions.split('<div class="narrow">')  # the chart drawn for a wide screen and for a phone
    assert [part.count('class="rect reactive tooltip-trigger"') for part in (wide, narrow)] == [
        len(bot.library.questions)] * 2


def test_chart_labels_that_would_be_cut_alike_keep_their_own_names_and_tooltips() -> None:
    names = ["core-tb1/data-parallelism-copies-the-model", "core-tb1/data-parallelism-syncs-gradients"]
    svg = cohort_report._chart(pygal.HorizontalBar, "Missed", names, [10, 20], cohort_report.NARROW, unit="%",
                               bar_height=30, tips=[f"{name} · its point" for name in names])
    pairs = re.findall(r"<text[^>]*>(core-tb1/[^<]*)</text>\s*<title>([^<]*)</title>", svg)
    assert len({label for label, _ in pairs}) == 2
    assert sorted(tip for _, tip in pairs) == sorted(f"{name} · its point" for name in names)
