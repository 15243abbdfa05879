# Two commands for a newcomer: `make run` and `make test`. Both (re)build .venv
# whenever pyproject.toml is newer than the last install.
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
PYTHON ?= python3

.PHONY: run test bench bench-grading console validate render reliability-doc clean

# The grading benchmark reads the UNT short-answer dataset from STUDYBOT_UNT_DATA; when it is unset, the
# benchmark targets use a copy beside this checkout if there is one (the data is never kept in the repo).
UNT_DATA := ../shared/data/unt-short-answer-v2
ifeq ($(origin STUDYBOT_UNT_DATA),undefined)
ifneq ($(wildcard $(UNT_DATA)/docs/files),)
bench bench-grading: export STUDYBOT_UNT_DATA := $(UNT_DATA)
endif
endif

$(STAMP): pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test]'
	@touch $(STAMP)

run: $(STAMP)
	@if [ -n "$$SLACK_BOT_TOKEN$$DISCORD_TOKEN" ]; then \
		exec $(VENV)/bin/studybot run; \
	else \
		echo "No SLACK_BOT_TOKEN or DISCORD_TOKEN set: starting the console chat on the bundled lesson."; \
		exec $(VENV)/bin/studybot console; \
	fi

test: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/mypy
	$(PY) -m pytest

bench: $(STAMP)
	$(PY) -m benchmarks

bench-grading: $(STAMP)
	$(PY) -m benchmarks.bench_grading

console: $(STAMP)
	$(VENV)/bin/studybot console

validate: $(STAMP)
	$(VENV)/bin/studybot validate

render: $(STAMP)
	$(VENV)/bin/studybot render

reliability-doc: $(STAMP)
	STUDYBOT_WRITE_DOCS=1 $(PY) -m pytest -q tests/reliability/test_reliability_doc.py

clean:
	rm -rf $(VENV)
