# Every target sets up its own virtual environment first, so each works on a fresh clone.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
# Two stamps: the app needs only dpcore and its runtime dependencies; the test tools (pytest,
# playwright, hypothesis, dask, ruff, …) come with the first target that needs them.
STAMP := $(VENV)/.installed
TEST_STAMP := $(VENV)/.installed-test
PORT ?= 8501
# 127.0.0.1 serves this machine only; HOST=0.0.0.0 serves every network interface.
HOST ?= 127.0.0.1
PROBE_HOST := $(if $(filter 0.0.0.0 ::,$(HOST)),127.0.0.1,$(HOST))
URL_HOST := $(if $(filter 127.0.0.1 0.0.0.0 ::,$(HOST)),localhost,$(HOST))

.PHONY: app test test-quick acceptance lint bench reproduce reproduce-quick mutate clean

$(STAMP): pyproject.toml setup.py
	@echo "[1/3] creating the virtual environment in $(VENV) …"
	@$(PY) -m venv $(VENV)
	@echo "[2/3] upgrading pip …"
	@$(BIN)/python -m pip install --quiet --upgrade pip
	@echo "[3/3] installing dpcore and its dependencies (numpy, scipy, scikit-learn, streamlit,"
	@echo "      plotly, …; a few minutes on a fresh machine, progress below) …"
	@$(BIN)/python -m pip install --progress-bar on -e . 2>&1 | \
		grep --line-buffered -E "^(Collecting|Installing|Successfully|ERROR)" || \
		{ echo "installation failed: run '$(BIN)/python -m pip install -e .' to see why"; \
		  exit 1; }
	@$(BIN)/python -c "import dpcore, streamlit" || { echo "installation incomplete"; exit 1; }
	@touch $(STAMP)
	@echo "environment ready."

$(TEST_STAMP): $(STAMP)
	@echo "installing the test tools (pytest, hypothesis, playwright, dask, ruff, …) …"
	@$(BIN)/python -m pip install --progress-bar on -e ".[test]" 2>&1 | \
		grep --line-buffered -E "^(Collecting|Installing|Successfully|ERROR)" || \
		{ echo "installation failed: run '$(BIN)/python -m pip install -e .[test]' to see why"; \
		  exit 1; }
	@$(BIN)/python -c "import pytest, xdist, hypothesis" || { echo "installation incomplete"; \
		exit 1; }
	@touch $(TEST_STAMP)
	@echo "test tools ready."

## Start the dashboard on the bundled sample data and print its URL once it answers.
## It serves this machine only (HOST=127.0.0.1); `make app HOST=0.0.0.0` serves the network.
app: $(STAMP)
	@echo "starting the dpcore dashboard on $(HOST), port $(PORT) …"
	@( for i in $$(seq 1 120); do \
		if $(BIN)/python -c "import urllib.request as u; \
			u.urlopen('http://$(PROBE_HOST):$(PORT)/_stcore/health', timeout=1)" 2>/dev/null; then \
			echo ""; echo "  dpcore dashboard ready: http://$(URL_HOST):$(PORT)"; echo ""; exit 0; fi; \
		sleep 1; done; echo "the dashboard did not answer within 2 minutes" ) &
	$(BIN)/python -m dpcore app --host $(HOST) --port $(PORT)

## The whole test suite (unit, statistical, audits, reproduction, AppTest, real browser).
test: $(TEST_STAMP)
	@echo "running the whole test suite: about 15 minutes on 2 cores (longer when busy) …"
	$(BIN)/python -m pytest -n 2 --dist loadgroup --durations=20

## Long acceptance sweeps (e.g. 1,000 seeded max-cover fits per data set: ~36 min on 2 cores).
acceptance: $(TEST_STAMP)
	DPCORE_ACCEPTANCE=1 $(BIN)/python -m pytest -n 2 -m acceptance

## Quick subset while working: no slow, data or browser tests.
test-quick: $(TEST_STAMP)
	$(BIN)/python -m pytest -q -n 2 --dist loadgroup -m "not slow and not e2e and not data"

## Mutation score of the privacy-critical modules (tools/mutate.py, mutmut 3): each module is
## mutated alone and tested with its covering test files only, one mutant at a time, niced.
## Prints the score per module and every survivor; details in .mutate/report.json, the review
## in docs/testing.md. `make mutate MUTATE="guarantees door"` runs some modules only.
## The review's 18 known mutants have a quicker guard: tools/mutant_guard.py (tests/
## test_mutant_guard.py, slow).
mutate: $(TEST_STAMP)
	$(BIN)/python tools/mutate.py $(MUTATE)

lint: $(TEST_STAMP)
	$(BIN)/ruff check dpcore pages app.py tests benchmarks
	$(BIN)/lint-imports

bench: $(TEST_STAMP)
	for f in benchmarks/bench_*.py; do \
		case $$f in *bench_scale.py) args="--rows 1000000";; *) args="";; esac; \
		$(BIN)/python $$f $$args || exit 1; done

## Regenerate the four reports in docs/reproduction at the papers' repetition counts (50 for
## importance Figs. 3/4 and FriendlyCore Fig. 5, 30 for FriendlyCore Figs. 6-7, 5 for max-cover).
## Measured on this 2-core machine (1-min load 1 to 20 while six others worked): importance
## Covertype 108 s per 4 repetitions at load ~1; CPU time ~4 min per 10 repetitions of its 104
## cells (50 reps ~20 min of one idle core; 30 added reps took 61 min niced at load 6-16), gas
## 50 reps ~7 min, MNIST ~6 min of CPU per 10 repetitions (50 reps ~30 min of one idle core;
## 10 took 55 min niced at load 10-16); FriendlyCore Fig. 5 ~3 min idle, Figs. 6-7 ~1 h;
## max-cover ~50 min; sensitivity ~8 min idle (24 min at load 16). About 3.5 h idle, far longer
## under load. Runs are saved per repetition: `python -m dpcore.reproduce.importance --from-runs
## docs/reproduction/figures --top-up` (friendlycore: --from-raw ... --top-up) adds missing ones.
## `make reproduce-quick` writes small versions to a scratch folder, not to the reports.
reproduce: $(STAMP)
	OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 $(BIN)/python -m dpcore.cli reproduce all

reproduce-quick: $(STAMP)
	$(BIN)/python -m dpcore.cli reproduce all --quick

clean:
	rm -rf $(VENV) .pytest_cache
