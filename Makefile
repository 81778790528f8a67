# The two commands of the README: `make demo` (the main job) and `make test`.
# Both create .venv and install requirements.lock on first use; later runs reuse it.
# The default stack is transformers 5 (requirements.lock). `make test-tf4`: the second stack
# (requirements-tf4.lock, transformers 4.57) in .venv-tf4, and the tests of the paths that depend
# on transformers (docs/developing.md, "Two stacks").
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.ocg-installed
KERNEL := ocg

# The second stack: the tests of what touches transformers (generation and its config, the embedded
# model's conversion, chat templates, `transformers serve`, models-file checks, scoring with the
# embedded model and tiny BLEURT, hub revisions, the build notebook on this venv's kernel), less
# those that only re-test ocg's process handling (kill/resume, a second writer, a sweep through a
# server) or its determinism (two runs, identical records); perplexity (lmppl, the paper's tool,
# beside ocg's own), pBLEURT compared with .venv's transformers 5 (OCG_CROSS_STACK_PYTHON), and the
# GPU check on the CPU: the test files marked `tf4` (pyproject.toml). OCG_EXPECT_TRANSFORMERS makes the session refuse another major version and
# fail on any skipped test (tests/conftest.py).
VENV4 := .venv-tf4
PY4 := $(VENV4)/bin/python
STAMP4 := $(VENV4)/.ocg-installed
TF4_DESELECT := not test_kill_and_resume_equals_uninterrupted and not test_a_second_writer_is_refused_at_once \
	and not test_a_server_killed_mid_run_then_a_resume and not test_server_backed_sweep_runs_locally \
	and not test_two_runs_give_identical_records

.PHONY: smoke demo lab test test-tf4 install install-tf4 kernel clean-outputs

# `make test` and `make test-tf4` run in two tiers: the tests not marked slow in PYTEST_WORKERS
# processes (pytest-xdist; single-threaded Python mostly: 1 min 54 s instead of 3 min 33 s on 2 cores),
# then the slow ones in one process (they load torch models that take every core: run side by side
# they only fight over them, measured slower). PYTEST_WORKERS=0 runs the first tier in one process too
# (e.g. for --pdb). A tier PYTEST_ARGS leaves empty (pytest's exit 5) is not a failure unless both are.
PYTEST_WORKERS ?= 2
# $(3): a marker expression the tiers narrow further (e.g. "tf4 and ").
define two_tiers
	fast=0; $(1) -m pytest -m "$(3)not slow" -n $(PYTEST_WORKERS) --dist loadgroup $(2) || fast=$$?; \
	[ $$fast -eq 0 ] || [ $$fast -eq 5 ] || exit $$fast; \
	slow=0; $(1) -m pytest -m "$(3)slow" $(2) || slow=$$?; \
	[ $$slow -eq 0 ] || { [ $$slow -eq 5 ] && [ $$fast -eq 0 ]; } || exit $$slow; \
	[ $$fast -eq 0 ] || [ $$slow -eq 0 ]
endef

# The first thing to try: every notebook and the pages on 4 answers (params/runs/smoke.yaml)
smoke: $(STAMP)
	$(VENV)/bin/ocg report params/runs/smoke.yaml

demo: $(STAMP)
	$(VENV)/bin/ocg demo

# JupyterLab for the notebooks: 127.0.0.1 only, a token, the `Python (ocg)` kernel, the project as
# its root (ocg/jobs/lab.py; docs/user-guide.md, "JupyterLab"). OCG_LAB_PORT and OCG_LAB_TOKEN choose.
lab: $(STAMP)
	$(PY) -m ocg.jobs.lab

# What mypy checks ([tool.mypy] in pyproject.toml: Python 3.10, pydantic's plugin): all of ocg and
# the benchmark scripts.
MYPY_PATHS := ocg benchmarks

test: $(STAMP)
	$(VENV)/bin/ruff check ocg tests benchmarks
	$(VENV)/bin/ruff format --check ocg tests benchmarks
	$(VENV)/bin/mypy $(MYPY_PATHS)
	$(call two_tiers,$(PY),$(PYTEST_ARGS))

# The fast tier while developing: the linter, the type check and every test not marked slow
# (docs/developing.md).
.PHONY: test-fast
test-fast: $(STAMP)
	$(VENV)/bin/ruff check ocg tests benchmarks
	$(VENV)/bin/ruff format --check ocg tests benchmarks
	$(VENV)/bin/mypy $(MYPY_PATHS)
	$(PY) -m pytest -m "not slow" -n $(PYTEST_WORKERS) --dist loadgroup $(PYTEST_ARGS)

install: $(STAMP)

test-tf4: $(STAMP4) $(STAMP)
	export OCG_EXPECT_TRANSFORMERS=4 OCG_CROSS_STACK_PYTHON="$(CURDIR)/$(PY)" JUPYTER_PREFER_ENV_PATH=1; \
	$(call two_tiers,$(PY4),-k "$(TF4_DESELECT)" $(PYTEST_ARGS),tf4 and )

install-tf4: $(STAMP4)

# Re-installs only when the lock or the package metadata changes. The last step converts the embedded
# model's GGUF into a transformers folder under outputs/models (once per transformers major; the demo
# would otherwise spend its first ~20 s on it).
$(STAMP): requirements.lock pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade "pip>=24"
	$(PY) -m pip install --quiet --no-deps -r requirements.lock
	$(PY) -m pip install --quiet --no-deps --no-build-isolation -e .
	$(PY) -m ipykernel install --sys-prefix --name $(KERNEL) --display-name "Python (ocg)" >/dev/null
	TQDM_DISABLE=1 $(PY) -m ocg.cli convert
	touch $(STAMP)

$(STAMP4): requirements-tf4.lock pyproject.toml
	test -x $(PY4) || $(PYTHON) -m venv $(VENV4)
	$(PY4) -m pip install --quiet --upgrade "pip>=24"
	$(PY4) -m pip install --quiet --no-deps -r requirements-tf4.lock
	$(PY4) -m pip install --quiet --no-deps --no-build-isolation -e .
	$(PY4) -m ipykernel install --sys-prefix --name $(KERNEL) --display-name "Python (ocg, transformers 4.57)" >/dev/null
	TQDM_DISABLE=1 $(PY4) -m ocg.cli convert
	touch $(STAMP4)

# Make the `ocg` kernel visible to a Jupyter outside .venv (writes to ~/.local/share/jupyter).
kernel: $(STAMP)
	$(PY) -m ipykernel install --user --name $(KERNEL) --display-name "Python (ocg)"

clean-outputs:
	find outputs -mindepth 1 ! -name README.md -exec rm -rf {} +
