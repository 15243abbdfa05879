"""quiz.md, written from quiz.yaml: the questions, then the answer key; each type writes its blocks."""

from __future__ import annotations

from bot.content.model import Lesson

HEADER = "<!-- Generated from quiz.yaml by `studybot render`; edit quiz.yaml, not this file. -->"


def render_quiz(lesson: Lesson) -> str:
    goals = {g.id: g.text for g in lesson.goals}
    out = [HEADER, "", f"# {lesson.title}: quiz", "", f"{len(lesson.questions)} questions. "
           "Take it interactively with `/quiz` (or `make run` for the console chat); "
           "`/results` writes your `quiz_results.txt`.", "", "## Questions", ""]
    for n, q in enumerate(lesson.questions, start=1):
        out += [f"### {n}. {q.prompt}", "", f"*{q.label} · {goals.get(q.goal, q.goal)}*", ""]
        block = q.markdown_question()
        out += [*block, ""] if block else []
    out += ["## Answer key", ""]
    for n, q in enumerate(lesson.questions, start=1):
        out += [f"### {n}. `{q.id}`", "", *q.markdown_key()]
        out += ["", q.explanation, ""]
        hints = " · ".join(f"({i}) {hint}" for i, hint in enumerate(q.hints, start=1))
        out += [f"Hints, in order: {hints}", ""] if hints else []
        out += [f"Sources: {', '.join(q.sources)}", ""]
    return "\n".join(out).rstrip() + "\n"
