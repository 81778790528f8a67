"""benchmarks/gpu_paper_shapes.py on the CPU with the tiny shape: one run appended to the JSON file, with
the fields the GPU session reads, ratio_to_bare = bare answers/s / ocg answers/s, and every variant timed."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import benchmark

smollm2_folder = benchmark("paper_shapes").smollm2_folder

ROOT = Path(__file__).parents[2]
SCRIPT = ROOT / "benchmarks" / "gpu_paper_shapes.py"
FIELDS = {
    "shape",
    "parameters",
    "dtype",
    "quantization",
    "batch",
    "working_batch",
    "device",
    "prompts",
    "ocg_answers_per_s",
    "ocg_tokens_per_s",
    "bare_first_answers_per_s",
    "bare_answers_per_s",
    "ratio_to_bare",
    "projected_gpu_hours_paper_sweeps",
    "variants",
    "date",
    "commit",
    "pad_multiple",
    "batch_size_auto",
}


def test_the_docstring_names_the_one_command_of_the_gpu_session():
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--help"], capture_output=True, text=True, check=True
    )
    assert (
        "python benchmarks/gpu_paper_shapes.py --smollm2-files smollm2-files --variants all"
        in done.stdout
    )


@pytest.mark.slow
def test_a_tiny_cpu_run_appends_its_figures(tmp_path):
    out = tmp_path / "gpu.json"
    out.write_text('[{"earlier": "run"}]\n')
    files = tmp_path / "smollm2-files"  # what a GPU machine without the embedded model is given
    subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "paper_shapes.py"), "export", str(files)],
        check=True,
    )
    assert sorted(p.name for p in files.iterdir()) == [
        "chat_template.jinja",
        "config.json",
        "generation_config.json",
        "tokenizer.json",
        "tokenizer_config.json",
    ]
    done = subprocess.run(
        [
            sys.executable,
            str(SCRIPT),
            "--tiny",
            "--prompts",
            "6",
            "--max-new-tokens",
            "2",
            "--variants",
            "all",
            "--smollm2-files",
            str(files),
            "--out",
            str(out),
            "--smollm2-dir",
            str(smollm2_folder()),
        ],
        capture_output=True,
        text=True,
        timeout=1200,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    runs = json.loads(out.read_text())
    assert runs[0] == {"earlier": "run"} and len(runs) == 3  # appended, nothing lost
    real, run = runs[1], runs[2]
    assert (
        real["measure"] == "batch 32 vs auto" and real["auto_batch"] == 32 and real["prompts"] == 6
    )
    assert (
        real["differ"] == 0 and real["share_differ"] == 0
    )  # off CUDA auto is 32: the same batches
    assert (
        FIELDS <= set(run)
        and run["shape"] == "tiny"
        and run["device"] == "cpu"
        and run["quantization"] == "none"
    )
    assert (
        run["prompts"] == 6 and run["batch"] == 32 and run["pad_multiple"] == 1
    )  # auto off CUDA: 32, no padding
    assert run["batch_size_auto"]["source"].startswith("fixed default off CUDA")
    assert run["ratio_to_bare"] == pytest.approx(
        run["bare_answers_per_s"] / run["ocg_answers_per_s"], rel=0.01
    )
    assert set(run["variants"]) == {"padded", "static", "generate_batch"}
    assert all(v["answers_per_s"] > 0 for v in run["variants"].values())
    assert run["bare_differ_from_ocg"] == 0  # the same batches, greedy on the CPU: the same answers
    assert run["projected_gpu_hours_paper_sweeps"] > 0
