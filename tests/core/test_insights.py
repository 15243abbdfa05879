"""/insights: every figure recounted from the simulated answers and from the answers table; the
local week's edges; instructors only, and only their own cohort; no answer text anywhere."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from collections import Counter
from dataclasses import replace
from datetime import date, datetime, timedelta

import pytest
from simulated_cohort import MARK, MOMENTS, NOW, ZONE, Simulated, settings_for, simulate, start
from support import learner

from bot.core.clock import FixedClock, iso_week
from bot.core.messages import MAX_TEXT, Actor, Audience, ChoiceMade, Cohort, Command, Place
from bot.features.insights import CUT, MESSAGES, POINTER, fit_messages
from bot.reports.cohort_figures import SHORT, gather, titled
from bot.store import cohort_stats as insights_store

pytestmark = pytest.mark.both_engines

T1 = Cohort("slack", "T1")
TEACHER = Actor("slack", "T1", "UTEACH", "Teacher", True)
PLACE = Place("slack", "T1", "C1")


def pct(part: int, whole: int) -> int:
    return round(100 * part / whole) if whole else 0


@pytest.fixture
async def cohort(tmp_path, database_url):
    bot, clock = await start(tmp_path, database_url)
    sims = await simulate(bot, clock)
    yield bot, clock, sims
    await bot.close()


def per_question_from_plan(sims: list[Simulated], weeks: set[str] | None = None) -> dict[str, tuple]:
    """question -> (answered, correct, self-graded, wrong choices, missed key points), from what was sent."""
    found: dict[str, tuple] = {}
    for sim in sims:
        if weeks is not None and iso_week(sim.moment, ZONE) not in weeks:
            continue
        for g in sim.first:
            answered, correct, graded, wrong, missed = found.get(g.question_id, (0, 0, 0, Counter(), Counter()))
            if g.choice is not None and not g.correct:
                wrong[g.choice] += 1
            missed.update(g.missed)
            found[g.question_id] = (answered + 1, correct + g.correct, graded + g.self_graded, wrong, missed)
    return found


async def per_question_from_table(bot) -> dict[str, tuple]:
    """The same, recounted from the rows of the answers table, read with plain SQL."""
    rows = await bot.store.engine.read("SELECT a.question_id, a.choice, a.correct, a.self_graded, a.missed FROM"
                                       " answers a JOIN learners l ON l.id = a.learner_id"
                                       " WHERE l.cohort = 'T1' AND a.scored = 1")
    found: dict[str, tuple] = {}
    for question, choice, correct, graded, missed in rows:
        n, right, sg, wrong, points = found.get(question, (0, 0, 0, Counter(), Counter()))
        if choice is not None and not correct:
            wrong[choice] += 1
        points.update(json.loads(missed or "[]"))
        found[question] = (n + 1, right + correct, sg + graded, wrong, points)
    return found


async def partly_from_table(bot, table: str, item: str, where: str = "") -> list[str]:
    """The item of each of the cohort's answers or teach-back attempts the rubric read as partly right."""
    rows = await bot.store.engine.read(f"SELECT a.{item} FROM {table} a JOIN learners l ON l.id = a.learner_id"
                                       f" WHERE l.cohort = 'T1' AND a.verdict = 'partly'{where}")
    return [r[0] for r in rows]


def top(counts: Counter, order: list[str], names: dict[str, str], limit: int = 3) -> tuple:
    ranked = sorted((k for k in counts if counts[k]), key=lambda k: (-counts[k], order.index(k)))
    return tuple((names[k], counts[k]) for k in ranked[:limit])


async def test_every_figure_of_insights_equals_a_recount_of_the_answers(cohort, tmp_path) -> None:
    bot, clock, sims = cohort
    lesson = next(iter(bot.library.lessons.values()))
    planned = per_question_from_plan(sims)
    assert planned == await per_question_from_table(bot)  # the plan is what the table holds
    assert len(sims) >= 30 and sum(n for n, *_ in planned.values()) > 60

    [reply] = await bot.handle(Command("insights", "", TEACHER, PLACE))
    lines = reply.text.splitlines()
    figures = await gather(bot.ctx, T1, weekly=True)

    # the cohort at a glance, in New York's week and days
    since = datetime(2026, 11, 26, 0, 0, tzinfo=ZONE)
    this_week = iso_week(datetime.fromisoformat(NOW), ZONE)
    active = sorted(s.actor.display_name for s in sims if s.started and iso_week(s.moment, ZONE) == this_week)
    not_started = sorted(s.actor.display_name for s in sims if not s.started)
    behind = sorted(s.actor.display_name for s in sims if s.started and s.moment < since)
    assert (figures.activity.learners, list(figures.activity.active), list(figures.activity.not_started),
            list(figures.activity.behind)) == (len(sims), active, not_started, behind)
    assert active and not_started and behind
    assert lines[1] == (f"Learners: {len(sims)} · active this week ({this_week}): {len(active)} · not started: "
                        f"{len(not_started)} · behind (nothing since Thu 26 Nov, America/New_York): {len(behind)}")
    shown = lambda names: ", ".join(names[:10]) + (f" and {len(names) - 10} more" if len(names) > 10 else "")  # noqa: E731
    assert f"Not started: {shown(not_started)}" in lines and f"Behind: {shown(behind)}" in lines

    # per question, weakest first
    order = sorted(lesson.questions, key=lambda q: (q.id not in planned, pct(planned[q.id][1], planned[q.id][0])))
    assert all(len(q.prompt) <= SHORT and "*" not in q.prompt for q in order)  # so each line shows the whole prompt
    question_lines = [line for line in lines if line.startswith("• core-q")]
    assert [line.split(" ")[1] for line in question_lines] == [q.id for q in order]
    for q, line, fig in zip(order, question_lines, figures.questions, strict=True):
        answered, correct, graded, wrong, missed = planned[q.id]
        assert (fig.question.id, fig.answered, fig.correct, fig.self_graded) == (q.id, answered, correct, graded)
        partly = sum(p == q.id for p in await partly_from_table(bot, "answers", "question_id", " AND a.scored = 1"))
        assert fig.partly == partly
        assert line.startswith(f"• {q.id} · {q.prompt} ({q.kind}): {answered} answered, "
                               f"{pct(correct, answered)}% correct, {pct(graded, answered)}% self-graded"
                               + (f", {partly} partly right" if q.kind == "short" else "")
                               + (";" if "; " in line else ""))
        if q.kind == "mc":
            index, n = min(wrong.items(), key=lambda kv: (-kv[1], kv[0]))
            assert fig.wrong_choice == (q.choices[index].text, n)
            assert f"” {pct(n, answered)}%" in line
        names = q.key_points()
        expected_missed = top(missed, list(names), dict(names))
        assert fig.missed == expected_missed
        if expected_missed:
            assert line.endswith("; most missed: " + ", ".join(f"{p} ({n})" for p, n in expected_missed))
        else:
            assert "most missed" not in line

    # per teach-back prompt: every attempt
    for prompt in lesson.prompts:
        attempts = [missed for s in sims for pid, missed in s.teachbacks if pid == prompt.id]
        missed = Counter(k for m in attempts for k in m)
        names = {k.id: k.point for k in prompt.key_points}
        expected = top(missed, list(names), names)
        [fig] = [t for t in figures.teachbacks if t.prompt.id == prompt.id]
        assert (fig.attempts, fig.missed) == (len(attempts), expected)
        assert fig.covered == tuple((k, names[k], sum(k not in m for m in attempts)) for k in names)
        partly = sum(p == prompt.id for p in await partly_from_table(bot, "teachbacks", "prompt_id"))
        assert fig.partly == partly
        assert f"• {titled(prompt.id, prompt.prompt)}: {len(attempts)} attempt{'s' * (len(attempts) != 1)}" + (
            f", {partly} partly right" if attempts else "") + (
            "; most missed: " + ", ".join(f"{p} ({n})" for p, n in expected) if expected else "") in lines

    # glossary: counts only
    found = Counter(name for s in sims for name, ok in s.lookups if ok)
    lacking = Counter(name for s in sims for name, ok in s.lookups if not ok)
    best = lambda c: tuple(sorted(c.items(), key=lambda kv: (-kv[1], kv[0]))[:5])  # noqa: E731
    assert (figures.looked_up, figures.lacking) == (best(found), best(lacking))
    assert lines[-2] == ("Glossary: looked up most: " + ", ".join(f"{t} ({n})" for t, n in best(found))
                         + "; searched for but missing: " + ", ".join(f"{t} ({n})" for t, n in best(lacking)))
    assert lines[-1] == POINTER

    # the weeks of the report: learners who answered or explained, and the points they earned
    weekly: dict[str, tuple[set, int]] = {}
    for s in sims:
        week = iso_week(s.moment, ZONE)
        points = sum(g.correct for g in s.first) + sum(not missed for _, missed in s.teachbacks)
        if s.started:
            who, total = weekly.get(week, (set(), 0))
            weekly[week] = (who | {s.actor.user_id}, total + points)
    monday = date.fromisocalendar(int(min(weekly)[:4]), int(min(weekly)[6:]), 1)
    weeks = ["{}-W{:02d}".format(*(monday + timedelta(weeks=n)).isocalendar()[:2]) for n in range(3)]
    assert [(w.week, w.active, w.points) for w in figures.weeks] == [
        (w, len(weekly.get(w, (set(), 0))[0]), weekly.get(w, (set(), 0))[1]) for w in weeks]
    assert weeks[-1] == this_week
    assert all(p.rubric.needed == len(p.key_points) for p in lesson.prompts)  # so a pass is an attempt missing none


async def test_the_week_scope_counts_only_this_weeks_first_answers(cohort) -> None:
    bot, clock, sims = cohort
    this_week = iso_week(datetime.fromisoformat(NOW), ZONE)
    planned = per_question_from_plan(sims, {this_week})
    figures = await gather(bot.ctx, T1, all_time=False)
    got = {f.question.id: (f.answered, f.correct, f.self_graded) for f in figures.questions if f.answered}
    assert got == {q: v[:3] for q, v in planned.items()}
    assert got != {f.question.id: (f.answered, f.correct, f.self_graded)
                   for f in (await gather(bot.ctx, T1)).questions if f.answered}  # all time differs
    [reply] = await bot.handle(Command("insights", "core-basics week", TEACHER, PLACE))
    assert reply.text.startswith(f"Insights · slack:T1 · core-basics · week {this_week}")


async def test_active_not_started_and_behind_turn_at_the_local_edges(tmp_path) -> None:
    """The same moments in a New York cohort and a UTC one: the local week and days decide."""
    bot, clock = await start(tmp_path)
    try:
        for cohort in ("T1", "T9"):  # T1 is in New York, T9 in UTC
            for n, moment in enumerate(MOMENTS[:4]):
                clock.set(moment)
                who = Actor("slack", cohort, f"E{n}", f"edge {n}")
                await bot.handle(Command("glossary", "fsdp", who, Place("slack", cohort, "C1")))
                await bot.handle(Command("progress", "", who, Place("slack", cohort, "C1")))
                [asked] = await bot.handle(Command("quiz", "", who, Place("slack", cohort, "C1")))
                await bot.handle(ChoiceMade(asked.choices[0].token, who, Place("slack", cohort, "C1")))
            clock.set(MOMENTS[0])
            await bot.handle(Command("progress", "", Actor("slack", cohort, "E9", "never"), Place("slack", cohort)))
        clock.set(NOW)
        york = (await gather(bot.ctx, T1)).activity
        utc = (await gather(bot.ctx, Cohort("slack", "T9"))).activity
        # edge 0 answered Sunday 23:59:59 in New York (Monday 04:59:59 UTC); edge 1 at Monday 00:00 in New York
        assert york.active == ("edge 1",) and utc.active == ("edge 0", "edge 1")
        # edge 2 at Wednesday 25 Nov 23:59:59 in New York is past the last seven local days; edge 3 is inside them
        assert york.behind == ("edge 2",)
        assert utc.behind == ()  # in UTC, edge 2 acted on Thursday 26 Nov, inside the seven days from 26 Nov
        assert york.not_started == utc.not_started == ("never",)
        clock.set("2026-12-03T04:59:59+00:00")  # Wednesday 23:59:59 in New York: the seven days still start on 26 Nov
        assert (await gather(bot.ctx, T1)).activity.behind == ("edge 2",)
        clock.set("2026-12-03T05:00:00+00:00")  # Thursday 00:00 in New York: now they start on 27 Nov
        assert (await gather(bot.ctx, T1)).activity.behind == ("edge 2", "edge 3")
        assert (await gather(bot.ctx, T1)).scope.behind_since == date(2026, 11, 27)
    finally:
        await bot.close()


async def test_a_learner_is_refused(cohort) -> None:
    bot, _, _ = cohort
    for words in ("", "export", "core-basics week"):
        [refusal] = await bot.handle(Command("insights", words, learner("U01", cohort="T1"), PLACE))
        assert refusal.text.startswith("Only instructors can see the cohort's insights"), words
        assert not refusal.file


async def test_another_cohorts_instructor_sees_nothing_of_this_one(cohort) -> None:
    bot, clock, sims = cohort
    others = await simulate(bot, clock, learners=6, seed=3, cohort="T2", prefix="V")
    for teacher in (Actor("slack", "T2", "UT2", "Other teacher", True), Actor("discord", "T1", "UD", "Discord", True)):
        [reply] = await bot.handle(Command("insights", "", teacher, Place(teacher.platform, teacher.cohort, "C1")))
        files = await bot.handle(Command("insights", "export", teacher, Place(teacher.platform, teacher.cohort, "C1")))
        seen = reply.text + "".join(r.file.content.decode("utf-8-sig") for r in files if r.file)
        assert "Learner U" not in seen and "slack:U" not in seen
        expected = len(others) if teacher.cohort == "T2" else 0
        assert f"Learners: {expected} ·" in reply.text
    [mine] = await bot.handle(Command("insights", "", TEACHER, PLACE))
    assert f"Learners: {len(sims)} ·" in mine.text and "Learner V" not in mine.text


async def test_export_sends_the_csv_and_the_report_by_direct_message(cohort) -> None:
    bot, _, sims = cohort
    replies = await bot.handle(Command("insights", "export", TEACHER, PLACE))
    files = [r for r in replies if r.file]
    assert [(r.file.filename, r.audience) for r in files] == [("cohort_answers.csv", Audience.DM),
                                                              ("cohort_report.html", Audience.DM)]
    assert [r.audience for r in replies if not r.file] == [Audience.PRIVATE]
    csv_text, html = (r.file.content.decode("utf-8-sig") for r in files)
    lesson = next(iter(bot.library.lessons.values()))
    assert len(csv_text.strip().splitlines()) == 1 + len(sims) * len(lesson.questions)
    assert "<script" not in html and "Share correct per question" in html
    [refusal] = await bot.handle(Command("insights", "export now", TEACHER, PLACE))
    assert "type nothing after export" in refusal.text


async def test_no_answer_text_reaches_insights_the_report_or_the_csv(cohort) -> None:
    bot, _, _ = cohort
    read = bot.store.engine.read
    assert (await read("SELECT COUNT(*) FROM answers WHERE text LIKE ?", (f"%{MARK}%",)))[0][0] > 5
    assert (await read("SELECT COUNT(*) FROM teachbacks WHERE explanation LIKE ?", (f"%{MARK}%",)))[0][0]
    [reply] = await bot.handle(Command("insights", "", TEACHER, PLACE))
    files = await bot.handle(Command("insights", "export", TEACHER, PLACE))
    texts = [reply.text, *(r.file.content.decode("utf-8-sig") for r in files if r.file)]
    assert all(MARK not in t for t in texts)
    [audit] = await bot.handle(Command("audit", "", TEACHER, PLACE))  # /audit stays the place for answer texts
    assert MARK in audit.text or "No self-graded answers" in audit.text


async def test_forget_me_removes_the_learner_from_later_exports(cohort) -> None:
    bot, _, sims = cohort
    gone = next(s for s in sims if s.first and s.teachbacks)
    [ask] = await bot.handle(Command("forget", "me", gone.actor, PLACE))
    await bot.handle(ChoiceMade(ask.choices[0].token, gone.actor, PLACE))
    [reply] = await bot.handle(Command("insights", "", TEACHER, PLACE))
    files = await bot.handle(Command("insights", "export", TEACHER, PLACE))
    seen = reply.text + "".join(r.file.content.decode("utf-8-sig") for r in files if r.file)
    assert gone.actor.display_name not in seen and f"slack:{gone.actor.user_id}," not in seen
    assert f"Learners: {len(sims) - 1} ·" in reply.text
    figures = await gather(bot.ctx, T1)
    rest = per_question_from_plan([s for s in sims if s is not gone])
    assert {f.question.id: f.answered for f in figures.questions} == {q: v[0] for q, v in rest.items()}


async def test_glossary_lookups_are_counted_per_query_never_per_learner(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(insights_store, "WRITE_LOOKUPS_AFTER", 0.05)
    bot, clock = await start(tmp_path)
    try:
        for n in range(3):
            who = Actor("slack", "T1", f"G{n}", f"g{n}")
            await bot.handle(Command("glossary", "Fully Sharded Data Parallel", who, PLACE))  # an alias of FSDP
            await bot.handle(Command("glossary", "  Zero-Bubble  ", who, PLACE))
        await bot.handle(Command("glossary", "", learner("G0", cohort="T1"), PLACE))  # the list: no lookup
        await asyncio.sleep(0.5)  # the counts are written behind the replies, on a timer
        with sqlite3.connect(bot.settings.db_path) as c:
            columns = [r[1] for r in c.execute("PRAGMA table_info(glossary_lookups)")]
            rows = c.execute("SELECT found, query, count FROM glossary_lookups ORDER BY found").fetchall()
        assert columns == ["platform", "cohort", "week", "found", "query", "count"]
        assert rows == [(0, "zero bubble", 3), (1, "FSDP", 3)]
    finally:
        await bot.close()


async def test_a_long_reply_takes_up_to_three_messages_then_is_cut_at_a_line_and_points_to_the_export(cohort) -> None:
    lines = [f"• line {n} " + "x" * 80 for n in range(80)]
    texts = fit_messages(lines, POINTER)
    assert len(texts) == MESSAGES and all(len(text) <= MAX_TEXT for text in texts)
    assert texts[-1].endswith(CUT + "\n" + POINTER)
    kept = [line for text in texts for line in text.splitlines()][:-2]
    assert kept == lines[: len(kept)] and len(kept) > 50
    assert fit_messages(lines[:3], POINTER) == ["\n".join([*lines[:3], POINTER])]
    assert all(len(text) <= 120 for most in (1, 3) for text in fit_messages(["y" * 200] * 4, "end", 120, most))
    two = fit_messages(lines[:25], POINTER)  # about 2,300 characters: two messages, nothing cut
    assert len(two) == 2 and [line for text in two for line in text.splitlines()] == [*lines[:25], POINTER]


async def test_usage_mistakes_get_a_short_answer(cohort) -> None:
    bot, _, _ = cohort
    [unknown] = await bot.handle(Command("insights", "nosuchlesson", TEACHER, PLACE))
    assert unknown.text.startswith("No lesson 'nosuchlesson'")
    [lesson_only] = await bot.handle(Command("insights", "core-basics all", TEACHER, PLACE))
    assert lesson_only.text.startswith("Insights · slack:T1 · core-basics · all time")


def test_the_simulated_clock_and_cohort_are_what_the_edges_need(tmp_path) -> None:
    assert settings_for(tmp_path).cohort(T1).timezone == ZONE
    assert FixedClock(NOW).now().astimezone(ZONE).strftime("%A %H:%M") == "Wednesday 10:00"



async def test_a_lessons_insights_name_only_its_own_glossary_terms(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(insights_store, "WRITE_LOOKUPS_AFTER", 0.05)
    bot, clock = await start(tmp_path)
    try:
        for query in ("FSDP", "MFU", "MFU"):
            await bot.handle(Command("glossary", query, Actor("slack", "T1", "G1", "g1"), PLACE))
        lesson = next(iter(bot.library.lessons.values()))
        only_fsdp = replace(lesson, terms=tuple(t for t in lesson.terms if t.term == "FSDP"))  # as another lesson's
        assert (await gather(bot.ctx, T1)).looked_up == (("MFU", 2), ("FSDP", 1))
        assert (await gather(bot.ctx, T1, only_fsdp)).looked_up == (("FSDP", 1),)
    finally:
        await bot.close()


async def test_export_offers_the_gradebooks_when_the_config_maps_learners_to_lms_ids(tmp_path, database_url) -> None:
    from simulated_cohort import settings_for

    from bot.core.config import CohortSettings
    from bot.runtime.app import StudyBot

    bot, clock = await start(tmp_path, database_url)
    sims = await simulate(bot, clock)
    await bot.close()
    mapped = {s.actor.user_id: f"sis-{i:03d}" for i, s in enumerate(sims[:-2])}
    settings = replace(settings_for(tmp_path, database_url),
                       cohorts={T1: CohortSettings(timezone=ZONE, gradebook=mapped)})
    bot = await StudyBot.start(settings, clock)
    try:
        replies = await bot.handle(Command("insights", "export", TEACHER, PLACE))
    finally:
        await bot.close()
    files = {r.file.filename: r.file.content.decode("utf-8-sig") for r in replies if r.file}
    assert {"gradebook_canvas.csv", "gradebook_moodle.csv"} <= set(files)
    canvas = files["gradebook_canvas.csv"].splitlines()
    lesson = next(iter(bot.library.lessons.values()))
    assert canvas[0].startswith("Student,ID,SIS User ID,SIS Login ID,Section,") and lesson.id in canvas[0]
    assert canvas[1].split(",")[5] == str(len(lesson.questions))  # Points Possible
    assert len(canvas) == 2 + len(mapped)
    by_id = {line.split(",")[0]: int(line.split(",")[2]) for line in files["gradebook_moodle.csv"].splitlines()[1:]}
    right = {s.actor.user_id: sum(g.correct for g in s.first) for s in sims}
    assert by_id == {mapped[u]: right[u] for u in mapped}  # the points of first answers, per learner
    assert "2 learner(s) without an LMS id left out" in " ".join(r.text for r in replies)
