# The two commands of the README: `make demo` (the main job) and `make test`.
# Both create .venv and install requirements.lock on first use; later runs reuse it.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.ocg-installed
KERNEL := ocg

.PHONY: demo test install kernel clean-outputs

demo: $(STAMP)
	$(VENV)/bin/ocg demo

test: $(STAMP)
	$(VENV)/bin/ruff check ocg tests benchmarks
	$(PY) -m pytest $(PYTEST_ARGS)

install: $(STAMP)

# Re-installs only when the lock or the package metadata changes.
$(STAMP): requirements.lock pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade "pip>=24"
	$(PY) -m pip install --quiet --no-deps -r requirements.lock
	$(PY) -m pip install --quiet --no-deps --no-build-isolation -e .
	$(PY) -m ipykernel install --sys-prefix --name $(KERNEL) --display-name "Python (ocg)" >/dev/null
	touch $(STAMP)

# Make the `ocg` kernel visible to a Jupyter outside .venv (writes to ~/.local/share/jupyter).
kernel: $(STAMP)
	$(PY) -m ipykernel install --user --name $(KERNEL) --display-name "Python (ocg)"

clean-outputs:
	find outputs -mindepth 1 ! -name README.md -exec rm -rf {} +
