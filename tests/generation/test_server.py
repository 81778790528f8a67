"""Generation through a real OpenAI-compatible inference server (`transformers serve` with the
embedded SmolLM2), started and stopped by ocg for the run, against the transformers backend."""

import json
import os
import signal
import socket
import subprocess
import sys
import time

import pytest
import yaml

from ocg.config.model_registry import get_model, parse_models
from ocg.core.errors import OcgInputError
from ocg.generation import generate, read_generations
from ocg.generation.servers.server import ServerError
from ocg.weights.embedded import ensure_converted
from tests.generation.transformers_serve import (
    TRANSFORMERS_4,
    TRANSFORMERS_CLI,
    no_server_left,
    server_entry,
)

pytestmark = [pytest.mark.slow, pytest.mark.tf4]
WORK = dict(conditions=["ordered"], subset_k=1, template_ids=[0])


@pytest.fixture(autouse=True)
def hub_cache(tmp_path, monkeypatch):
    """transformers 5's serve lists the hub cache on GET /v1/models and answers 500 where that
    folder does not exist (4.x lists fixed hub ids): the servers started here get an empty one."""
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub-cache"))
    (tmp_path / "hub-cache").mkdir()


def spec_of(entry, name="served"):
    return parse_models({"models": {name: entry}}, "test")[name]


def test_answers_through_transformers_serve_match_the_transformers_backend(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    served = generate(spec_of(server_entry()), out_dir=tmp_path, progress=False, **WORK)
    assert no_server_left()  # stopped when the run ended
    local = get_model("smollm2-135m-instruct").model_copy(update=dict(batch_check=0))
    direct = generate(local, out_dir=tmp_path, batch_size=1, progress=False, **WORK)
    a = read_generations(served).set_index("instance_id").sort_index()
    b = read_generations(direct).set_index("instance_id").sort_index()
    assert len(a) == len(b) == 24 and (a.index == b.index).all()
    # Both apply the model's own chat template to the same messages and decode greedily in float32
    # (the shipped entry's dtype)
    # one prompt at a time (the server handles requests one by one, we used batch size 1): the
    # answers should agree. Where they do not, the server's own tokenisation of the rendered
    # chat (it adds no BOS either here) or a different generation default is to blame.
    differ = (a.raw.str.strip() != b.raw.str.strip()).mean()
    print(
        f"share of answers that differ between transformers serve and the transformers backend: {differ:.3f}"
    )
    assert differ <= 0.1
    card = json.loads((served / "run_card.json").read_text())
    server = card["backend"]["server"]
    assert server["command"][1] == "serve" and server["http_server"] == "uvicorn"
    assert bool(server["models_listed"]) == TRANSFORMERS_4  # 5.x lists the (empty) hub cache
    assert card["backend"]["models_reported_by_server"][0].startswith(
        str(ensure_converted("smollm2-135m-instruct"))
    )
    assert (served / "server.log").stat().st_size > 0


def test_a_server_killed_mid_run_then_a_resume(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    models = tmp_path / "models.yaml"
    entry = server_entry()
    entry["api"]["concurrency"] = 1
    models.write_text(yaml.safe_dump({"models": {"served": entry}}))
    out = tmp_path / "gen"
    cmd = [
        sys.executable,
        "-m",
        "ocg.cli",
        "generate",
        "served",
        "--models-file",
        str(models),
        "--conditions",
        "ordered",
        "--subset-k",
        "1",
        "--templates",
        "0",
        "--out",
        str(out),
    ]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    records = out / "served" / "ordered.jsonl"
    deadline = time.time() + 300
    while (
        not (records.exists() and records.read_text().count("\n") >= 8) and time.time() < deadline
    ):
        assert proc.poll() is None, proc.stderr.read()
        time.sleep(0.2)
    pid = int(
        subprocess.run(
            ["pgrep", "-f", f"{TRANSFORMERS_CLI} serve"], capture_output=True, text=True
        ).stdout.split()[0]
    )
    os.killpg(pid, signal.SIGKILL)  # the server dies; the client retries, then gives up
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == 1 and "ocg: error:" in err and "gave up after 3 attempts" in err, err
    kept = records.read_text().count("\n")
    assert 8 <= kept < 24
    card = json.loads((out / "served" / "run_card.json").read_text())
    assert card["status"] == "failed"
    resumed = generate(
        spec_of(entry), out_dir=out, progress=False, **WORK
    )  # a new server, the rest
    df = read_generations(resumed)
    assert len(df) == 24 and df.instance_id.is_unique and no_server_left()


def test_a_server_that_never_answers_is_stopped(tmp_path):
    entry = server_entry(command="sleep 60", startup_timeout_s=2)
    t0 = time.time()
    with pytest.raises(
        ServerError, match=r"did not answer http://127.0.0.1:\d+/v1/models with HTTP 200 within 2 s"
    ):
        generate(spec_of(entry), out_dir=tmp_path, progress=False, **WORK)
    assert time.time() - t0 < 20
    assert subprocess.run(["pgrep", "-f", "^sleep 60$"], capture_output=True).returncode == 1
    with pytest.raises(ServerError, match=r"exited with status 3 before answering"):
        generate(
            spec_of(server_entry(command="sh -c 'echo broken >&2; exit 3'")),
            out_dir=tmp_path / "b",
            progress=False,
            **WORK,
        )
    assert "broken" in (tmp_path / "b" / "served" / "server.log").read_text()


def test_a_model_the_server_does_not_know(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    entry = server_entry(
        command=f"{TRANSFORMERS_CLI} serve --device cpu --host 127.0.0.1 --port {{port}}"
    )
    entry["id"] = "no-such-org/no-such-model"
    with pytest.raises(
        ServerError,
        match=r"not a first chat request for model 'no-such-org/no-such-model' "
        r"\(unknown to it\?\): .*HTTP 500",
    ):
        generate(spec_of(entry), out_dir=tmp_path, progress=False, **WORK)
    assert no_server_left() and not list(tmp_path.rglob("*.jsonl"))


def test_a_port_in_use_is_refused(tmp_path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        with pytest.raises(OcgInputError, match=rf"api.server.port: port {port} is already in use"):
            generate(spec_of(server_entry(port=port)), out_dir=tmp_path, progress=False, **WORK)


def test_server_backed_sweep_runs_locally(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    models = tmp_path / "models.yaml"
    models.write_text(yaml.safe_dump({"models": {"served": server_entry()}}))
    sweep = {
        "name": "served",
        "models": ["served"],
        "models_file": str(models),
        "conditions": ["ordered"],
        "subset_k": 1,
        "template_ids": [0],
        "metrics": ["coverage", "pbleu"],
        "analysis": [],
        "outputs": str(tmp_path / "out"),
    }
    path = tmp_path / "sweep.yaml"
    path.write_text(yaml.safe_dump(sweep))
    result = subprocess.run(
        [sys.executable, "-m", "ocg.cli", "sweep", str(path)],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    assert (
        tmp_path / "out" / "scores" / "served" / "summary.parquet"
    ).exists() and no_server_left()
    dry = subprocess.run(
        [sys.executable, "-m", "ocg.cli", "sweep", str(path), "--executor", "slurm", "--dry-run"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert (
        dry.returncode == 0
        and "served" in (tmp_path / "out" / "slurm" / "array.sbatch").read_text()
    )
