"""One answer read by the second reader, from the redacted text to the verified claims, counted in the
metrics (calls, failures by reason, tokens, time, dropped spans); shared by the feature and
`benchmarks/bench_reader.py`, so that what is measured is what learners see."""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass

from bot.core.config import ReaderSettings
from bot.features.reader import metrics
from bot.features.reader.client import ReaderFailed, complete
from bot.features.reader.reading import Claim, Unreadable, messages, parse, verified
from bot.features.reader.redaction import redact


@dataclass(frozen=True)
class Consulted:
    """What the reader said of one answer: its verified claims, or why there are none to show."""

    claims: tuple[Claim, ...] = ()
    dropped: int = 0  # claims whose words were not the answer's (or not about the subject)
    failure: str | None = None  # timeout, unreachable, unreadable, http 500…; None: it answered
    seconds: float = 0.0
    tokens: int = 0  # prompt and completion, as the endpoint reported them


async def consult(settings: ReaderSettings, question: str, points: Mapping[str, str], answer: str) -> Consulted:
    """Ask the reader which key points `answer` states (redacted before it leaves) and keep the verified ones."""
    text = redact(answer, settings.redact)
    metrics.CALLS.inc()
    started = time.perf_counter()
    try:
        completion = await complete(settings, messages(question, points, text))
    except ReaderFailed as exc:
        return _failed(exc.reason, started)
    metrics.TOKENS.labels("prompt").inc(completion.prompt_tokens)
    metrics.TOKENS.labels("completion").inc(completion.completion_tokens)
    tokens = completion.prompt_tokens + completion.completion_tokens
    try:
        claims = parse(completion.content, points)
    except Unreadable:
        return _failed("unreadable", started, tokens)
    kept, dropped = verified(claims, text, question)
    metrics.DROPPED.inc(dropped)
    seconds = time.perf_counter() - started
    metrics.SECONDS.observe(seconds)
    return Consulted(tuple(kept), dropped, None, seconds, tokens)


def _failed(reason: str, started: float, tokens: int = 0) -> Consulted:
    seconds = time.perf_counter() - started
    metrics.FAILURES.labels(reason).inc()
    metrics.SECONDS.observe(seconds)
    return Consulted(failure=reason, seconds=seconds, tokens=tokens)
