# The two commands of the README. Each creates its own virtual environment (.venv) from nothing but
# Python and pip when it is missing or older than pyproject.toml.
#   make test   package tests + the smoke tier of every chapter (papermill, then nbval)
#   make book   execute every chapter at book scale, build the site (-W), check the built site
PYTHON ?= python3
VENV ?= .venv
BIN := $(abspath $(VENV))/bin
export PATH := $(BIN):$(PATH)
export PYDEVD_DISABLE_FILE_VALIDATION := 1
# the kernels started by papermill, nbval and myst-nb use this environment's python
export JUPYTER_PATH := $(abspath $(VENV))/share/jupyter

.PHONY: setup test test-package test-smoke book site-check bench budget clean

$(VENV)/.ready: pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --upgrade --quiet pip
	$(BIN)/python -m pip install --quiet -e ".[book,test]"
	touch $@

setup: $(VENV)/.ready

test: test-package test-smoke

test-package: setup
	$(BIN)/python -m pytest tests --ignore=tests/site -q -m "not notebooks and not scorecard"

# smoke tier: every chapter executed by papermill with params/smoke (verdicts compared with the
# registry), then the scorecard, then every notebook re-executed by nbval, which compares the cells
# tagged nbval-check-output.  Chapters are independent and single-threaded: JOBS of them run at once
# (nbval keeps each notebook's cells on one worker with --dist loadscope).
JOBS ?= auto
test-smoke: setup
	rm -rf artifacts/runs/smoke artifacts/claims/smoke
	$(BIN)/python -m pytest tests -q -m notebooks -n $(JOBS)
	$(BIN)/python -m pytest tests -q -m scorecard
	$(BIN)/python -m pytest -q -p no:cacheprovider -n $(JOBS) --dist loadscope --nbval-lax --nbval-current-env \
		--nbval-sanitize-with tests/nbval_sanitize.cfg artifacts/runs/smoke

book: setup
	# a clean build: Sphinx would otherwise re-read (and re-execute) only the changed pages
	rm -rf artifacts/claims/book _build
	$(BIN)/jupyter-book build . -W --keep-going
	$(MAKE) site-check

site-check: setup
	$(BIN)/python -m pytest tests/site -q

bench: setup
	$(BIN)/python benchmarks/run.py

budget: setup
	$(BIN)/python benchmarks/book_budget.py

clean:
	rm -rf _build artifacts
