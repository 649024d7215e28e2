# `make test` is the command the README and CI run: it installs everything, then lints and tests.
VENV ?= .venv
PY := $(VENV)/bin/python

.PHONY: install install-gpu lint test bench

install:
	scripts/install.sh

install-gpu:
	scripts/install.sh --gpu

lint: install
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .

test: lint
	$(PY) -m pytest

bench: install
	$(PY) benchmarks/bench_core.py
	@for b in benchmarks/bench_data.py benchmarks/bench_grading.py benchmarks/bench_inspect.py benchmarks/bench_eval.py; do \
		[ ! -f $$b ] || $(PY) $$b; done
