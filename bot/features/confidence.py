"""Confidence: in a cohort that asks for it (`cohorts.<id>.confidence: true`), "How sure were you?"
under each answered question, one tap: Sure or Unsure. The tap is kept with the answer in this
feature's table, once, and re-rates the answer's review card in the same transaction
(`bot.answering.cards.rating_with_confidence`: sure and wrong is Again, unsure and right Hard); it
never changes points. `/insights` lists the questions answered wrong by learners who were sure: the
misconception to address first."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from fsrs import Rating

from bot.answering.cards import card_review, rating_with_confidence
from bot.answering.pipeline import follow_up
from bot.core.errors import StudyError
from bot.core.messages import Actor, Choice, ChoiceMade, Cohort, Reply
from bot.kit.context import Answered, Context, Offer, Offered
from bot.kit.feature import Feature
from bot.reports.cohort_figures import titled
from bot.store import cards, learners, prompts
from bot.store.areas import Area
from bot.store.engine import Conn, Engine
from bot.store.model import CardReview, Disputed, Outcome, Prompt

SURE, UNSURE = "s", "u"  # the choice suffixes
ASK = "sure"  # the prompt kind of the two buttons
LISTED = 5  # confidently missed questions named in /insights

STEPS = {
    1: """
    CREATE TABLE IF NOT EXISTS confidence (
        answer_id INTEGER PRIMARY KEY,
        learner_id INTEGER NOT NULL REFERENCES learners (id) ON DELETE CASCADE,
        sure INTEGER NOT NULL,
        said_at TEXT NOT NULL
    )
    """,
}


@dataclass(frozen=True)
class Missed:
    """A question answered wrong by learners who said they were sure."""

    question_id: str
    sure_wrong: int
    sure: int


def _say(c: Conn, answer_id: int, actor: Actor, sure: bool, prompt_id: str, now: str,
         rerate: Callable[[bool], CardReview | None], card_before: str | None) -> Outcome:
    """Keep the tap with the answer, once, and re-rate the card by it, in one transaction."""
    learner = learners.upsert(c, actor, now)
    if not prompts.spend(c, prompt_id, learner, now):
        return Outcome.ALREADY
    answer = c.execute("SELECT question_id, lesson_id, correct FROM answers WHERE id = ? AND learner_id = ?",
                       (answer_id, learner)).fetchone()
    if answer is None:
        return Outcome.CLOSED
    c.execute("INSERT INTO confidence (answer_id, learner_id, sure, said_at) VALUES (?,?,?,?)"
              " ON CONFLICT (answer_id) DO NOTHING", (answer_id, learner, int(sure), now))
    if (rate := rerate(bool(answer["correct"]))) is not None:
        cards.review(c, learner, answer["question_id"], answer["lesson_id"], rate, card_before or "")
    return Outcome.RECORDED


def _missed(c: Conn, cohort: Cohort, lesson: str | None, week: str | None) -> list[Missed]:
    return [Missed(r["question_id"], int(r["wrong"]), int(r["n"])) for r in c.execute(
        "SELECT a.question_id, COUNT(*) AS n, SUM(1 - a.correct) AS wrong FROM confidence s"
        " JOIN answers a ON a.id = s.answer_id JOIN learners l ON l.id = s.learner_id"
        " WHERE s.sure = 1 AND l.platform = ? AND l.cohort = ? AND (CAST(? AS TEXT) IS NULL OR a.lesson_id = ?)"
        " AND (CAST(? AS TEXT) IS NULL OR a.week = ?) GROUP BY a.question_id HAVING SUM(1 - a.correct) > 0"
        " ORDER BY wrong DESC, a.question_id", (cohort.platform, cohort.id, lesson, lesson, week, week))]


class Confidence:
    def __init__(self, engine: Engine) -> None:
        self._engine = engine

    async def say(self, answer_id: int, actor: Actor, sure: bool, *, prompt_id: str,
                  rerate: Callable[[bool], CardReview | None], card_before: str | None) -> Outcome:
        """Keep how sure the learner was of one answer (once) and re-rate its card by `rerate(correct)`."""
        return await self._engine.write(_say, answer_id, actor, sure, prompt_id, self._engine.now(), rerate,
                                        card_before)

    async def missed(self, cohort: Cohort, lesson: str | None = None, week: str | None = None) -> list[Missed]:
        """The questions answered wrong by a learner who was sure, most such answers first."""
        return await self._engine.run(_missed, cohort, lesson, week)


AREA = Area("confidence", STEPS, Confidence)


def _applies(answered: Answered) -> bool:
    return (answered.of is Disputed.ANSWER and answered.question is not None and answered.verdict is not None
            and not answered.verdict.dont_know)


async def ask(ctx: Context, answered: Answered) -> Offered:
    """"How sure were you?" under an answer, in a cohort that asks it."""
    if not ctx.settings.cohort(answered.event.actor.in_cohort).confidence:
        return Offered()
    rating = int(answered.rating or Rating.Good)
    prompt_id = await follow_up(ctx, ASK, answered.event, lesson_id=answered.lesson_id, item_id=answered.item_id,
                                data={"answer": answered.source_id, "card": answered.card_before, "rating": rating})
    if prompt_id is None:
        return Offered()
    return Offered(("How sure were you?",), (Choice("Sure", f"{prompt_id}.{SURE}"),
                                             Choice("Unsure", f"{prompt_id}.{UNSURE}")))


async def on_tap(ctx: Context, event: ChoiceMade, prompt: Prompt, suffix: str) -> list[Reply]:
    """Sure or Unsure: kept with the answer, once; the card re-rated when that changes its rating."""
    if suffix not in (SURE, UNSURE):
        raise StudyError("That button is no longer valid.")
    question = ctx.question(prompt.item_id)
    sure, rated = suffix == SURE, Rating(int(prompt.data["rating"]))

    def rerate(correct: bool) -> CardReview | None:
        rating = rating_with_confidence(rated, correct, sure)
        return card_review(ctx, event.actor, question, rating) if rating != rated else None

    outcome = await ctx.store.area(AREA).say(int(prompt.data["answer"]), event.actor, sure, prompt_id=prompt.id,
                                             rerate=rerate, card_before=prompt.data.get("card"))
    if outcome is Outcome.ALREADY:
        return [Reply("You already said how sure you were of this answer.")]
    if outcome is not Outcome.RECORDED:
        raise StudyError("That answer is no longer stored.")
    return [Reply("Noted: sure. Your points stay as they are." if sure else
                  "Noted: unsure. A right guess comes back sooner in /review; your points stay as they are.")]


async def insight_lines(ctx: Context, cohort: Cohort, lesson: str | None, week: str | None) -> list[str]:
    """The questions learners were sure of and got wrong: the misconception to address first."""
    missed = await ctx.store.area(AREA).missed(cohort, lesson, week)
    if not missed:
        return []
    lines = ["Confidently missed (sure, and wrong: the misconception to address first):"]
    for m in missed[:LISTED]:
        question = ctx.library.questions.get(m.question_id)
        name = titled(m.question_id, question.prompt) if question else m.question_id
        lines.append(f"• {name}: {m.sure_wrong} of {m.sure} sure answers wrong")
    return lines


OFFER = Offer("confidence", applies=_applies, make=ask)

FEATURE = Feature("confidence", choices={ASK: on_tap}, offers=(OFFER,), storage=(AREA,), insights=(insight_lines,))
