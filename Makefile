# Two commands for a newcomer: `make run` and `make test`. Both (re)build .venv whenever
# pyproject.toml or requirements.lock is newer than the last install; the versions the lock
# names are the ones installed (the Docker image installs exactly the lock).
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
PYTHON ?= python3
LOCK   := requirements.lock

.PHONY: run test bench bench-grading console validate render reliability-doc lock clean \
	messages-extract messages-update messages-compile

# The grading benchmark reads the UNT short-answer dataset from STUDYBOT_UNT_DATA; when it is unset, the
# benchmark targets use a copy beside this checkout if there is one (the data is never kept in the repo).
UNT_DATA := ../shared/data/unt-short-answer-v2
ifeq ($(origin STUDYBOT_UNT_DATA),undefined)
ifneq ($(wildcard $(UNT_DATA)/docs/files),)
bench bench-grading: export STUDYBOT_UNT_DATA := $(UNT_DATA)
endif
endif

# The import benchmark also reads every published question bank in STUDYBOT_QUESTION_BANKS, set from a copy
# beside this checkout when there is one (the files are never kept in the repo).
QUESTION_BANKS := ../shared/data/question-banks
ifeq ($(origin STUDYBOT_QUESTION_BANKS),undefined)
ifneq ($(wildcard $(QUESTION_BANKS)/README.md),)
bench: export STUDYBOT_QUESTION_BANKS := $(abspath $(QUESTION_BANKS))
endif
endif

# The scale benchmark's PostgreSQL rows use STUDYBOT_TEST_DATABASE_URL (as the tests do); when it is unset,
# a server answering on 127.0.0.1:5432 is used if there is one (otherwise those rows say they were skipped).
ifeq ($(origin STUDYBOT_TEST_DATABASE_URL),undefined)
ifeq ($(shell pg_isready -q -h 127.0.0.1 2>/dev/null && echo up),up)
bench: export STUDYBOT_TEST_DATABASE_URL := postgresql://postgres@127.0.0.1:5432/postgres
endif
endif

$(STAMP): pyproject.toml $(LOCK)
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -c $(LOCK) -e '.[test]'
	@touch $(STAMP)

# Every platform whose token is set (in the environment or .env), else the console chat.
run: $(STAMP)
	@exec $(VENV)/bin/studybot run --or-console

test: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/mypy
	$(PY) -m pytest -n auto

bench: $(STAMP)
	$(PY) -m benchmarks

bench-grading: $(STAMP)
	$(PY) -m benchmarks.bench_grading
	$(PY) -m benchmarks.bench_lesson
	$(PY) -m benchmarks.bench_reader

console: $(STAMP)
	$(VENV)/bin/studybot console

validate: $(STAMP)
	$(VENV)/bin/studybot validate

render: $(STAMP)
	$(VENV)/bin/studybot render

reliability-doc: $(STAMP)
	STUDYBOT_WRITE_DOCS=1 $(PY) -m pytest -q tests/reliability/test_reliability_doc.py

# Rewrite requirements.lock from pyproject.toml (exact versions from the package index; run it
# after changing the dependencies, and commit both).
lock:
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet 'pip-tools>=7,<8'
	$(VENV)/bin/pip-compile --quiet --strip-extras --build-deps-for=wheel --no-emit-index-url \
		--no-emit-find-links --output-file $(LOCK) pyproject.toml

# The interface's translations (README, "Languages"): extract the messages into the template, merge the
# template into every language's catalogue, then translate the new entries and run messages-compile,
# which checks each catalogue compiles and counts what is translated (the bot reads the .po files).
LOCALES  := bot/locales
KEYWORDS := -k _ -k gettext -k ngettext:1,2 -k pgettext:1c,2 -k N_
messages-extract: $(STAMP)
	$(VENV)/bin/pybabel -q extract -F babel.cfg $(KEYWORDS) --no-location --sort-output \
		--project studybot -o $(LOCALES)/studybot.pot .

messages-update: messages-extract
	$(VENV)/bin/pybabel -q update -i $(LOCALES)/studybot.pot -d $(LOCALES) -D studybot \
		--no-fuzzy-matching

messages-compile: $(STAMP)
	$(VENV)/bin/pybabel compile -d $(LOCALES) -D studybot --statistics

clean:
	rm -rf $(VENV)
