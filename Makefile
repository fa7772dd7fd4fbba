# Set-up and entry points. Both `make repl` and `make test` create the virtual
# environment .venv (or reuse it) and install minijax into it, editable, with its
# test extra; the install reruns only when pyproject.toml or this Makefile change.
#
#   make repl                      an interactive minijax shell (python -m minijax repl)
#   make test                      the whole test suite
#   make test ARGS='-k cli -x'     extra pytest arguments
#   make test WORKERS=0            run the tests in this process (no pytest-xdist workers)
#   make repl ARGS=lesson.py       run a script, then stay interactive
#   make clean                     remove .venv and caches
#   make PYTHON=python3.12 test    build .venv from another interpreter (>= 3.11)

PYTHON ?= python3
VENV := .venv
VPY := $(VENV)/bin/python
STAMP := $(VENV)/.minijax-installed
ARGS ?=
# Test processes (pytest-xdist): the suite is bound by XLA compiles of small programs,
# one core each, so two workers on a 2-core machine take a little over half the time.
# Work stealing: a worker that runs out takes tests queued for the other, so a few
# long tests (the 8-device subprocesses, the big gradient checks) do not leave one
# worker running alone at the end.
WORKERS ?= 2

.DEFAULT_GOAL := help
.PHONY: help install test repl clean

help:
	@echo "make repl   start the minijax REPL (creates .venv on first use)"
	@echo "make test   run the test suite (creates .venv on first use)"
	@echo "make clean  remove .venv and caches"

install: $(STAMP)

$(STAMP): pyproject.toml Makefile
	@if [ ! -x $(VPY) ]; then \
	  $(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11))' || \
	    { echo "'$(PYTHON)' is not a working Python >= 3.11; name one: make PYTHON=python3.12 $(MAKECMDGOALS)" >&2; exit 1; }; \
	  echo "Creating $(VENV) with $$($(PYTHON) --version)"; \
	  $(PYTHON) -m venv $(VENV); \
	fi
	@echo "Installing minijax and its dependencies into $(VENV)"
	@$(VPY) -m pip install --quiet --disable-pip-version-check -e '.[test]'
	@touch $@

# compileall first: the suite starts many Python subprocesses, each importing minijax,
# and where PYTHONDONTWRITEBYTECODE is set each would compile all of minijax's
# sources again (about 0.5 s of CPU; benchmarks/import_time.py).
test: $(STAMP)
	@$(VPY) -m compileall -q minijax
	$(VPY) -m pytest -q -p no:cacheprovider -n $(WORKERS) $(if $(filter 0,$(WORKERS)),,--dist worksteal) $(ARGS)

repl: $(STAMP)
	@$(VPY) -m minijax repl $(ARGS)

clean:
	rm -rf $(VENV) build dist *.egg-info .pytest_cache .hypothesis
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
