# `make test` is the command the README and CI run: it installs everything, then lints and tests.
VENV ?= .venv
PY := $(VENV)/bin/python

.PHONY: install install-gpu lint test test-fast bench

install:
	scripts/install.sh

install-gpu:
	scripts/install.sh --gpu

lint: install
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .

# Spread over the machine's cores, test by test (pytest-xdist).
test: lint
	$(PY) -m pytest -n auto --dist load --durations=25

# For iterating: the tests not marked slow (no Ray, no child processes, no browser), without lint, spread
# over the machine's cores (pytest-xdist; a module's tests stay on one worker, which shares its fixtures).
test-fast: install
	$(PY) -m pytest -m "not slow" -n auto --dist loadscope

# Every benchmark script; bench_learning.py trains 12 tiny runs on the CPU (about 22 minutes on 2 cores),
# bench_ablations.py the long-horizon ablation (at most 150 minutes on 2 cores).
BENCHES := core data grading grading_degenerate inspect eval rollout tasks offline learning ablations

bench: install
	@for b in $(BENCHES); do echo "== benchmarks/bench_$$b.py"; $(PY) benchmarks/bench_$$b.py || exit 1; done
