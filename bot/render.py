"""quiz.md, written from quiz.yaml: the questions, then the answer key."""

from __future__ import annotations

from bot.asking import LETTERS
from bot.content import Lesson

HEADER = "<!-- Generated from quiz.yaml by `studybot render`; edit quiz.yaml, not this file. -->"


def render_quiz(lesson: Lesson) -> str:
    goals = {g.id: g.text for g in lesson.goals}
    out = [HEADER, "", f"# {lesson.title}: quiz", "", f"{len(lesson.questions)} questions. "
           "Take it interactively with `/quiz` (or `make run` for the console chat); "
           "`/results` writes your `quiz_results.txt`.", "", "## Questions", ""]
    for n, q in enumerate(lesson.questions, start=1):
        kind = "multiple choice" if q.type == "mc" else "short answer"
        out += [f"### {n}. {q.prompt}", "", f"*{kind} · {goals.get(q.goal, q.goal)}*", ""]
        out += [f"- {LETTERS[i]}. {option.text}" for i, option in enumerate(q.choices)]
        out += [""] if q.choices else []
    out += ["## Answer key", ""]
    for n, q in enumerate(lesson.questions, start=1):
        out.append(f"### {n}. `{q.id}`")
        out.append("")
        if q.type == "mc":
            right = q.correct_index
            out.append(f"**Answer: {LETTERS[right]}.** {q.choices[right].text}")
            out.append("")
            out += [f"- {LETTERS[i]} is wrong: {o.why_wrong}" for i, o in enumerate(q.choices) if not o.correct]
        else:
            out.append(f"**Model answer:** {q.model_answer}")
            out.append("")
            out.append(f"Key points (correct with {q.rubric.needed} of {len(q.rubric.points)}):")
            out += [f"- {p.point}" for p in q.rubric.points]
        out += ["", q.explanation, "", f"Sources: {', '.join(q.sources)}", ""]
    return "\n".join(out).rstrip() + "\n"
