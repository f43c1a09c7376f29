# The two commands a new user needs: `make demo` and `make test`.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
# The demo library is the CLI's default library (./paperatlas.db), so after `make demo` a plain
# `.venv/bin/paperatlas search ...` in this folder finds the demo papers. Override: make demo DB=x.db PORT=8001
DB ?= paperatlas.db
PORT ?= 8000
TEST_WORKERS ?= 2

.PHONY: demo test install install-test lint bench bench-llm clean settings-docs llm

# setuptools' note on every editable install ("be careful with folders ... with the same name as your
# package") reads like a failure in the first minute of `make demo`; only that module's notes are silenced
EDITABLE := PYTHONWARNINGS=ignore::UserWarning:setuptools.command.editable_wheel

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

install: $(BIN)/python
	$(EDITABLE) $(BIN)/pip install --quiet -c constraints.txt -e .

install-test: $(BIN)/python
	@# the laboratory (`paperatlas bench`, `paperatlas eval`; lab/) beside the product, never inside its wheel
	$(EDITABLE) $(BIN)/pip install --quiet -c constraints.txt -e '.[test,scale]' -e ./lab
	@# the local model server of the LLM tests, from the wheel cache (.ci/install-llm builds it once, ~4 min;
	@# .ci/run does); without it those tests skip
	PY=$(PY) ./.ci/install-llm --if-cached || echo "warning: no local LLM server (.ci/install-llm failed): the LLM tests will skip"

## make bench-llm: the quality figures of the LLM layer with the 1.5B Qwen model (slow: minutes, under nice)
bench-llm: install-test
	PY=$(PY) ./.ci/install-llm --qwen
	nice -n 19 $(BIN)/paperatlas bench llm

## make llm: a local model for ask, TL;DRs and translations, once: llama.cpp's server built into .venv-llm
## (about 4 min on 2 quiet cores) and the 1.5B Qwen2.5-Coder instruct model (1.1 GB download, every part
## pinned by hash); then it prints the two commands that start the server and point paperatlas at it
llm:
	PY=$(PY) ./.ci/install-llm --qwen
	@echo "start the model server (leave it running):"
	@echo "  .venv-llm/bin/python -m llama_cpp.server --model $${PAPERATLAS_CACHE:-$$HOME/.cache/paperatlas}/models/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf --model_alias qwen2.5-coder-1.5b-instruct --n_ctx 4096 --port 8080"
	@echo "then, in the shell that runs paperatlas:"
	@echo "  export PAPERATLAS_LLM_URL=http://127.0.0.1:8080/v1"

## make demo: install, ingest the bundled example lists, build their topics, show them, then serve them
demo: install
	$(BIN)/paperatlas --db $(DB) ingest examples/*.txt
	$(BIN)/paperatlas --db $(DB) embed --multilingual  # Chinese queries work from the start (seconds for the demo)
	$(BIN)/paperatlas --db $(DB) topics build
	$(BIN)/paperatlas --db $(DB) stats
	$(BIN)/paperatlas --db $(DB) list --limit 30
	PAPERATLAS_PORT_HINT='make demo PORT={port}' $(BIN)/paperatlas --db $(DB) serve --host 127.0.0.1 --port $(PORT)

## make lint: ruff check and ruff format --check (rules in pyproject.toml), the import-layer contract: surfaces -> Library ->
## capabilities -> core/store/models, nothing below imports upward, the product never imports the lab (tests/test_layers.py),
## and mypy over paperatlas/ and lab/paperatlas_lab/
## with no error beyond .mypy-baseline.txt (.ci/mypy-baseline; the baseline may only shrink)
lint: install-test
	$(BIN)/ruff check paperatlas lab tests benchmarks
	$(BIN)/ruff format --check paperatlas lab tests benchmarks
	$(BIN)/python -m pytest -q -p no:cacheprovider tests/test_layers.py
	$(BIN)/python .ci/mypy-baseline

## make test: install with test extras and run the default test suite
## TEST_WORKERS=1 runs it in one process. A file's tests share one worker (--dist loadfile), so a module's
## real servers and libraries are built once
test: install-test
	$(BIN)/python -m pytest -q -n $(TEST_WORKERS) --dist loadfile --durations=15; rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "pytest collected no tests: failing loudly"; exit 1; fi; exit $$rc

## make settings-docs: write docs/settings.md from the settings table (paperatlas/settings.py)
settings-docs: install
	$(BIN)/python -c "from paperatlas.settings import write_docs; write_docs()"

# the library file is kept: after the demo it may hold your own papers and likes (delete it yourself)
clean:
	rm -rf $(VENV) build *.egg-info lab/build lab/*.egg-info
