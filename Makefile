# The two commands of the README. Each creates its own virtual environment (.venv) from nothing but
# Python and pip when it is missing or older than pyproject.toml.
#   make test   package tests + the smoke tier of every chapter (papermill, then nbval)
#   make book   execute every chapter at book scale on the executor's local Dask cluster (one worker
#               process per core), then the scorecard, build the site from the executed notebooks (-W),
#               check the built site
PYTHON ?= python3
VENV ?= .venv
BIN := $(abspath $(VENV))/bin
export PATH := $(BIN):$(PATH)
export PYDEVD_DISABLE_FILE_VALIDATION := 1
# the kernels started by papermill, nbval and myst-nb use this environment's python
export JUPYTER_PATH := $(abspath $(VENV))/share/jupyter

# the clean steps of test-smoke and book: `rm -rf`, except that a path whose folder leads through a symlink out of
# the repository (a linked artifacts/ or artifacts/runs/, which `rm -rf artifacts/runs/book` follows) is refused in
# one line and nothing is removed; a link at the path itself is removed, never what it points to (run by its path:
# importing the package would import torch, seconds for a clean step)
CLEAN = $(BIN)/python lib/shallowflow/outputs.py remove --inside "$(CURDIR)"

.PHONY: setup test test-package test-smoke book site-check bench budget clean

$(VENV)/.ready: pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --upgrade --quiet pip
	$(BIN)/python -m pip install --quiet -e ".[book,test]"
	touch $@

setup: $(VENV)/.ready

test: test-package test-smoke

# the package tests run on JOBS workers (pytest-xdist; work stealing evens out the few long executor and
# CLI tests: 88 s against 105-113 s with the default distribution on 2 cores); the chapters run in
# test-smoke, through the executor
test-package: setup
	$(BIN)/python -m pytest tests --ignore=tests/site -q -n $(JOBS) --dist worksteal

# smoke tier: every chapter executed by the executor with params/smoke (verdicts compared with the
# registry; one Dask worker process per core, or WORKERS of them), then the scorecard, then every
# notebook re-executed by nbval, which compares the cells tagged nbval-check-output (JOBS workers;
# nbval keeps each notebook's cells on one worker with --dist loadscope).
JOBS ?= auto
WORKERS ?=
QUIET := $(if $(CI),--quiet,)
test-smoke: setup
	$(CLEAN) artifacts/runs/smoke artifacts/claims/smoke
	$(BIN)/shallowflow run --all --profile smoke --no-site $(QUIET) $(if $(WORKERS),--workers $(WORKERS),)
	$(BIN)/python -m pytest -q -p no:cacheprovider -p tests.nbval_kernel_retry -n $(JOBS) --dist loadscope --nbval-lax --nbval-current-env \
		--nbval-sanitize-with tests/nbval_sanitize.cfg artifacts/runs/smoke

# book: every number recomputed at every build (no notebook, record or page of an earlier build is
# kept).  `shallowflow run --all` executes the chapters, then the scorecard, writes the build report,
# then runs `jupyter-book build . -W --keep-going` with execution off on the executed notebooks.
book: setup
	$(CLEAN) artifacts/claims/book artifacts/runs/book _build
	$(BIN)/shallowflow run --all --profile book $(QUIET) $(if $(WORKERS),--workers $(WORKERS),)
	$(MAKE) site-check

# without chromium the browser check is skipped with one line saying so (-rs); with CI=true it is mandatory.
# JOBS workers (pytest-xdist, work stealing): each worker has its own chromium (one per worker, tests/site/conftest.py)
# and every test its own browser context and tmp_path; pages are read as file:// URLs, no port is bound
site-check: setup
	$(BIN)/python -m pytest tests/site -q -rs -n $(JOBS) --dist worksteal

bench: setup
	$(BIN)/python benchmarks/run.py

budget: setup
	$(BIN)/python benchmarks/book_budget.py

clean:
	rm -rf _build artifacts
