# Convenience targets; the README's two commands are the source of truth for setup.
PY ?= python3
VENV ?= .venv
BIN = $(VENV)/bin

$(BIN)/kserve-compile: pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[dev]'
	touch $@

.PHONY: setup test demo golden bench-render bench-serve
setup: $(BIN)/kserve-compile

test: setup
	$(BIN)/python -m pytest

demo: setup
	$(BIN)/kserve-compile render examples/sklearn-iris.yaml

# Regenerate golden/*/expected.yaml after a reviewed change in behaviour (then read the diff!).
golden: setup
	$(BIN)/python scripts/regen_golden.py

bench-render: setup
	$(BIN)/python bench/render_bench.py

bench-serve: setup
	$(BIN)/python bench/serve_bench.py
