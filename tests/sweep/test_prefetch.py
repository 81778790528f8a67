"""Offline compute nodes: `ocg prefetch` plans what a file needs from the hub, and a sweep task
runs with the hub offline when the cache holds its files, or fails at once saying what to fetch.

The cache is laid out as huggingface_hub lays it (blobs/, snapshots/<commit>/ links, refs/main),
built from the embedded model's converted folder; nothing is downloaded (HF_HUB_OFFLINE)."""

import hashlib
import json
import os
import shlex
import subprocess
import sys

import pytest
import yaml

COMMIT = "0123456789abcdef0123456789abcdef01234567"


def hub_cache(root, repo="ocg-test/smollm2"):
    """A hub cache holding `repo` at COMMIT (refs/main), its files from the converted model."""
    from ocg.weights.embedded import ensure_converted

    source = ensure_converted("smollm2-135m-instruct")
    folder = root / f"models--{repo.replace('/', '--')}"
    (folder / "blobs").mkdir(parents=True, exist_ok=True)
    (folder / "refs").mkdir(exist_ok=True)
    (folder / "refs" / "main").write_text(COMMIT)
    snap = folder / "snapshots" / COMMIT
    snap.mkdir(parents=True, exist_ok=True)
    for f in sorted(source.iterdir()):
        if f.is_file() and not f.name.startswith("ocg_"):
            blob = folder / "blobs" / hashlib.sha256(f.read_bytes()).hexdigest()
            blob.write_bytes(f.read_bytes())
            (snap / f.name).symlink_to(os.path.relpath(blob, snap))
    return snap


def hub_sweep(tmp_path, models, **fields) -> str:
    entry = {"quantization": "none", "max_new_tokens": 12, "batch_size": 24}
    (tmp_path / "models.yaml").write_text(
        yaml.safe_dump({"models": {name: dict(entry, id=repo) for name, repo in models.items()}})
    )
    path = tmp_path / "sweep.yaml"
    path.write_text(
        yaml.safe_dump(
            {
                "name": "hub",
                "models": list(models),
                "models_file": str(tmp_path / "models.yaml"),
                "conditions": ["ordered"],
                "subset_k": 1,
                "template_ids": [0],
                "metrics": ["coverage"],
                "analysis": [],
                "outputs": str(tmp_path / "out"),
                "resources": {"default": {"cpus": 1}},
                **fields,
            }
        )
    )
    return str(path)


def ocg(*args, env):
    return subprocess.run(
        [sys.executable, "-m", "ocg.cli", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=900,
    )


def test_the_files_a_load_reads_are_chosen_from_a_repository_listing():
    from ocg.sweep.prefetch import select_files

    llama = [
        "config.json",
        "generation_config.json",
        "model-00001-of-00002.safetensors",
        "model-00002-of-00002.safetensors",
        "model.safetensors.index.json",
        "original/consolidated.00.pth",
        "original/params.json",
        "original/tokenizer.model",
        "tokenizer.json",
        "tokenizer_config.json",
        "special_tokens_map.json",
        "README.md",
        "LICENSE",
        ".gitattributes",
        "pytorch_model.bin",
    ]
    assert select_files(llama) == [
        "config.json",
        "generation_config.json",
        "model-00001-of-00002.safetensors",
        "model-00002-of-00002.safetensors",
        "model.safetensors.index.json",
        "special_tokens_map.json",
        "tokenizer.json",
        "tokenizer_config.json",
    ]
    bleurt = [
        "config.json",
        "pytorch_model.bin",
        "sentencepiece.model",
        "tokenizer_config.json",
        "tf_model.h5",
        "onnx/model.onnx",
    ]
    assert select_files(bleurt) == [
        "config.json",
        "pytorch_model.bin",
        "sentencepiece.model",
        "tokenizer_config.json",
    ]


@pytest.mark.slow
def test_a_missing_model_fails_before_any_work_naming_files_and_the_prefetch_command(tmp_path):
    snap = hub_cache(tmp_path / "hub")
    (snap / "model.safetensors").unlink()  # a half-fetched repository
    path = hub_sweep(tmp_path, {"half": "ocg-test/smollm2", "absent": "ocg-test/absent"})
    env = dict(os.environ, HF_HUB_CACHE=str(tmp_path / "hub"), HF_HUB_OFFLINE="1")
    for model, what in (
        ("half", "weights (*.safetensors or *.bin)"),
        ("absent", "ocg-test/absent@main (not in the cache)"),
    ):
        result = ocg("sweep", path, "--task", model, env=env)
        assert result.returncode == 1, result.stdout + result.stderr
        failed = json.loads(
            (tmp_path / "out" / "status" / "hub" / model / "failed.json").read_text()
        )
        assert what in failed["reason"] and f"ocg prefetch {shlex.quote(path)}" in failed["reason"]
        assert (
            failed["notebook"] == "(before 01_generate)"
            and "FAILED before any work" in result.stdout
        )
        assert not (tmp_path / "out" / "notebooks" / model).exists()  # no notebook, no model loaded
    status = ocg("sweep", path, "--status", env=env).stdout
    assert "absent" in status and "failed" in status and "ocg prefetch" in status


@pytest.mark.slow
def test_prefetch_lists_from_the_hub_and_cannot_reach_it_offline(tmp_path):
    hub_cache(tmp_path / "hub")
    path = hub_sweep(tmp_path, {"cached": "ocg-test/smollm2", "absent": "ocg-test/absent"})
    env = dict(os.environ, HF_HUB_CACHE=str(tmp_path / "hub"), HF_HUB_OFFLINE="1")
    result = ocg(
        "prefetch", path, "--list", env=env
    )  # the real listing call, which offline mode refuses
    assert result.returncode == 1 and result.stderr.count("ocg: error:") == 1, result.stderr
    assert "ocg-test/smollm2@main (model cached): cached, " in result.stdout  # sizes from the cache
    assert result.stdout.count("HF_HUB_OFFLINE is set: the hub is not asked") == 1
    assert (
        "ocg-test/absent@main (model absent): not listed; in the local cache: NOT cached"
        in result.stdout
    )
    assert (
        "1 of 2 repositories could not be listed" in result.stderr
        and "ocg-test/absent@main" in result.stderr
    )
    ready = ocg("prefetch", hub_sweep(tmp_path, {"cached": "ocg-test/smollm2"}), env=env)
    assert ready.returncode == 0 and "in all to download: 0.0 MB" in ready.stdout, (
        ready.stdout + ready.stderr
    )
    embedded = tmp_path / "run.yaml"
    embedded.write_text(
        yaml.safe_dump(
            {
                "name": "e",
                "models": ["smollm2-135m-instruct"],
                "conditions": ["ordered"],
                "metrics": ["coverage"],
            }
        )
    )
    assert "no hub files needed" in ocg("prefetch", str(embedded), env=env).stdout


@pytest.mark.slow
def test_a_task_whose_files_are_cached_runs_offline(tmp_path):
    hub_cache(tmp_path / "hub")
    path = hub_sweep(
        tmp_path, {"cached": "ocg-test/smollm2"}, permutations=2, notebooks=["01_generate"]
    )
    env = {k: v for k, v in os.environ.items() if k != "HF_HUB_OFFLINE"}
    env["HF_HUB_CACHE"] = str(tmp_path / "hub")
    result = ocg("sweep", path, "--task", "cached", env=env)
    assert result.returncode == 0, result.stdout + result.stderr[-3000:]
    assert "every hub file is cached: running with HF_HUB_OFFLINE=1" in result.stdout
    card = json.loads((tmp_path / "out" / "generations" / "cached" / "run_card.json").read_text())
    assert card["status"] == "complete" and card["backend"]["resolved_revision"] == COMMIT, card[
        "backend"
    ]
    assert card["records"]["ordered"]["present"] == 2, card["records"]


@pytest.mark.parametrize(
    "value", ["off", "OFF", "0", "no", "false", "", "2", "1", "ON", "yes", "True"]
)
def test_hf_hub_offline_is_read_as_huggingface_hub_reads_it(monkeypatch, value):
    hub_reads = subprocess.run(
        [
            sys.executable,
            "-c",
            "from huggingface_hub import constants; print(constants.HF_HUB_OFFLINE)",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "HF_HUB_OFFLINE": value},
    ).stdout.strip()
    monkeypatch.setenv("HF_HUB_OFFLINE", value)
    from ocg.sweep.prefetch import offline

    assert str(offline()) == hub_reads, (value, hub_reads)
    from ocg.weights.hub import hub_offline  # what hub_reachable asks first

    assert str(hub_offline()) == hub_reads


def fake_cache(root, index: bytes, repo="ocg-test/damaged"):
    """A cached snapshot of `repo` with a config, a tokenizer and the shard index `index`."""
    folder = root / f"models--{repo.replace('/', '--')}"
    (folder / "refs").mkdir(parents=True)
    (folder / "refs" / "main").write_text(COMMIT)
    snap = folder / "snapshots" / COMMIT
    snap.mkdir(parents=True)
    for name, data in (
        ("config.json", b"{}"),
        ("tokenizer.json", b"{}"),
        ("model.safetensors.index.json", index),
    ):
        (snap / name).write_bytes(data)
    return snap / "model.safetensors.index.json"


@pytest.mark.parametrize("index", [b"", b"[1, 2]", b'{"weight_map": {"a": 3}}', b"\xff\xfe"])
def test_a_damaged_shard_index_in_the_cache_is_named_by_prefetch_and_the_task(tmp_path, index):
    damaged = fake_cache(tmp_path / "hub", index)
    path = hub_sweep(tmp_path, {"damaged": "ocg-test/damaged"})
    env = dict(os.environ, HF_HUB_CACHE=str(tmp_path / "hub"), HF_HUB_OFFLINE="1")
    what = f"{damaged}: expected a shard index (JSON with a weight_map of file names); it is {len(index)} bytes"
    listed = ocg("prefetch", path, "--list", env=env)
    assert listed.returncode == 2 and "Traceback" not in listed.stderr, listed.stderr
    assert (
        listed.stderr.startswith(f"ocg: error: {what}") and listed.stderr.count("ocg: error:") == 1
    ), listed.stderr
    task = ocg("sweep", path, "--task", "damaged", env=env)
    assert task.returncode == 1 and "Traceback" not in task.stdout + task.stderr, (
        task.stdout + task.stderr
    )
    failed = json.loads(
        (tmp_path / "out" / "status" / "hub" / "damaged" / "failed.json").read_text()
    )
    assert f"the Hugging Face cache holds a damaged file: {what}" in failed["reason"], failed[
        "reason"
    ]
    assert "delete it and run ocg prefetch again" in failed["reason"]
