# studybot: one process for every configured platform. Build with `docker compose build`.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    STUDYBOT_CONTENT=/app/content \
    STUDYBOT_DB=/app/data/studybot.db \
    STUDYBOT_RESULTS_DIR=/app/data/results

WORKDIR /app
COPY pyproject.toml README.md ./
COPY bot ./bot
COPY adapters ./adapters
RUN pip install .
COPY content ./content

# A non-root user that owns the data folder (the named volume mounts here).
RUN useradd --create-home --uid 10001 studybot \
    && mkdir -p /app/data \
    && chown studybot:studybot /app/data
USER studybot

EXPOSE 3000
CMD ["studybot", "run"]
