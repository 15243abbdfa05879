# studybot: one process for every configured platform. Build with `docker compose build`.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    STUDYBOT_CONTENT=/app/content \
    STUDYBOT_DB=/app/data/studybot.db \
    STUDYBOT_RESULTS_DIR=/app/data/results

WORKDIR /app
# pg_dump and pg_restore, for `studybot backup` and `studybot restore` on PostgreSQL.
RUN apt-get update \
    && apt-get install -y --no-install-recommends postgresql-client \
    && rm -rf /var/lib/apt/lists/*
# Exact versions from the lock file (`make lock` writes it from pyproject.toml), build tool included.
COPY requirements.lock ./
RUN pip install --no-deps -r requirements.lock
COPY pyproject.toml README.md LICENSE ./
COPY bot ./bot
COPY adapters ./adapters
RUN pip install --no-deps --no-build-isolation . && pip check
COPY content ./content

# A non-root user that owns the data folder (the named volume mounts here); the rest of the
# file system is read-only at run time (docker-compose.yml: read_only, tmpfs /tmp).
RUN useradd --create-home --uid 10001 studybot \
    && mkdir -p /app/data /app/config \
    && chown studybot:studybot /app/data
USER studybot

EXPOSE 3000
CMD ["studybot", "run"]
