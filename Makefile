# The README's two commands, `make demo` and `make test`, must work on a fresh machine:
# every target creates .venv and installs what it needs when it is missing or stale.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-dev
BENCH_STAMP := $(VENV)/.installed-bench

.PHONY: demo test lint bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $@

$(BENCH_STAMP): pyproject.toml $(STAMP)
	$(BIN)/python -m pip install --quiet -e '.[dev,bench]'
	touch $@

demo: $(STAMP)
	$(BIN)/python -m runner.demo

test: $(STAMP) browser
	$(BIN)/runner validate pipelines/
	$(BIN)/runner test pipelines/
	$(BIN)/python -m pytest

lint: $(STAMP)
	$(BIN)/ruff check runner tests bench
	$(BIN)/ruff format --check runner tests bench

bench: $(BENCH_STAMP)
	$(BIN)/python -m bench

# The playground's browser tests drive Debian's chromium through selenium; installed when
# missing (CI runs as root on Debian).
.PHONY: browser
browser:
	@if [ ! -x /usr/bin/chromium ] || [ ! -x /usr/bin/chromedriver ]; then \
		apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y chromium chromium-driver; \
	fi

clean:
	rm -rf $(VENV) build dist .pytest_cache
