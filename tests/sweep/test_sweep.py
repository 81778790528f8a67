"""Sweeps: the local executor, and the Slurm executor on a real single-node Slurm."""

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from ocg.core.errors import OcgInputError
from ocg.core.lock import exclusive
from ocg.sweep import load_sweep, resources_for, status_table
from ocg.sweep.tasks import BUSY
from tests.sweep.sweep_files import ocg

SECRET = "sk-sweep-secret-81bd3"


def models_file(tmp_path, broken: bool) -> str:
    """Three cheap entries of the embedded model; `broken` points one at an empty folder: it
    passes the local-path check when the file is read and fails on the node, at generation."""
    entry = {
        "id": "embedded:smollm2-135m-instruct",
        "quantization": "none",
        "max_new_tokens": 12,
        "batch_size": 24,
    }
    models = {
        "good-a": entry,
        "good-b": dict(entry, max_new_tokens=10),
        "flaky": dict(entry, id=str(tmp_path / "empty-model")) if broken else entry,
    }
    (tmp_path / "empty-model").mkdir(exist_ok=True)
    path = tmp_path / "models.yaml"
    path.write_text(yaml.safe_dump({"models": models}))
    return str(path)


def sweep_file(tmp_path, models, models_path, analysis=("03_main_results",)) -> str:
    sweep = {
        "name": "t",
        "models": models,
        "models_file": models_path,
        "conditions": ["ordered"],
        "subset_k": 1,
        "template_ids": [0],
        "metrics": ["coverage", "pbleu", "diverse"],
        "analysis": list(analysis),
        "outputs": str(tmp_path / "out"),
        "resources": {"default": {"gpus": 0, "cpus": 1, "mem": "200M", "time": "00:20:00"}},
        "slurm": {
            "throttle": 2,
            "analysis": {"gpus": 0, "cpus": 1, "mem": "200M", "time": "00:20:00"},
        },
    }
    path = tmp_path / "sweep.yaml"
    path.write_text(yaml.safe_dump(sweep))
    return str(path)


def test_sweep_file_validation(tmp_path):
    paper = load_sweep("params/sweeps/paper.yaml")
    assert len(paper.file.models) == 36
    assert resources_for(paper, "llama3.1-405b").gpus == 8
    assert resources_for(paper, "qwen2.5-7b").recorded() == {
        "gpus": 1,
        "cpus": 8,
        "mem": "64G",
        "time": "12:00:00",
    }
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        yaml.safe_dump({"name": "x", "models": ["nope"], "conditions": ["ordered"], "outputs": "o"})
    )
    with pytest.raises(OcgInputError, match=r"bad.yaml: models\[0\]: 'nope' is not an entry of"):
        load_sweep(bad)
    bad.write_text(
        yaml.safe_dump(
            {
                "name": "x",
                "models": ["gpt-4o"],
                "conditions": ["ordered"],
                "outputs": "o",
                "resources": {"default": {"gpu": 1}},
            }
        )
    )
    with pytest.raises(OcgInputError, match=r"resources.default.gpu: unknown key"):
        load_sweep(bad)


@pytest.mark.parametrize(
    "name, n_models, conditions, analysis",
    [
        ("paper", 36, ["original", "ordered"], 8),
        ("paper-table4", 36, ["ordered", "ordered_one_shot"], 1),
        ("paper-table7", 4, ["original", "ordered"], 1),
    ],
)
def test_paper_sweeps_in_dry_run(tmp_path, name, n_models, conditions, analysis):
    raw = yaml.safe_load(open(f"params/sweeps/{name}.yaml"))
    raw["outputs"] = str(tmp_path / "out")
    if "extends" in raw:  # relative to the shipped file, which this copy is not beside
        raw["extends"] = str(Path("params/sweeps", raw["extends"]).resolve())
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(raw))
    result = ocg("sweep", str(path), "--executor", "slurm", "--dry-run")
    assert result.returncode == 0, result.stderr
    sweep = load_sweep(path)
    assert len(sweep.file.models) == n_models and sweep.file.conditions == conditions
    assert len(sweep.file.analysis) == analysis
    script = (tmp_path / "out" / "slurm" / "array.sbatch").read_text()
    assert f"MODELS=({' '.join(sweep.file.models)})" in script
    assert sweep.file.scoring == {}  # no perplexity fallback in the paper's sweeps
    if name == "paper-table7":
        from ocg.analysis.paper_tables import reasoning_pairs

        assert reasoning_pairs(sweep.file.models) == {
            "marco-o1": "qwen2-7b",
            "o1-mini": "gpt-4o-mini",
        }
        assert sweep.file.template_ids == [0]


def test_reasoning_models_stay_out_of_the_36_model_sweeps():
    from ocg.config.model_registry import load_models

    reasoning = {m.name for m in load_models().values() if m.base_model}
    for name in ("paper", "paper-table4"):
        assert not reasoning & set(load_sweep(f"params/sweeps/{name}.yaml").file.models)


@pytest.mark.slow
def test_local_executor_two_entries_of_the_embedded_model(tmp_path):
    path = sweep_file(tmp_path, ["good-a", "good-b"], models_file(tmp_path, broken=False))
    env = dict(os.environ, OPENAI_API_KEY=SECRET)
    result = ocg("sweep", path, env=env)
    assert result.returncode == 0, result.stderr[-3000:]
    out = tmp_path / "out"
    for model in ("good-a", "good-b"):
        assert (out / "status" / "t" / model / "01_generate.done").exists()
        assert (out / "status" / "t" / model / "02_score.done").exists()
        assert (out / "scores" / model / "summary.parquet").exists()
        assert (out / "notebooks" / model / "01_generate.html").exists()
        assert (out / "logs" / f"{model}.log").stat().st_size > 0
    assert json.loads((out / "status" / "t" / "analysis.json").read_text())["state"] == "done"
    assert (out / "reports" / "t" / "index.html").exists()
    assert (out / "reports" / "t" / "tables" / "table1.csv").exists()
    status = ocg("sweep", path, "--status")
    assert "good-a  done" in status.stdout and "done: 2" in status.stdout
    rerun = ocg("sweep", path, env=env)
    assert "0 model(s) to run" in rerun.stdout
    for f in out.rglob("*"):
        if f.is_file() and f.suffix in (".json", ".log", ".ipynb", ".html", ".jsonl", ".csv"):
            assert SECRET not in f.read_text(errors="replace"), f


@pytest.mark.slow
def test_slurm_array_with_a_broken_model_then_a_rerun_of_only_it(tmp_path, slurm):
    mpath = models_file(tmp_path, broken=True)
    path = sweep_file(tmp_path, ["good-a", "flaky", "good-b"], mpath)
    first = ocg("sweep", path, "--executor", "slurm", "--wait")
    assert first.returncode == 1, (
        first.stdout + first.stderr[-3000:] + slurm.logs()
    )  # a model failed
    out = tmp_path / "out"
    manifest = json.loads((out / "slurm" / "manifest.json").read_text())
    assert len(manifest["submissions"]) == 1
    sub = manifest["submissions"][0]
    assert sub["tasks"] == {"0": "good-a", "1": "flaky", "2": "good-b"}
    assert any(a.startswith("--array=0,1,2%2") for a in sub["sbatch_args"])
    assert (
        "--mem=200M" in sub["sbatch_args"]
        and "--requeue" in (out / "slurm" / "array.sbatch").read_text()
    )
    assert (
        manifest["analysis_jobs"][0]["sbatch_args"][0] == f"--dependency=afterany:{sub['job_id']}"
    )

    states = {m: (s, d) for m, s, d in status_table(load_sweep(path))}
    assert states["good-a"][0] == "done" and states["good-b"][0] == "done"
    assert states["flaky"][0] == "failed" and "empty-model" in states["flaky"][1]
    failed = json.loads((out / "status" / "t" / "flaky" / "failed.json").read_text())
    assert failed["notebook"] == "01_generate" and failed["SLURM_ARRAY_TASK_ID"] == "1"
    assert "empty-model" in (out / "notebooks" / "flaky" / "01_generate.ipynb").read_text()
    assert (out / f"logs/slurm-{sub['job_id']}_1.out").exists() and (
        out / "logs" / "flaky.log"
    ).exists()
    for model in ("good-a", "good-b"):
        assert (out / "scores" / model / "summary.parquet").exists()
    analysis = json.loads((out / "status" / "t" / "analysis.json").read_text())
    assert analysis["state"] == "done" and analysis["models"] == ["good-a", "good-b"]
    status = ocg("sweep", path, "--status")
    assert "flaky" in status.stdout and "failed" in status.stdout and "done: 2" in status.stdout

    models_file(tmp_path, broken=False)  # fix the entry, run again: only it is submitted
    second = ocg("sweep", path, "--executor", "slurm", "--wait")
    assert second.returncode == 0, second.stdout + second.stderr[-3000:]
    manifest = json.loads((out / "slurm" / "manifest.json").read_text())
    assert len(manifest["submissions"]) == 2 and manifest["submissions"][1]["tasks"] == {
        "1": "flaky"
    }
    assert all(s == "done" for _, s, _ in status_table(load_sweep(path)))
    assert json.loads((out / "status" / "t" / "analysis.json").read_text())["models"] == [
        "good-a",
        "flaky",
        "good-b",
    ]


@pytest.mark.slow
def test_server_backed_sweep_on_slurm(tmp_path, slurm, monkeypatch):
    """A model task on a Slurm node starts its inference server, generates through it, stops it."""
    from tests.generation.transformers_serve import no_server_left, server_entry

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv(
        "HF_HUB_CACHE", str(tmp_path / "hub-cache")
    )  # transformers 5's serve answers
    (
        tmp_path / "hub-cache"
    ).mkdir()  # GET /v1/models with 500 without one (test_server.py's hub_cache)
    entry = server_entry()
    entry["max_new_tokens"] = 16
    mpath = tmp_path / "models.yaml"
    mpath.write_text(yaml.safe_dump({"models": {"served": entry}}))
    path = sweep_file(tmp_path, ["served"], str(mpath), analysis=())
    result = ocg("sweep", path, "--executor", "slurm", "--wait")
    assert result.returncode == 0, result.stdout + result.stderr[-3000:] + slurm.logs()
    out = tmp_path / "out"
    card = json.loads((out / "generations" / "served" / "run_card.json").read_text())
    assert card["status"] == "complete" and card["backend"]["server"]["command"][1] == "serve"
    assert (out / "generations" / "served" / "server.log").stat().st_size > 0
    assert (out / "scores" / "served" / "summary.parquet").exists() and no_server_left()


def replay_sweep(tmp_path) -> str:
    """A one-model sweep on the replay backend: its task runs notebooks 01 and 02 in seconds."""
    mpath = tmp_path / "models.yaml"
    mpath.write_text(yaml.safe_dump({"models": {"synth": {"backend": "replay", "id": "x/y"}}}))
    return sweep_file(tmp_path, ["synth"], str(mpath), analysis=())


@pytest.mark.slow
def test_a_second_sweep_of_one_folder_is_refused_at_once_naming_the_first(tmp_path):
    path, out = replay_sweep(tmp_path), tmp_path / "out"
    first = subprocess.Popen(
        [sys.executable, "-m", "ocg.cli", "sweep", path],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    lock, deadline = out / ".lock", time.time() + 60
    while (
        f'"pid": {first.pid}' not in (lock.read_text() if lock.exists() else "")
        and time.time() < deadline
    ):
        time.sleep(0.1)
    t0 = time.time()
    second = ocg("sweep", path)
    seconds = time.time() - t0
    stdout, stderr = first.communicate(timeout=600)
    assert second.returncode == 1, second.stdout + second.stderr  # busy: a fault, not bad input
    assert second.stderr.startswith(
        f"ocg: error: {out}: PID {first.pid} on {socket.gethostname()} (since "
    )
    assert "is running a sweep in this folder" in second.stderr and seconds < 30
    assert first.returncode == 0, stdout + stderr[-3000:]
    assert not (out / "status" / "t" / "synth" / "failed.json").exists()
    assert [s for _, s, _ in status_table(load_sweep(path), with_slurm=False)] == ["done"]


@pytest.mark.slow
def test_a_lock_held_elsewhere_is_no_model_failure(tmp_path):
    path, out = replay_sweep(tmp_path), tmp_path / "out"
    with exclusive(
        out / "generations" / "synth"
    ):  # e.g. an `ocg generate` into the sweep's generations
        result = ocg("sweep", path)
    assert not (out / "status" / "t" / "synth" / "failed.json").exists()
    assert result.returncode == 1 and "synth: busy" in result.stdout, (
        result.stdout + result.stderr[-3000:]
    )
    assert "synth  missing" in ocg("sweep", path, "--status").stdout
    with exclusive(
        out / "status" / "t" / "synth"
    ):  # this model's task, e.g. a Slurm task of an earlier submit
        task = ocg("sweep", path, "--task", "synth")
    assert (
        task.returncode == BUSY
        and "busy, not run" in task.stdout
        and "is running this model's task" in task.stdout
    )
    again = ocg("sweep", path)  # once the other writer is gone, the model runs
    assert again.returncode == 0 and "synth  done" in again.stdout, (
        again.stdout + again.stderr[-3000:]
    )
