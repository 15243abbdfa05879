"""Hints: a question whose pack gives `hints:` shows a Hint button while it is open; each press shows
the next hint, privately, one at a time and in order, above the question asked again, with another
Hint button until the last. The
hints a learner took are kept per question as asked (its prompt) in this feature's table, and read
in the answer's transaction, which records them with the answer; what they cost is a scoring rule
(`bot.grading.scoring`)."""

from __future__ import annotations

from dataclasses import dataclass, replace

from bot.answering.asking import arrangement
from bot.core.errors import StudyError
from bot.core.messages import Actor, Audience, Choice, ChoiceMade, Reply, counted
from bot.grading.scoring import HINT_COST, POINT, answer_points
from bot.kit.context import Aid, Context
from bot.kit.feature import Feature
from bot.questions.base import Question
from bot.store import learners
from bot.store.areas import Area
from bot.store.engine import Conn, Engine
from bot.store.model import Outcome, Prompt

HINT = "hint"  # the choice suffix of the Hint button on a question's prompt

STEPS = {
    1: """
    CREATE TABLE IF NOT EXISTS hints_taken (
        prompt_id TEXT NOT NULL,
        learner_id INTEGER NOT NULL REFERENCES learners (id) ON DELETE CASCADE,
        taken INTEGER NOT NULL,
        PRIMARY KEY (prompt_id, learner_id)
    )
    """,
}


@dataclass(frozen=True)
class Taken:
    """A press of Hint: how many of the question's hints the learner has now seen, and whether this
    press showed none new (they had seen the last one)."""

    taken: int
    again: bool = False


def taken_in(c: Conn, learner: int, prompt_id: str) -> int:
    """The hints a learner took under one asked question (inside the caller's transaction)."""
    row = c.execute("SELECT taken FROM hints_taken WHERE prompt_id = ? AND learner_id = ?",
                    (prompt_id, learner)).fetchone()
    return int(row["taken"]) if row else 0


def _take(c: Conn, prompt_id: str, actor: Actor, most: int, now: str) -> Taken | Outcome:
    """One more hint, up to `most`; not once the question is closed or the learner has answered it."""
    prompt = c.execute("SELECT closed_at FROM prompts WHERE id = ?", (prompt_id,)).fetchone()
    if prompt is None or prompt["closed_at"] is not None:
        return Outcome.CLOSED
    learner = learners.upsert(c, actor, now)  # locks the learner's row: their answer waits, or came first
    if c.execute("SELECT 1 FROM prompt_uses WHERE prompt_id = ? AND learner_id = ?",
                 (prompt_id, learner)).fetchone():
        return Outcome.ALREADY
    before = taken_in(c, learner, prompt_id)
    if before >= most:
        return Taken(most, again=True)
    c.execute("INSERT INTO hints_taken (prompt_id, learner_id, taken) VALUES (?, ?, ?) ON CONFLICT"
              " (prompt_id, learner_id) DO UPDATE SET taken = excluded.taken", (prompt_id, learner, before + 1))
    return Taken(before + 1)


class Hints:
    def __init__(self, engine: Engine) -> None:
        self._engine = engine

    async def take(self, prompt_id: str, actor: Actor, most: int) -> Taken | Outcome:
        """The learner takes the next hint of an open question they have not answered yet."""
        return await self._engine.write(_take, prompt_id, actor, most, self._engine.now())


AREA = Area("hints", STEPS, Hints)


def label(question: Question) -> str | None:
    return "💡 Hint" if question.hints else None


def cost(taken: int) -> str:
    """What the hints taken so far leave of a right answer's point, by the scoring rules."""
    left = answer_points(True, True, taken)
    each = "the whole point" if HINT_COST >= POINT else counted(HINT_COST, "point")
    return (f"Each hint costs {each}: a right answer now earns {counted(left, 'point')}"
            + (" (it still counts as right in your results and your review)." if not left else "."))


async def show(ctx: Context, event: ChoiceMade, prompt: Prompt, suffix: str) -> list[Reply]:
    """The next hint, privately, above the question asked again with its buttons (so that it can be
    answered from here, wherever the first one scrolled to), and another Hint button while hints remain."""
    question = ctx.question(prompt.item_id)
    if not question.hints:
        raise StudyError("This question has no hints.")
    taken = await ctx.store.area(AREA).take(prompt.id, event.actor, len(question.hints))
    if taken is Outcome.CLOSED:
        raise StudyError("That question has ended, and its hints with it. Use /quiz for a fresh one.")
    if taken is Outcome.ALREADY or not isinstance(taken, Taken):
        raise StudyError("You answered this question already: hints are for before you answer.")
    total = len(question.hints)
    header = "\n".join([f"💡 Hint {taken.taken} of {total}: {question.hints[taken.taken - 1]}",
                        "That was the last hint." if taken.again else cost(taken.taken), ""])
    more = (Choice("💡 Another hint", f"{prompt.id}.{HINT}"),) if taken.taken < total else ()
    # asked as in public (with buttons: an Answer button for a typed answer, never a form that would hide the hint)
    asked = question.ask(prompt.id, header, Audience.PUBLIC, arrangement(question, prompt), extra=more)
    return [replace(asked, audience=Audience.PRIVATE)]


AID = Aid(HINT, label=label, press=show, taken=taken_in)

FEATURE = Feature("hints", aids=(AID,), storage=(AREA,))
