"""Benchmarks keep their figures as data (benchmarks/recording.py): each run appends one entry
with figures, arguments, machine, date and commit, and the docs' table shows the latest."""

import json
import re
import subprocess
import sys

import pytest

from ocg.paths import PROJECT_ROOT
from tests.helpers import benchmark

BENCHMARKS = PROJECT_ROOT / "benchmarks"


@pytest.fixture
def recording(monkeypatch, tmp_path):
    monkeypatch.setenv("OCG_BENCHMARK_RESULTS", str(tmp_path))
    return benchmark("recording")


def test_runs_append_with_machine_date_and_commit(recording, tmp_path):
    recording.record("demo_bench", {"answers_per_s": 7.0}, {"prompts": 8})
    recording.record("demo_bench", {"answers_per_s": 9.5}, {"prompts": 16})
    runs = json.loads((tmp_path / "demo_bench.json").read_text())
    assert [r["figures"]["answers_per_s"] for r in runs] == [7.0, 9.5]
    assert runs[1]["args"] == {"prompts": 16} and runs[1]["machine"]["cores"] >= 1
    assert runs[1]["date"][:4].isdigit() and runs[1]["commit"]
    table = recording.latest_table(tmp_path)
    assert "answers_per_s: 9.5" in table and "answers_per_s: 7.0" not in table


def test_every_benchmark_that_measures_records_its_figures():
    """Each benchmark script with a main() writes its figures through recording (a run appended by
    `record`, or its own file shape with `provenance`: date, commit, machine). The diagnoses
    gpu_steps.py and gpu_attention.py print profiler tables; stacks.py runs generate.py."""
    exempt = {"recording.py", "gpu_steps.py", "gpu_attention.py", "stacks.py"}
    silent = [
        p.name
        for p in sorted(BENCHMARKS.glob("*.py"))
        if p.name not in exempt
        and "def main" in p.read_text()
        and not re.search(r"from recording import (record|provenance)", p.read_text())
    ]
    assert not silent, f"benchmarks that print figures but keep none: {silent}"


@pytest.mark.slow
def test_list_copies_writes_its_figures(tmp_path):
    env = {"OCG_BENCHMARK_RESULTS": str(tmp_path), "PATH": "/usr/bin:/bin"}
    done = subprocess.run(
        [sys.executable, str(BENCHMARKS / "list_copies.py")],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    (run,) = json.loads((tmp_path / "list_copies.json").read_text())
    assert (
        run["figures"]["outputs"] == 2496
        and run["figures"]["copies_list"] <= run["figures"]["in_order"]
    )
    assert f"{run['figures']['outputs']} outputs" in done.stdout
