"""Security properties of the core: SQL only with parameters, instructor commands refused for everyone
else, results files kept inside STUDYBOT_RESULTS_DIR, and /forget me leaving no row behind."""

from __future__ import annotations

import ast
import dataclasses
import sqlite3
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given
from hypothesis import settings as hsettings
from hypothesis import strategies as st
from support import REPO, channel, choice_for, learner

from bot.core.messages import Actor, Audience, ChoiceMade, Cohort, Command, Place, Reply, TextSubmitted
from bot.reports import files
from bot.runtime.app import StudyBot

INJECTIONS = [
    "'; DROP TABLE answers; --",
    '" OR 1=1 --',
    "Robert'); DROP TABLE learners;--",
    "%",
    "_",
    "a\x00b",
    "1 OR 1=1",
    "') OR ('1'='1",
    "*/ DELETE FROM learners; /*",
    "\\'; DELETE FROM prompts WHERE 1=1; --",
    "ü' UNION SELECT sqlite_version() --",
]
TEXT_COMMANDS = ["quiz", "glossary", "teachback", "review", "progress", "leaderboard", "results", "forget", "help"]
ARG_PREFIXES = ["", "round ", "post ", "week ", "remind ", "here ", "me "]
BUG = "Something went wrong"
TEACHBACK = "FSDP shards the parameters across GPUs, and it needs more communication between them."
WRONG_ATTEMPT = "It copies every weight onto each device for speed"  # graded wrong, so it may be self-graded

RELIABILITY = [
    ("SQL injection strings (quotes, comments, DROP TABLE, LIKE wildcards, NUL, unicode) as display names, user ids, "
     "cohort ids, channel ids, every command's arguments, form texts, button and form tokens, through "
     "StudyBot.handle", f"{len(INJECTIONS)} strings × ({len(TEXT_COMMANDS)} commands × {len(ARG_PREFIXES)} argument "
     "shapes + clicks, forms, tokens)",
     "no bug reply; every table still exists; one learner row per actor and one answer each; injected display "
     "names stored and shown verbatim on the leaderboard"),
    ("an AST scan of bot/ for SQL built by f-strings, % or .format inside execute/read calls", "every call in bot/",
     "none, apart from the allow-listed table name in Store.count and the integer user_version in migrate"),
    ("instructor commands (/leaderboard post, /results cohort, /quiz round with rounds.instructors_only) by "
     "non-instructors on slack, discord and console", "3 platforms × 3 commands",
     "refused with 'Only instructors'; no public reply, no file, no round; an instructor can (control). On the "
     "wire: tests/adapters/test_slack_app.py and test_discord_app.py::test_only_instructors_post_the_leaderboard"),
    ("/results, /results here and /results cohort with hypothesis-generated user ids, cohorts and names ('../', "
     "absolute paths, NUL, very long, unicode)", "60 examples + 300 path examples",
     "every file written resolves inside STUDYBOT_RESULTS_DIR; nothing appears outside it"),
    ("/forget me after quiz answers, a round answer, a teach-back, review cards, a self-grade, reminders on and a "
     "results file", "every table in sqlite_master",
     "no row references the learner's id or user id, their results folder is gone; another learner's rows are "
     "unchanged"),
]


def _bugs(replies: list[Reply]) -> list[str]:
    return [r.text for r in replies if BUG in r.text]


async def _tables(bot: StudyBot) -> set[str]:
    return {r["name"] for r in await bot.store.engine.read("SELECT name FROM sqlite_master WHERE type = 'table'")}


# ------------------------------------------------------------ SQL only with parameters


async def test_injection_strings_in_every_text_field_are_data(bot: StudyBot) -> None:
    tables = await _tables(bot)
    actors = []
    for n, text in enumerate(INJECTIONS):
        actor = Actor("slack", text, text + f"#{n}", text, False)  # cohort, user id and name
        place = Place("slack", text, text)  # channel id too
        actors.append(actor)
        [question] = await bot.handle(Command("quiz", "", actor, place))
        assert question.choices, question.text
        replies = await bot.handle(ChoiceMade(question.choices[0].token, actor, place))
        assert not _bugs(replies)
        for name in [*TEXT_COMMANDS, text]:  # every command, and the string as a command name
            for prefix in ARG_PREFIXES:
                assert not _bugs(await bot.handle(Command(name, prefix + text, actor, place))), (name, prefix)
        for token in (text, f"{question.choices[0].token.partition('.')[0]}.{text}", f"{text}.0"):
            assert not _bugs(await bot.handle(ChoiceMade(token, actor, place)))
            assert not _bugs(await bot.handle(TextSubmitted(token, text, actor, place)))
        [form] = await bot.handle(Command("teachback", "", actor, place))
        assert not _bugs(await bot.handle(TextSubmitted(form.form.token, f"{TEACHBACK} {text}", actor, place)))

    assert await _tables(bot) == tables
    rows = await bot.store.engine.read("SELECT platform, cohort, user_id, display_name FROM learners")
    assert sorted(tuple(r) for r in rows) == sorted((a.platform, a.cohort, a.user_id, a.display_name) for a in actors)
    answers = await bot.store.engine.read("SELECT l.user_id, COUNT(*) AS n FROM answers a JOIN learners l"
                                    " ON l.id = a.learner_id GROUP BY l.user_id")
    assert {r["user_id"]: r["n"] for r in answers} == {a.user_id: 1 for a in actors}
    assert await bot.store.count("teachbacks") == len(actors)
    [(check,)] = await bot.store.engine.read("PRAGMA integrity_check")
    assert check == "ok"


async def test_injected_display_names_appear_verbatim_on_the_leaderboard(bot: StudyBot) -> None:
    names = [t for t in INJECTIONS if "\x00" not in t][:6]
    for n, name in enumerate(names):
        actor = Actor("slack", "T1", f"U{n}", name)
        [question] = await bot.handle(Command("quiz", "", actor, channel()))
        prompt = await bot.store.prompts.get(question.choices[0].token.partition(".")[0])
        right = bot.library.questions[prompt.item_id].correct_index
        [feedback] = await bot.handle(ChoiceMade(choice_for(question, right).token, actor, channel()))
        assert feedback.text.startswith("✅")
    [board] = await bot.handle(Command("leaderboard", "all", learner("U0"), channel()))
    for name in names:
        assert f". {name} · 1" in board.text, board.text
    assert await bot.store.count("answers") == len(names)


def _sql_calls() -> list[tuple[str, str, int, str]]:
    """(file, function, line, source) of every execute/executemany/executescript/_read call whose SQL is
    built by an f-string, % or str.format (directly, or through a local variable so built)."""
    found = []
    for path in sorted((REPO / "bot").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for func in [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]:
            built = {t.id for node in ast.walk(func) if isinstance(node, ast.Assign | ast.AugAssign)
                     for t in (node.targets if isinstance(node, ast.Assign) else [node.target])
                     if isinstance(t, ast.Name) and _interpolated(node.value)}
            for node in ast.walk(func):
                if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                        and node.func.attr in {"execute", "executemany", "executescript", "read"} and node.args):
                    sql = node.args[0]
                    if _interpolated(sql) or any(isinstance(n, ast.Name) and n.id in built for n in ast.walk(sql)):
                        found.append((path.name, func.name, node.lineno, ast.unparse(sql)))
    return found


def _interpolated(node: ast.AST) -> bool:
    for n in ast.walk(node):
        if isinstance(n, ast.JoinedStr) and any(isinstance(v, ast.FormattedValue) for v in n.values):
            return True
        if isinstance(n, ast.BinOp) and isinstance(n.op, ast.Mod) and isinstance(n.left, ast.Constant | ast.JoinedStr):
            return True
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "format":
            return True
    return False


ALLOWED_SQL = {
    ("__init__.py", "count", "f'SELECT COUNT(*) AS n FROM {table}'"),  # table checked against a fixed set first
    # an int from range(); PRAGMA takes no parameters
    ("sqlite_engine.py", "migrate", "f'PRAGMA user_version = {number}'"),
    # migrate-db: every table is one the schema steps made in PostgreSQL, every column one of its columns (or NULL)
    ("moving.py", "_check_empty", "f'SELECT EXISTS (SELECT 1 FROM {table})'"),
    ("moving.py", "_copy", "f'SELECT COUNT(*) FROM {table}'"),
    *(("moving.py", "_copy_table", sql) for sql in (
        "f'PRAGMA table_info({table})'", "f'SELECT {read} FROM {table}'", "f'SELECT COUNT(*) FROM {table}'",
        "f'SELECT setval(?, COALESCE(MAX(id), 0) + 1, false) FROM {table}'")),
    # LISTEN takes no parameters; psycopg quotes the channel as an identifier
    ("postgres_engine.py", "notices", "sql.SQL('LISTEN {}').format(sql.Identifier(channel))"),
}


def test_bot_builds_no_sql_from_strings() -> None:
    offending = [call for call in _sql_calls() if (call[0], call[1], call[3]) not in ALLOWED_SQL]
    assert not offending, "SQL must take values as ? parameters:\n" + "\n".join(map(str, offending))


def test_the_scan_finds_interpolated_sql() -> None:
    """The scan is not vacuous: it flags the shapes it is meant to flag."""
    snippets = ['c.execute(f"SELECT * FROM t WHERE a = {x}")', 'c.execute("SELECT %s" % x)',
                'c.execute("SELECT {}".format(x))', 'sql = f"SELECT {x}"\nc.execute(sql)']
    for snippet in snippets:
        func = ast.parse("def f(c, x):\n" + "\n".join("    " + line for line in snippet.splitlines())).body[0]
        built = {t.id for node in ast.walk(func) if isinstance(node, ast.Assign) for t in node.targets
                 if isinstance(t, ast.Name) and _interpolated(node.value)}
        [call] = [n for n in ast.walk(func) if isinstance(n, ast.Call) and getattr(n.func, "attr", "") == "execute"]
        assert _interpolated(call.args[0]) or any(isinstance(n, ast.Name) and n.id in built
                                                  for n in ast.walk(call.args[0])), snippet


# ------------------------------------------------------------ instructor commands


def _by(platform: str, user: str, *, teacher: bool = False) -> tuple[Actor, Place]:
    cohort = "2222" if platform == "discord" else "T1"
    return Actor(platform, cohort, user, f"name-{user}", teacher), Place(platform, cohort, "C1")


async def _state(bot: StudyBot) -> tuple:
    rounds = await bot.store.engine.read("SELECT COUNT(*) AS n FROM rounds")
    files = sorted(p for p in bot.settings.results_dir.rglob("*") if p.is_file()) if bot.settings.results_dir.exists() \
        else []
    return rounds[0]["n"], files, await bot.store.count("timers")


@pytest.mark.parametrize("platform", ["slack", "discord", "console"])
async def test_instructor_commands_are_refused_for_everyone_else(bot: StudyBot, platform: str) -> None:
    bot.ctx.settings = dataclasses.replace(bot.settings, rounds_instructors_only=True)
    actor, place = _by(platform, "LEARNER")
    await bot.handle(Command("quiz", "", actor, place))  # a learner of the cohort, with a row of their own
    before = await _state(bot)
    for args in ("post", "post all", "post week"):
        [refused] = await bot.handle(Command("leaderboard", args, actor, place))
        assert refused.audience is Audience.PRIVATE and "Only instructors" in refused.text, refused.text
    for name, args in (("results", "cohort"), ("quiz", "round"), ("quiz", "round meta-llm-scale")):
        replies = await bot.handle(Command(name, args, actor, place))
        assert [r.audience for r in replies] == [Audience.PRIVATE], replies
        assert "Only instructors" in replies[0].text and replies[0].file is None, replies
    assert await _state(bot) == before

    teacher, _ = _by(platform, "TEACHER", teacher=True)  # the control: an instructor may
    posted = await bot.handle(Command("leaderboard", "post", teacher, place))
    assert Audience.PUBLIC in [r.audience for r in posted]
    exported = await bot.handle(Command("results", "cohort", teacher, place))
    assert any(r.file is not None for r in exported)
    started = await bot.handle(Command("quiz", "round", teacher, place))
    assert Audience.PUBLIC in [r.audience for r in started]


# ------------------------------------------------------------ results files stay inside the results folder

NASTY = st.one_of(
    st.sampled_from(["..", ".", "../", "../../etc", "/etc/passwd", "/", "a/../../b", "\x00", "..\\..\\x", "~",
                     "C:\\Windows", "x" * 5000, "ü/../é", "\u202e..", "..\x00/x", "-", "", " "]),
    st.text(alphabet=st.sampled_from(["/", ".", "\\", "\x00", "a", "é", "~", " "]), max_size=40),
    st.text(max_size=300),
)


@hsettings(max_examples=300, deadline=None)
@given(platform=NASTY, cohort=NASTY, user=NASTY)
def test_results_paths_stay_inside_the_root(platform: str, cohort: str, user: str) -> None:
    root = Path("/srv/studybot/results")
    actor = Actor(platform, cohort, user)
    for folder in (files.learner_dir(root, actor), files.cohort_dir(root, Cohort(platform, cohort))):
        assert folder.parent.parent == root and ".." not in folder.parts and "\x00" not in str(folder)
        assert folder.resolve(strict=False).is_relative_to(root.resolve(strict=False))


@hsettings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cohort=NASTY, user=NASTY, name=NASTY)
async def test_results_files_never_leave_the_results_dir(bot: StudyBot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                         cohort: str, user: str, name: str) -> None:
    root = bot.settings.results_dir.resolve()
    written: list[Path] = []
    real = files.write_atomically

    def recording(folder: Path, content: bytes, filename: str = files.FILENAME) -> Path:
        target = real(folder, content, filename)
        written.append(target)
        return target

    monkeypatch.setattr(files, "write_atomically", recording)
    cohort = cohort or "T1"  # an empty cohort is a direct message: it needs a cohort used before
    for actor in (Actor("slack", cohort, user, name), Actor("discord", cohort, user, name, True)):
        place = Place(actor.platform, cohort, "C1")
        for args in ("", "here", "cohort"):
            assert not _bugs(await bot.handle(Command("results", args, actor, place)))
    assert written
    for target in written:
        assert target.resolve().is_relative_to(root), target
        assert target.is_file()
    outside = [p for p in tmp_path.rglob("*") if p.is_file() and not p.resolve().is_relative_to(root)
               and not p.name.startswith(bot.settings.db_path.name)]
    assert not outside, outside


# ------------------------------------------------------------ /forget me


async def _answer_practice(bot: StudyBot, actor: Actor, place: Place) -> None:
    """Answer the practice quiz up to its first short-answer question, submit it and grade it oneself."""
    [reply] = await bot.handle(Command("quiz", "", actor, place))
    for _ in range(12):
        if reply.form is not None:
            [graded] = await bot.handle(TextSubmitted(reply.form.token, WRONG_ATTEMPT, actor, place))
            self_grade = next(c for c in graded.choices if c.label == "I got it right")
            [done] = await bot.handle(ChoiceMade(self_grade.token, actor, place))
            assert done.text.startswith("Recorded: self-graded"), done.text
            return
        [feedback] = await bot.handle(ChoiceMade(reply.choices[0].token, actor, place))
        following = next(c for c in feedback.choices if c.label == "Next question")
        [reply] = await bot.handle(ChoiceMade(following.token, actor, place))
    pytest.fail("the practice quiz has no short-answer question")


async def _learner_id(bot: StudyBot, actor: Actor) -> int:
    [row] = await bot.store.engine.read("SELECT id FROM learners WHERE platform = ? AND cohort = ? AND user_id = ?",
                                        (actor.platform, actor.cohort, actor.user_id))
    return int(row["id"])


async def _everything_of(bot: StudyBot, learner_id: int, user_id: str) -> dict[str, int]:
    """Per table, the rows that reference a learner: by a learner column, or their user id in any text."""
    found = {}
    for table in sorted(await _tables(bot)):
        columns = await bot.store.engine.read(f"PRAGMA table_info({table})")
        clauses, params = [], []
        for col in columns:
            if col["name"] in ("learner_id", "owner_id", "starter_id") or (table == "learners" and col["name"] == "id"):
                clauses.append(f"{col['name']} = ?")
                params.append(learner_id)
            elif col["type"].upper() == "TEXT":
                clauses.append(f"instr({col['name']}, ?) > 0")
                params.append(user_id)
        if clauses:
            where = " OR ".join(clauses)
            rows = await bot.store.engine.read(f"SELECT COUNT(*) AS n FROM {table} WHERE {where}", params)
            found[table] = rows[0]["n"]
    return found


async def test_forget_me_leaves_no_row_behind(bot: StudyBot) -> None:
    me, other = Actor("slack", "T1", "UFORGETME42", "Forget Me"), Actor("slack", "T1", "UKEEPME77", "Keep Me")
    place = channel()
    teacher = learner("UTEACHER", teacher=True)
    [_, question] = await bot.handle(Command("quiz", "round", teacher, place))
    for actor in (me, other):
        await _answer_practice(bot, actor, place)
        assert not _bugs(await bot.handle(ChoiceMade(question.choices[0].token, actor, place)))  # a round answer
        [form] = await bot.handle(Command("teachback", "", actor, place))
        assert not _bugs(await bot.handle(TextSubmitted(form.form.token, TEACHBACK, actor, place)))
        assert "reminders are on" in (await bot.handle(Command("review", "remind on", actor, place)))[0].text
        assert not _bugs(await bot.handle(Command("review", "", actor, place)))
        assert not _bugs(await bot.handle(Command("results", "", actor, place)))
    my_id, other_id = await _learner_id(bot, me), await _learner_id(bot, other)
    mine = await _everything_of(bot, my_id, me.user_id)
    for table in ("learners", "answers", "prompt_uses", "weekly_scores", "teachbacks", "cards", "prompts"):
        assert mine.get(table), (table, mine)  # the learner really had rows there
    others_before = await _everything_of(bot, other_id, other.user_id)
    assert files.learner_dir(bot.settings.results_dir, me).exists()

    [ask] = await bot.handle(Command("forget", "me", me, place))
    [done] = await bot.handle(ChoiceMade(ask.choices[0].token, me, place))
    assert done.text.startswith("Done")

    assert await _everything_of(bot, my_id, me.user_id) == dict.fromkeys(mine, 0)
    assert not files.learner_dir(bot.settings.results_dir, me).exists()
    assert await _everything_of(bot, other_id, other.user_id) == others_before
    assert files.learner_dir(bot.settings.results_dir, other).exists()
    with sqlite3.connect(bot.settings.db_path) as conn:  # from outside, too (nothing left in the WAL view)
        assert conn.execute("SELECT COUNT(*) FROM learners WHERE user_id = ?", (me.user_id,)).fetchone()[0] == 0
