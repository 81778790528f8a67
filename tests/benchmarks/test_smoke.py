"""Every benchmark script still starts: its imports and its arguments (`--help`, in a fresh
process, as a user runs it), and those with a small-size flag run a tiny workload to the end, with
OCG_BENCHMARK_RESULTS pointed at a temporary folder so no figure is recorded. The GPU scripts'
own CPU paths are tested in test_gpu_check.py and test_gpu_paper_shapes.py."""

from __future__ import annotations

import os
import runpy
import subprocess
import sys
from pathlib import Path

import pytest

from ocg.core.paths import PROJECT_ROOT

BENCHMARKS = PROJECT_ROOT / "benchmarks"
LIBRARIES = {"recording.py", "paper_shapes.py", "paper_variants.py"}  # imported by the others
NO_ARGUMENTS = {"list_copies.py", "ocg_overhead.py"}  # a full run each: imported here
SCRIPTS = sorted(p.name for p in BENCHMARKS.glob("*.py"))
# scripts with flags that shrink the workload to seconds: (script, arguments)
TINY = [("long_answers.py", ["--words", "40", "--answers", "2"])]


def run(tmp_path: Path, script: str, *args: str) -> subprocess.CompletedProcess:
    env = dict(
        os.environ,
        OCG_BENCHMARK_RESULTS=str(tmp_path / "results"),
        PYTHONPATH=str(PROJECT_ROOT),
        OCG_OUTPUTS=str(tmp_path / "outputs"),
    )
    return subprocess.run(
        [sys.executable, str(BENCHMARKS / script), *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=300,
    )


def test_every_script_is_listed():
    assert len(SCRIPTS) >= 18 and LIBRARIES | NO_ARGUMENTS <= set(SCRIPTS)


@pytest.mark.parametrize("script", [s for s in SCRIPTS if s not in LIBRARIES | NO_ARGUMENTS])
def test_a_script_reads_its_arguments(tmp_path, script):
    proc = run(tmp_path, script, "--help")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "usage:" in proc.stdout and not (tmp_path / "results").exists()


@pytest.mark.parametrize("script", sorted(LIBRARIES | NO_ARGUMENTS))
def test_a_script_without_arguments_imports(script, monkeypatch):
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    module = runpy.run_path(str(BENCHMARKS / script), run_name="benchmark_smoke")
    assert module.get("__doc__")


@pytest.mark.slow  # spaCy's pipeline loads: about 30 s
@pytest.mark.parametrize("script, args", TINY, ids=[s for s, _ in TINY])
def test_a_tiny_run_ends_well(tmp_path, script, args):
    proc = run(tmp_path, script, *args)
    assert proc.returncode == 0, proc.stderr[-3000:]
