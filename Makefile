# The two commands of the README: `make demo` (the main job) and `make test`.
# Both create .venv and install requirements.lock on first use; later runs reuse it.
# `make test-tf5`: the second stack (requirements-tf5.lock, transformers 5) in .venv-tf5, and the
# tests of the paths that depend on transformers (README, "transformers 5").
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
# server) or its determinism (two runs, identical records); perplexity (ocg's own), pBLEURT through the compatibility layer, compared with .venv's
# transformers 4 (OCG_CROSS_STACK_PYTHON), and the GPU check on the CPU. OCG_EXPECT_TRANSFORMERS makes the session refuse another major version and fail on any
# skipped test (tests/conftest.py).
VENV5 := .venv-tf5
PY5 := $(VENV5)/bin/python
STAMP5 := $(VENV5)/.ocg-installed
TF5_TESTS := tests/generation/test_generation.py tests/generation/test_embedded.py tests/generation/test_chat_templates.py \
	tests/inputs/test_models.py tests/generation/test_server.py tests/scoring/test_scoring.py tests/scoring/test_neural_caches.py \
	tests/running/test_notebooks.py tests/test_environment.py tests/metrics/test_perplexity_impl.py \
	tests/metrics/test_bleurt_compat.py tests/test_gpu_check.py
TF5_DESELECT := not test_kill_and_resume_equals_uninterrupted and not test_a_second_writer_is_refused_at_once \
	and not test_a_server_killed_mid_run_then_a_resume and not test_server_backed_sweep_runs_locally \
	and not test_two_runs_give_identical_records

.PHONY: demo test test-tf5 install install-tf5 kernel clean-outputs

demo: $(STAMP)
	$(VENV)/bin/ocg demo

test: $(STAMP)
	$(VENV)/bin/ruff check ocg tests benchmarks
	$(PY) -m pytest $(PYTEST_ARGS)

# The fast tier while developing: the linter and every test not marked slow (README, "Developing").
.PHONY: test-fast
test-fast: $(STAMP)
	$(VENV)/bin/ruff check ocg tests benchmarks
	$(PY) -m pytest -m "not slow" $(PYTEST_ARGS)

install: $(STAMP)

test-tf5: $(STAMP5)
	OCG_EXPECT_TRANSFORMERS=5 OCG_CROSS_STACK_PYTHON="$(CURDIR)/$(PY)" JUPYTER_PREFER_ENV_PATH=1 $(PY5) -m pytest $(TF5_TESTS) -k "$(TF5_DESELECT)" $(PYTEST_ARGS)

install-tf5: $(STAMP5)

# Re-installs only when the lock or the package metadata changes.
$(STAMP): requirements.lock pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade "pip>=24"
	$(PY) -m pip install --quiet --no-deps -r requirements.lock
	$(PY) -m pip install --quiet --no-deps --no-build-isolation -e .
	$(PY) -m ipykernel install --sys-prefix --name $(KERNEL) --display-name "Python (ocg)" >/dev/null
	touch $(STAMP)

$(STAMP5): requirements-tf5.lock pyproject.toml
	test -x $(PY5) || $(PYTHON) -m venv $(VENV5)
	$(PY5) -m pip install --quiet --upgrade "pip>=24"
	$(PY5) -m pip install --quiet --no-deps -r requirements-tf5.lock
	$(PY5) -m pip install --quiet --no-deps --no-build-isolation -e .
	$(PY5) -m ipykernel install --sys-prefix --name $(KERNEL) --display-name "Python (ocg, transformers 5)" >/dev/null
	touch $(STAMP5)

# Make the `ocg` kernel visible to a Jupyter outside .venv (writes to ~/.local/share/jupyter).
kernel: $(STAMP)
	$(PY) -m ipykernel install --user --name $(KERNEL) --display-name "Python (ocg)"

clean-outputs:
	find outputs -mindepth 1 ! -name README.md -exec rm -rf {} +
