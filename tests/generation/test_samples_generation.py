"""Repeated samples through the real generation path (replay backend): one record per (instance,
sample), seeded, resumable; greedy runs untouched; the run and sweep files' fields checked."""

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from ocg.core.errors import OcgInputError
from ocg.core.paths import PROJECT_ROOT
from ocg.generation import GenerationStore, generate, read_generations
from ocg.generation.answer_store.completeness import check_model_dir
from ocg.generation.sampling import SEEDING_RULE, batch_seed, check_sampling
from tests.helpers import checked_run, disk_record

INTERRUPT = Path(__file__).parent.parent / "interrupt_ocg.py"

SAMPLING = {"temperature": 0.8}


@pytest.fixture
def models_file(tmp_path):
    path = tmp_path / "models.yaml"
    path.write_text(f"""models:
  synth: {{backend: replay, id: x/y, batch_size: 16, seed: 7}}
  from-file: {{backend: replay, id: x/z, replay: {{file: {tmp_path / "answers.jsonl"}}}}}
""")
    return path


def run(models_file, out, name="synth", **kw):
    kw = {"conditions": ["ordered"], "subset_k": 2, "template_ids": [0], **kw}
    return generate(name, out_dir=out, models_file=models_file, progress=False, **kw)


def test_k_samples_are_stored_per_sample_and_sample_0_is_the_greedy_answer(models_file, tmp_path):
    greedy = read_generations(run(models_file, tmp_path / "greedy"))
    sampled_dir = run(models_file, tmp_path / "sampled", samples=3, sampling=SAMPLING)
    sampled = read_generations(sampled_dir)
    assert "sample" not in greedy and len(sampled) == 3 * len(greedy)
    assert sampled.groupby("sample").size().tolist() == [len(greedy)] * 3
    first = sampled[sampled["sample"] == 0].set_index("instance_id").answer
    assert first.to_dict() == greedy.set_index("instance_id").answer.to_dict()
    later = sampled[sampled["sample"] == 1].set_index("instance_id").answer
    assert (later != first.reindex(later.index)).mean() > 0.3  # samples differ
    card = json.loads((sampled_dir / "run_card.json").read_text())
    assert card["sampling"] == {
        "samples": 3,
        "temperature": 0.8,
        "top_p": 1.0,
        "seeds": [7, 8, 9],
        "seeding": SEEDING_RULE,
        "seeds_honoured": True,
    }
    assert card["settings"]["sampling"] == {"temperature": 0.8, "top_p": 1.0}
    assert (
        card["records"]["ordered"]["asked"] == 3 * len(greedy)
        and card["records"]["ordered"]["missing"] == 0
    )
    greedy_card = json.loads((tmp_path / "greedy" / "synth" / "run_card.json").read_text())
    assert "sampling" not in greedy_card and "sampling" not in greedy_card["settings"]


def test_kill_9_in_sample_1_and_resume_equals_an_uninterrupted_run(models_file, tmp_path):
    whole = run(models_file, tmp_path / "whole", samples=2, sampling=SAMPLING) / "ordered.jsonl"
    args = [
        "generate",
        "synth",
        "--models-file",
        str(models_file),
        "--conditions",
        "ordered",
        "--subset-k",
        "2",
        "--templates",
        "0",
        "--out",
        str(tmp_path / "cut"),
        "--samples",
        "2",
        "--temperature",
        "0.8",
    ]
    env = dict(os.environ, PYTHONPATH=str(PROJECT_ROOT))
    killed = subprocess.run(
        [sys.executable, str(INTERRUPT), "fsync:5", *args], env=env, capture_output=True
    )
    assert killed.returncode == -signal.SIGKILL
    cut = tmp_path / "cut" / "synth" / "ordered.jsonl"
    on_disk = [disk_record(x) for x in cut.read_text().splitlines()]
    assert 48 < len(on_disk) < 96 and {r["sample"] for r in on_disk} == {
        0,
        1,
    }  # killed inside sample 1
    assert json.loads((cut.parent / "run_card.json").read_text())["status"] == "running"
    with cut.open("a") as fh:
        fh.write('{"instance_id": "ordered-t0-torn')  # as if killed in the middle of a write
    run(models_file, tmp_path / "cut", samples=2, sampling=SAMPLING)
    key = lambda r: (r["instance_id"], r["sample"])  # noqa: E731
    got = {key(r): r["answer"] for r in GenerationStore(cut).records()}
    assert got == {key(r): r["answer"] for r in GenerationStore(whole).records()} and len(got) == 96
    block, foreign = check_model_dir(cut.parent, read_generations(cut.parent))
    assert block["missing"] == 0 and block["asked"] == 96 and not foreign.any()
    card = json.loads((cut.parent / "run_card.json").read_text())
    assert card["runs"][-2]["status"] == "interrupted" and card["runs"][-1]["written"] == 96 - len(
        on_disk
    )


def test_a_missing_sample_counts_as_missing_and_greedy_cannot_join_a_sampled_directory(
    models_file, tmp_path
):
    model_dir = run(models_file, tmp_path, samples=2, sampling=SAMPLING)
    path = model_dir / "ordered.jsonl"
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(
        b"".join(x for x in lines if disk_record(x)["sample"] == 0 or disk_record(x)["perm_index"])
    )
    block, _ = check_model_dir(model_dir, read_generations(model_dir))
    assert block["missing"] == 2 and block["asked"] == len(lines)  # perm 0 of two sets, sample 1
    with pytest.raises(OcgInputError, match="setting 'sampling' was .* now None"):
        run(models_file, tmp_path)


def test_a_replay_file_answers_per_sample(models_file, tmp_path):
    ids = read_generations(run(models_file, tmp_path / "ids")).instance_id
    (tmp_path / "answers.jsonl").write_text(
        "".join(
            json.dumps({"instance_id": i, "sample": s, "answer": f"{i} {s}"}) + "\n"
            for i in ids
            for s in (0, 1)
        )
    )
    got = read_generations(
        run(models_file, tmp_path / "f", "from-file", samples=2, sampling=SAMPLING)
    )
    assert (got.answer == got.instance_id + " " + got["sample"].astype(str)).all() and len(
        got
    ) == 2 * len(ids)
    with pytest.raises(OcgInputError, match="no answer for instance .* sample 2"):
        run(models_file, tmp_path / "g", "from-file", samples=3, sampling=SAMPLING)


@pytest.mark.parametrize(
    "samples, sampling, where, what",
    [
        (2, None, "samples", "need sampled decoding"),
        (0, None, "samples", "a positive number of samples"),
        (True, SAMPLING, "samples", "a positive number of samples"),
        (2, {"temperature": 0}, "sampling.temperature", "a temperature > 0"),
        (2, {"temperature": 1, "top_p": 1.5}, "sampling.top_p", "at most"),
        (2, {"temperature": 1, "top_p": 0}, "sampling.top_p", "0 < top_p <= 1"),
        (2, {"top_p": 0.5}, "sampling.temperature", "missing"),
        (2, {"temperature": 1, "top_k": 5}, "sampling.top_k", "unknown key"),
    ],
)
def test_bad_samples_or_sampling_name_the_field(samples, sampling, where, what):
    with pytest.raises(OcgInputError) as exc:
        check_sampling("run.yaml: ", samples, sampling)
    assert exc.value.where == f"run.yaml: {where}" and what in exc.value.problem


def test_a_batch_seed_is_the_same_in_another_process_and_depends_on_the_sample_and_the_batch():
    code = (
        "from ocg.generation.sampling import batch_seed; print(batch_seed(42, 'ordered-t0-s1-p0'))"
    )
    other = subprocess.run(
        [sys.executable, "-c", code],
        env=dict(os.environ, PYTHONPATH=str(PROJECT_ROOT), PYTHONHASHSEED="123"),
        capture_output=True,
        text=True,
        check=True,
    )
    assert int(other.stdout) == batch_seed(42, "ordered-t0-s1-p0")
    assert len({batch_seed(42, "a"), batch_seed(43, "a"), batch_seed(42, "b")}) == 3


def test_the_run_plan_gives_notebook_01_samples_only_when_sampling(tmp_path):
    from dataclasses import replace

    from ocg.config.model_registry import get_model
    from ocg.config.requests import GenerateRequest, read_request, write_request
    from ocg.jobs.plan import GENERATE, Dirs, notebook_params

    base = {"models": ["m"], "conditions": ["ordered"], "subset_k": 1}
    dirs = Dirs(Path("g"), Path("s"), Path("r"))
    entries = {"m": get_model("smollm2-135m-instruct")}
    greedy = notebook_params(GENERATE, replace(checked_run(**base), entries=entries), dirs, ["m"])
    assert greedy.samples == 1 and greedy.sampling is None
    sampled = notebook_params(
        GENERATE,
        replace(
            checked_run(**base, samples=4, sampling={"temperature": 0.7, "top_p": 1.0}),
            entries=entries,
        ),
        dirs,
        ["m"],
    )
    assert sampled.samples == 4 and sampled.sampling.model_dump() == {
        "temperature": 0.7,
        "top_p": 1.0,
    }
    # notebook 01 rebuilds the very request from its file
    assert read_request(GenerateRequest, write_request(sampled, tmp_path / "r.json")) == sampled


def test_a_run_file_with_samples_and_no_sampling_is_refused(tmp_path):
    from ocg.jobs.pipeline import load_run

    path = tmp_path / "run.yaml"
    path.write_text("name: t\nmodels: [smollm2-135m-instruct]\nconditions: [ordered]\nsamples: 3\n")
    with pytest.raises(OcgInputError, match=r"run.yaml: samples: 3 samples need sampled decoding"):
        load_run(path)
    path.write_text(
        "name: t\nmodels: [smollm2-135m-instruct]\nconditions: [ordered]\nsamples: 3\n"
        "sampling: {temperature: 0.7}\n"
    )
    assert load_run(path).file.sampling.model_dump() == {"temperature": 0.7, "top_p": 1.0}
