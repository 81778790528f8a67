"""benchmarks/gpu_check.py: its table (rows and columns) from a tiny run on the CPU, with none of the
packages a bare torch + transformers machine lacks imported; its --help says where the model comes from."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.tf4  # run on the second stack too (make test-tf4)

ROOT = Path(__file__).parents[2]
SCRIPT = ROOT / "benchmarks" / "gpu_check.py"
# What the lent GPU machine lacks (it has torch, transformers, numpy, pandas, pyarrow and sacrebleu:
# the device notes). pandas and pyarrow are no longer listed: torch's dynamo, which transformers'
# Llama code imports, imports pandas wherever it is installed.
ABSENT_THERE = ("spacy", "papermill", "lmppl", "bitsandbytes", "gguf", "seaborn")
RUN = f"""import runpy, sys
sys.argv = ["gpu_check.py", "--device", "cpu", "--prompts", "8", "--max-new-tokens", "8", "--batch-size", "4"]
runpy.run_path({str(SCRIPT)!r}, run_name="__main__")
print("imported:", sorted(n for n in {ABSENT_THERE!r} if n in sys.modules))
"""


def test_help_says_where_the_model_comes_from():
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--help"], capture_output=True, text=True, check=True
    )
    assert "--model-dir" in done.stdout and "--gguf" in done.stdout and "94 MB GGUF" in done.stdout


@pytest.mark.slow
def test_a_tiny_cpu_run_prints_the_table_without_the_missing_packages(tmp_path):
    env = {**os.environ, "OCG_BENCHMARK_RESULTS": str(tmp_path / "results")}
    done = subprocess.run(
        [sys.executable, "-c", RUN],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=900,
        env=env,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    lines = done.stdout.splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("| setting |"))
    columns = [c.strip() for c in lines[header].strip("|").split("|")]
    assert columns == [
        "setting",
        "device",
        "prompts",
        "batch",
        "answers/s batched",
        "answers/s batched again",
        "answers/s batch 1",
        "speed-up",
        "differ batched vs 1",
        "differ batched twice",
        "perplexity median (ocg)",
        "perplexity texts/s",
        "seconds",
    ]
    rows = [
        [c.strip() for c in line.strip("|").split("|")]
        for line in lines[header + 2 :]
        if line.startswith("|")
    ]
    assert [r[:4] for r in rows] == [["bfloat16", "cpu", "8", "4"]]  # no 4-bit row on the CPU
    row = dict(zip(columns, rows[0]))
    assert float(row["answers/s batched"]) > 0 and float(row["answers/s batch 1"]) > 0
    assert re.fullmatch(r"[0-8] of 8 \(\d+%\)", row["differ batched vs 1"])
    assert float(row["answers/s batched again"]) > 0
    assert (
        row["differ batched twice"] == "0 of 8"
    )  # greedy on the CPU: the same batches give the same answers
    assert float(row["perplexity median (ocg)"]) > 1
    assert lines[-1] == "imported: []"
    (run,) = json.loads(
        (tmp_path / "results" / "gpu_check.json").read_text()
    )  # the figures as data too
    assert run["figures"]["rows"][0]["answers/s batched"] == row["answers/s batched"]
    assert run["machine"]["cores"] and run["date"] and run["args"]["prompts"] == 8
