"""Teach-back: explain an idea in your own words; the bot lists the key points covered and
missed. An attempt earns a point the first time it covers enough of them (`bot.grading.scoring`)."""

from __future__ import annotations

from dataclasses import replace

from bot.answering.pipeline import offers
from bot.content.model import TeachbackPrompt
from bot.core.errors import StudyError, TextRefused
from bot.core.messages import Actor, Choice, ChoiceMade, Command, Form, Place, Reply, TextSubmitted, counted
from bot.core.suggest import did_you_mean
from bot.grading.honor import too_short
from bot.grading.matching import grade
from bot.grading.verdict import Verdict
from bot.kit.commands import Option, command
from bot.kit.context import Answered, Context
from bot.kit.feature import Feature
from bot.questions.base import OPEN_FORM
from bot.questions.base import Verdict as GradedText
from bot.store.model import Disputed, Prompt


def suggest_prompts(ctx: Context, typed: str) -> list[str]:
    """Teach-back prompt ids (and lesson ids) that start with what was typed."""
    typed = typed.strip().lower()
    return [name for name in (*ctx.library.prompts, *ctx.library.lessons) if name.lower().startswith(typed)][:25]


TEACHBACK = "teachback"  # the prompt kind of a teach-back's form and its "Try this one again"


@command(summary="Explain an idea in your own words and see which key points you covered",
         options=(Option("prompt", "a lesson id, or a teach-back prompt id such as meta-tb5",
                         suggest=suggest_prompts),))
async def teachback(ctx: Context, cmd: Command) -> list[Reply]:
    """/teachback [lesson]: explain one of the lesson's ideas in your own words (the least practised first).
    /teachback <prompt id>: explain that teach-back prompt (/lessons lists them by id)."""
    wanted = cmd.args.strip()
    item = next((p for key, p in ctx.library.prompts.items() if wanted and key.lower() == wanted.lower()), None)
    if item is None:
        if wanted and ctx.library.lesson(wanted) is None:
            known = (*ctx.library.prompts, *ctx.library.lessons)
            raise StudyError(f"No teach-back prompt or lesson '{wanted[:40]}'{did_you_mean(wanted.lower(), known)}. "
                             "Type /teachback for the next prompt, or /lessons for the lessons.")
        lesson = ctx.lesson(wanted)
        if not lesson.prompts:
            raise StudyError(f"Lesson {lesson.id} has no teach-back prompts yet.")
        attempts = await ctx.store.teachbacks.attempts(cmd.actor)
        item = min(lesson.prompts, key=lambda p: attempts.get(p.id, 0))  # the least practised, in order
    return [await _ask(ctx, cmd.actor, cmd.place, item)]


async def _ask(ctx: Context, actor: Actor, place: Place, item: TeachbackPrompt, before: str | None = None) -> Reply:
    """A teach-back form; with `before`, the one follow-up of a partly right explanation, read with it."""
    prompt = await ctx.store.prompts.new(TEACHBACK, place, actor, lesson_id=item.lesson_id, item_id=item.id,
                                         data={"before": before} if before else None)
    if before:
        return Reply("Add what is missing; it is read together with your explanation.",
                     form=Form(prompt.id, "Add the missing point", f"{item.prompt}\n\nYou wrote: {before}",
                               label="What you add"))
    form = Form(prompt.id, "Teach-back", item.prompt, label="Your explanation")
    return Reply(f"Teach-back ({item.id}): {item.prompt}", form=form)


def _item(ctx: Context, prompt: Prompt) -> TeachbackPrompt:
    item = ctx.library.prompts.get(prompt.item_id or "")
    if item is None:
        raise StudyError("That teach-back prompt was removed from the lesson. Use /teachback for a fresh one.")
    return item


async def _what_next(ctx: Context, actor: Actor, item: TeachbackPrompt) -> str:
    """After a prompt's point: the lesson's next prompt not passed yet, or that none is left."""
    lesson = ctx.library.lessons[item.lesson_id]
    passed = await ctx.store.teachbacks.passed(actor)
    left = [p for p in lesson.prompts if p.id not in passed and p.id != item.id]
    if left:
        return f"Next: /teachback {left[0].id} for another prompt."
    if len(lesson.prompts) == 1:
        return f"That was the only teach-back prompt of {lesson.title}."
    return f"You have now passed all {len(lesson.prompts)} teach-back prompts of {lesson.title}."


async def on_again(ctx: Context, event: ChoiceMade, prompt: Prompt, suffix: str) -> list[Reply]:
    """"Try this one again": the same prompt, in a fresh form; "Add the missing point": a form whose text is
    read with the explanation before it."""
    if suffix != OPEN_FORM:
        raise StudyError("That button is no longer valid. Use /teachback for a fresh prompt.")
    return [await _ask(ctx, event.actor, event.place, _item(ctx, prompt), prompt.data.get("add_to"))]


async def on_text(ctx: Context, event: TextSubmitted, prompt: Prompt) -> list[Reply]:
    item = _item(ctx, prompt)
    before = prompt.data.get("before")
    text = f"{before}\n{event.text}" if before else event.text
    found = grade(item.rubric, text, synonyms=ctx.synonyms(item.lesson_id), prompt=item.prompt)
    if not before and too_short(event.text, found.matched + found.voided, ctx.synonyms(item.lesson_id)):
        raise TextRefused("That is too short to go on, so it is not recorded and the prompt is still open: explain "
                         "it in a sentence or two.")
    passes = found.correct
    attempt = await ctx.store.teachbacks.record(
        event.actor, form=prompt.id, lesson_id=item.lesson_id, prompt_id=item.id, explanation=text,
        covered=found.matched, missed=found.missed, passes=passes, week=ctx.week(event.actor.in_cohort),
        verdict=str(found.verdict),
    )
    if attempt is None:
        return [Reply("You already sent this explanation; it is stored. Use /teachback for another go.")]
    points = attempt.points
    texts = {k.id: k.point for k in item.key_points}
    partly = found.verdict is Verdict.PARTLY
    lines = [("◑ Partly right, no point yet. " if partly else "")
             + f"You covered {len(found.matched)} of {counted(len(texts), 'key point')}"
             + ("." if passes else f"; {item.rubric.needed} earn the point.")]
    lines += [found.reason] if found.reason else []
    lines += [f"✓ {texts[k]}" for k in found.matched]
    lines += [f"✗ missed: {texts[k]}" for k in found.missed]
    if points:
        lines.append(f"That earns 1 point. {await _what_next(ctx, event.actor, item)}")
    elif passes:
        lines.append("Well covered (this prompt's point was earned before).")
    choices: tuple[Choice, ...] = ()
    if not passes:
        again = await ctx.store.prompts.new(TEACHBACK, event.place, event.actor, lesson_id=item.lesson_id,
                                            item_id=item.id)
        graded = GradedText(False, (), matched=tuple(found.matched), missed=tuple(found.missed), outcome=found.verdict)
        offered = await offers(ctx, Answered(replace(event, text=text), Disputed.TEACHBACK, attempt.id, item.lesson_id,
                                             item.id, correct=False, disputable=True, verdict=graded))
        lines += offered.lines
        choices = (*await _add_to(ctx, event, item, text if partly and not before else None),
                   Choice("Try this one again", f"{again.id}.{OPEN_FORM}"), *offered.choices)
    return [Reply("\n".join(lines), choices=choices)]


async def _add_to(ctx: Context, event: TextSubmitted, item: TeachbackPrompt, partly: str | None) -> tuple[Choice, ...]:
    """"Add the missing point" under a partly right explanation, once (not under a follow-up)."""
    if partly is None:
        return ()
    add = await ctx.store.prompts.new(TEACHBACK, event.place, event.actor, lesson_id=item.lesson_id,
                                      item_id=item.id, data={"add_to": partly})
    return (Choice("Add the missing point", f"{add.id}.{OPEN_FORM}"),)


FEATURE = Feature(
    "teachback", commands=(teachback,), choices={TEACHBACK: on_again},
    forms={TEACHBACK: on_text},
)
