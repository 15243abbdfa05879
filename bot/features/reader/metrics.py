"""The second reader's metrics: calls, failures by reason, tokens and time; never an answer's text.
Made without a registry: `bot.runtime.metrics` registers them in studybot's own."""

from __future__ import annotations

from prometheus_client import Counter, Histogram

CALLS = Counter("studybot_reader_calls", "Calls to the second reader's endpoint", registry=None)
FAILURES = Counter("studybot_reader_failures", "Calls that gave nothing to show, by reason (timeout, unreadable…)",
                   ("reason",), registry=None)
TOKENS = Counter("studybot_reader_tokens", "Tokens the endpoint reported, prompt and completion", ("kind",),
                 registry=None)
SECONDS = Histogram("studybot_reader_seconds", "Time of one call to the second reader",
                    buckets=(0.1, 0.25, 0.5, 1, 2, 3, 5, 10, 30), registry=None)
SKIPPED = Counter("studybot_reader_capped", "Answers not sent because a daily cap was reached", registry=None)
DROPPED = Counter("studybot_reader_spans_dropped", "Quoted spans dropped: not verbatim in the answer, or not about it",
                  registry=None)
COLLECTORS = (CALLS, FAILURES, TOKENS, SECONDS, SKIPPED, DROPPED)
