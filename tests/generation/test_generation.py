"""Generation with the real embedded SmolLM2 on the CPU: answers, determinism, 4-bit, resume."""

import dataclasses
import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time

import pytest

from ocg.config.model_registry import get_model
from ocg.core.errors import OcgInputError
from ocg.core.lock import LockHeld
from ocg.data import load_templates
from ocg.generation import generate, read_generations
from ocg.generation.backends.chat import detect_system_mode
from ocg.weights.embedded import ensure_converted

pytestmark = [pytest.mark.slow, pytest.mark.tf4]

# One small, fixed workload: 1 concept set x 24 orders x 2 templates, batches of 8.
WORK = dict(conditions=["ordered"], subset_k=1, template_ids=[0, 1], batch_size=8)
COMPARE = [
    "instance_id",
    "raw",
    "answer",
    "answer_status",
    "finish_reason",
    "prompt_tokens",
    "completion_tokens",
    "batch_index",
]


def table(model_dir):
    df = read_generations(model_dir)
    return df.sort_values("instance_id")[COMPARE].reset_index(drop=True)


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """An uninterrupted run."""
    return generate(
        "smollm2-135m-instruct", out_dir=tmp_path_factory.mktemp("ref"), progress=False, **WORK
    )


def test_real_answers(reference):
    df = read_generations(reference)
    assert len(df) == 48 and df.instance_id.is_unique
    assert df.answer.str.len().gt(0).all()
    # a real model writes about its concepts: most answers use at least one of them
    hits = df.apply(lambda r: any(w in r.answer.lower() for w in r.concepts), axis=1)
    assert hits.mean() > 0.5, df.answer.head().tolist()
    # each record holds the prompt exactly as rendered, and its hash
    assert df.prompt.str.startswith("<|im_start|>system\nYou are a helpful assistant.").all()
    assert (
        df.prompt.map(lambda p: hashlib.sha256(p.encode()).hexdigest()) == df.prompt_sha256
    ).all()
    assert set(df.finish_reason) <= {"stop", "length"}
    assert (df.completion_tokens <= 32).all() and (df.prompt_tokens > 20).all()
    card = json.loads((reference / "run_card.json").read_text())
    assert card["settings"]["decoding"] == "greedy" and card["settings"]["seed"] == 42
    assert card["settings"]["system_mode"] == "system"
    assert card["settings"]["resolved_revision"].startswith("gguf-sha256:")
    assert len(card["settings"]["chat_template_sha256"]) == 64
    assert card["runs"][-1]["status"] == "complete" and card["runs"][-1]["written"] == 48
    assert card["status"] == "complete" and card["settings"]["prompt_date"] == "2024-07-26"
    assert card["settings"]["batch_size"] == 8 and set(card["instances"]) == {"ordered"}
    gc = card["backend"]["generation_config"]  # the complete effective configuration
    assert gc["do_sample"] is False and gc["num_beams"] == 1 and gc["repetition_penalty"] == 1.0
    assert gc["max_new_tokens"] == 32 and len(gc) > 30
    check = card["runs"][-1]["batch_invariance"]
    assert check["checked"] == 8 and check["batched_size"] == 8 and 0 <= check["differ"] <= 8
    assert check["share_differ"] == check["differ"] / 8
    for key in ("git", "packages", "host"):
        assert key in card["provenance"]


def test_two_runs_give_identical_records(reference, tmp_path):
    again = generate("smollm2-135m-instruct", out_dir=tmp_path, progress=False, **WORK)
    assert table(again).equals(table(reference))


def test_rerun_skips_finished_instances(reference, tmp_path):
    target = tmp_path / "smollm2-135m-instruct"
    shutil.copytree(reference, target)
    before = (target / "ordered.jsonl").read_bytes()
    generate("smollm2-135m-instruct", out_dir=tmp_path, progress=False, **WORK)
    assert (target / "ordered.jsonl").read_bytes() == before


@pytest.mark.parametrize(
    "change, message",
    [
        (dict(spec=dict(max_new_tokens=20)), "setting 'max_new_tokens' was 32, now 20"),
        (
            dict(spec=dict(prompt_date="2025-01-01")),
            "setting 'prompt_date' was '2024-07-26', now '2025-01-01'",
        ),
        (dict(work=dict(batch_size=4)), "setting 'batch_size' was 8, now 4"),
        (
            dict(work=dict(subset_k=2, template_ids=[0])),
            "condition 'ordered' holds another instance set",
        ),
    ],
)
def test_a_finished_directory_refuses_other_settings(reference, tmp_path, change, message):
    """Even with nothing left to generate, a run asking for other settings is refused."""
    shutil.copytree(reference, tmp_path / "smollm2-135m-instruct")
    before = (tmp_path / "smollm2-135m-instruct" / "ordered.jsonl").read_bytes()
    spec = get_model("smollm2-135m-instruct").model_copy(update=dict(**change.get("spec", {})))
    with pytest.raises(OcgInputError, match=re.escape(message)):
        generate(spec, out_dir=tmp_path, progress=False, **{**WORK, **change.get("work", {})})
    assert (tmp_path / "smollm2-135m-instruct" / "ordered.jsonl").read_bytes() == before


def test_attention_is_a_setting_and_a_card_without_it_ran_auto(reference, tmp_path):
    """The entry's attention is recorded (and what `auto` resolved to); another one is refused in a
    finished directory; a card written before the setting existed reads as auto."""
    target = tmp_path / "smollm2-135m-instruct"
    shutil.copytree(reference, target)
    spec = get_model("smollm2-135m-instruct")
    card = json.loads((target / "run_card.json").read_text())
    assert card["settings"]["attention"] == spec.attention
    assert card["backend"]["attention"] == ("sdpa" if spec.attention == "auto" else spec.attention)
    other = "sdpa" if spec.attention == "eager" else "eager"
    with pytest.raises(
        OcgInputError, match=f"setting 'attention' was '{spec.attention}', now '{other}'"
    ):
        generate(
            spec.model_copy(update=dict(attention=other)), out_dir=tmp_path, progress=False, **WORK
        )
    del card["settings"]["attention"]
    (target / "run_card.json").write_text(json.dumps(card))
    generate(
        spec.model_copy(update=dict(attention="auto")), out_dir=tmp_path, progress=False, **WORK
    )
    with pytest.raises(OcgInputError, match="setting 'attention' was 'auto', now 'eager'"):
        generate(
            spec.model_copy(update=dict(attention="eager")),
            out_dir=tmp_path,
            progress=False,
            **WORK,
        )


def test_the_entrys_attention_is_the_one_that_runs():
    """attention reaches from_pretrained: the loaded model runs the implementation asked for."""
    from ocg.generation.backends.transformers_backend import TransformersBackend

    spec = get_model("smollm2-135m-instruct")
    for attention in ("eager", "sdpa"):
        backend = TransformersBackend(spec.model_copy(update=dict(attention=attention)))
        out = backend.generate([backend.render([{"role": "user", "content": "Say hi."}])])
        assert out[0]["completion_tokens"] > 0
        assert backend.card().attention == attention == backend.model.config._attn_implementation


def test_a_load_cut_short_leaves_a_card_without_model_settings(monkeypatch):
    """A signal between from_pretrained and the generation config (CI saw SIGTERM there): the card
    the stopped run writes names no half-loaded model instead of failing on a missing config."""
    from ocg.core.interrupts import Terminated
    from ocg.generation.backends.transformers_backend import TransformersBackend

    backend = TransformersBackend(get_model("smollm2-135m-instruct"))

    def cut(self):
        raise Terminated("stopped by signal SIGTERM")

    monkeypatch.setattr(TransformersBackend, "_generation_config", cut)
    with pytest.raises(Terminated):
        backend._load_model()
    assert backend.model is not None and backend.generation_config is None
    card = backend.card()
    assert not card.has("generation_config") and not card.has("model_dtype")
    assert card.backend == backend.kind


def test_a_changed_prompt_is_refused(reference, tmp_path, monkeypatch):
    import ocg.generation.run_generation as run
    import ocg.generation.selection as selection

    shutil.copytree(reference, tmp_path / "smollm2-135m-instruct")
    edited = dataclasses.replace(load_templates(), answer_suffix="\nYour answer:")
    for module in (selection, run):  # the instances' prompts, and the system prompt
        monkeypatch.setattr(module, "load_templates", lambda *a, **k: edited)
    with pytest.raises(
        OcgInputError, match=r"ordered.jsonl:1: instance .* was asked another prompt"
    ):
        generate("smollm2-135m-instruct", out_dir=tmp_path, progress=False, **WORK)


def test_a_resume_that_finds_nothing_to_do_sets_the_true_state(reference, tmp_path):
    target = tmp_path / "smollm2-135m-instruct"
    shutil.copytree(reference, target)
    card = json.loads((target / "run_card.json").read_text())
    card["status"], card["runs"][-1]["status"] = "running", "running"  # died after its last write
    (target / "run_card.json").write_text(json.dumps(card))
    generate("smollm2-135m-instruct", out_dir=tmp_path, progress=False, **WORK)
    card = json.loads((target / "run_card.json").read_text())
    assert card["status"] == "complete" and card["runs"][-1]["status"] == "interrupted"


def test_model_generation_config_acts_only_when_asked(reference, tmp_path):
    """A repetition penalty in generation_config.json changes greedy answers: off by default."""
    source = ensure_converted("smollm2-135m-instruct")
    local = tmp_path / "penalised-model"
    local.mkdir()
    for f in source.iterdir():
        if f.name != "generation_config.json":
            (local / f.name).symlink_to(f)
    gc = json.loads((source / "generation_config.json").read_text())
    (local / "generation_config.json").write_text(json.dumps({**gc, "repetition_penalty": 1.8}))
    base = get_model("smollm2-135m-instruct").model_copy(update=dict(id=str(local), batch_check=0))
    plain = generate(
        base.model_copy(update=dict(name="plain")), out_dir=tmp_path, progress=False, **WORK
    )
    assert table(plain)[["instance_id", "raw"]].equals(table(reference)[["instance_id", "raw"]])
    card = json.loads((plain / "run_card.json").read_text())
    assert card["backend"]["generation_config"]["repetition_penalty"] == 1.0
    own = generate(
        base.model_copy(update=dict(name="own", decoding="model_defaults")),
        out_dir=tmp_path,
        progress=False,
        **WORK,
    )
    card = json.loads((own / "run_card.json").read_text())
    assert card["backend"]["generation_config"]["repetition_penalty"] == 1.8
    assert (table(own).raw != table(reference).raw).sum() >= 5


def test_a_second_writer_is_refused_at_once(tmp_path):
    out_file = tmp_path / "smollm2-135m-instruct" / "ordered.jsonl"
    cmd = [
        sys.executable,
        "-m",
        "ocg.cli",
        "generate",
        "smollm2-135m-instruct",
        "--conditions",
        "ordered",
        "--subset-k",
        "1",
        "--templates",
        "0",
        "1",
        "--batch-size",
        "8",
        "--out",
        str(tmp_path),
    ]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.time() + 240
        while not (out_file.exists() and out_file.stat().st_size) and time.time() < deadline:
            assert proc.poll() is None
            time.sleep(0.05)
        t0 = time.time()
        with pytest.raises(LockHeld, match=rf"PID {proc.pid} on .* is writing here"):
            generate("smollm2-135m-instruct", out_dir=tmp_path, progress=False, **WORK)
        assert time.time() - t0 < 30  # refused before loading anything heavy
    finally:
        proc.kill()
        proc.wait()
    records = read_generations(out_file.parent)
    assert records.instance_id.is_unique


def kill_once_written(cmd: list[str], out_file, lines: int) -> None:
    """Run `cmd` and SIGKILL it as soon as `out_file` holds `lines` records (within 240 s)."""
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 240
    try:
        while time.time() < deadline:
            if (out_file.read_text().count("\n") if out_file.exists() else 0) >= lines:
                break
            assert proc.poll() is None, "generation ended before it could be killed"
            time.sleep(0.02)
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait()


def test_kill_and_resume_equals_uninterrupted(reference, tmp_path):
    out_file = tmp_path / "smollm2-135m-instruct" / "ordered.jsonl"
    cmd = [
        sys.executable,
        "-m",
        "ocg.cli",
        "generate",
        "smollm2-135m-instruct",
        "--conditions",
        "ordered",
        "--subset-k",
        "1",
        "--templates",
        "0",
        "1",
        "--batch-size",
        "8",
        "--out",
        str(tmp_path),
    ]
    kill_once_written(cmd, out_file, 8)
    killed_at = out_file.read_text().count("\n")
    assert 8 <= killed_at < 48, killed_at
    with out_file.open("a") as fh:
        fh.write('{"instance_id": "ordered-t0-torn')  # as if killed in the middle of a write
    generate("smollm2-135m-instruct", out_dir=tmp_path, progress=False, **WORK)
    resumed = table(out_file.parent)
    assert resumed.instance_id.is_unique and len(resumed) == 48
    assert resumed.equals(table(reference))
    card = json.loads((out_file.parent / "run_card.json").read_text())
    assert card["runs"][-1]["repaired_torn_bytes"] == {
        "ordered": len('{"instance_id": "ordered-t0-torn')
    }
    assert card["runs"][-2]["status"] == "interrupted" and card["status"] == "complete"


def test_four_bit_path_runs_on_cpu(tmp_path):
    spec = get_model("smollm2-135m-instruct-4bit").model_copy(update=dict(max_new_tokens=12))
    model_dir = generate(
        spec,
        out_dir=tmp_path,
        progress=False,
        conditions=["ordered"],
        subset_k=1,
        template_ids=[0],
        batch_size=12,
    )
    df = read_generations(model_dir)
    assert len(df) == 24 and df.raw.str.strip().str.len().gt(0).all()
    card = json.loads((model_dir / "run_card.json").read_text())
    assert card["backend"]["loaded_in_4bit"] is True
    assert card["settings"]["quantization"] == "4bit"


REJECTING_TEMPLATE = (
    "{% if messages[0]['role'] == 'system' %}{{ raise_exception('System role not supported') }}"
    "{% endif %}{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n"
    "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


def test_system_role_rejected_falls_back_and_is_recorded(tmp_path):
    from transformers import AutoTokenizer

    source = ensure_converted("smollm2-135m-instruct")
    local = tmp_path / "no-system-model"
    local.mkdir()
    for f in source.iterdir():
        if f.suffix in (".safetensors",) or f.name in ("config.json", "generation_config.json"):
            (local / f.name).symlink_to(f)
    tok = AutoTokenizer.from_pretrained(source)
    tok.chat_template = REJECTING_TEMPLATE
    tok.save_pretrained(local)
    assert detect_system_mode(AutoTokenizer.from_pretrained(local)) == "folded"

    spec = get_model("smollm2-135m-instruct").model_copy(
        update=dict(name="no-system", id=str(local), max_new_tokens=8)
    )
    model_dir = generate(
        spec,
        out_dir=tmp_path / "gen",
        progress=False,
        conditions=["ordered"],
        subset_k=1,
        template_ids=[0],
        batch_size=24,
    )
    df = read_generations(model_dir)
    assert len(df) == 24 and set(df.system_mode) == {"folded"}
    card = json.loads((model_dir / "run_card.json").read_text())
    assert card["settings"]["system_mode"] == "folded"


def test_cuda_oom_halves_the_batch_and_records_it(tmp_path, monkeypatch):
    import torch

    from ocg.generation.backends.transformers_backend import TransformersBackend

    real = TransformersBackend._generate_raw
    sizes = []

    def fake_oom(self, texts, seed, grammars=None):
        sizes.append(len(texts))
        if len(texts) > 3:
            raise torch.cuda.OutOfMemoryError("CUDA out of memory. Tried to allocate 2 GiB")
        return real(self, texts, seed, grammars)

    monkeypatch.setattr(TransformersBackend, "_generate_raw", fake_oom)
    spec = get_model("smollm2-135m-instruct").model_copy(
        update=dict(max_new_tokens=6, batch_check=0)
    )
    model_dir = generate(
        spec,
        out_dir=tmp_path,
        progress=False,
        conditions=["ordered"],
        subset_k=1,
        template_ids=[0],
        batch_size=12,
    )
    df = read_generations(model_dir)
    assert len(df) == 24 and df.instance_id.is_unique
    assert sizes[:3] == [12, 6, 3] and set(sizes[3:]) == {3}
    assert set(df.batch_size) == {3} and set(df.planned_batch_size) == {12}
    card = json.loads((model_dir / "run_card.json").read_text())
    assert card["backend"]["working_batch_size"] == 3


SAMPLED = dict(
    conditions=["ordered"],
    subset_k=1,
    template_ids=[0],
    batch_size=8,
    samples=2,
    sampling={"temperature": 1.0, "top_p": 0.9},
)
SMALL = "smol-sampled"  # the embedded model, 10 new tokens and no batch-1 check: a shorter test


def test_sampled_runs_reproduce_their_samples_and_a_killed_one_resumes_to_the_same(tmp_path):
    """Seeds per (sample, batch): a rerun at the same batch size, and a run killed in sample 1 and
    resumed, draw exactly the same samples; the samples differ from each other."""
    models = tmp_path / "models.yaml"
    models.write_text(
        f"models:\n  {SMALL}: {{id: 'embedded:smollm2-135m-instruct', quantization: none, "
        "max_new_tokens: 10, batch_check: 0}\n"
    )
    first = generate(SMALL, out_dir=tmp_path / "a", progress=False, models_file=models, **SAMPLED)
    again = generate(SMALL, out_dir=tmp_path / "b", progress=False, models_file=models, **SAMPLED)
    key = ["instance_id", "sample"]
    one, two = (read_generations(d).sort_values(key).reset_index(drop=True) for d in (first, again))
    assert len(one) == 48 and one[key + ["raw"]].equals(two[key + ["raw"]])
    by_sample = one.pivot(index="instance_id", columns="sample", values="raw")
    assert (by_sample[0] != by_sample[1]).mean() > 0.5
    card = json.loads((first / "run_card.json").read_text())
    assert card["backend"]["generation_config"]["do_sample"] is True
    assert card["backend"]["generation_config"]["top_p"] == 0.9 and card["sampling"]["seeds"] == [
        42,
        43,
    ]

    out_file = tmp_path / "c" / SMALL / "ordered.jsonl"
    cmd = [
        sys.executable,
        "-m",
        "ocg.cli",
        "generate",
        SMALL,
        "--models-file",
        str(models),
        "--conditions",
        "ordered",
        "--subset-k",
        "1",
        "--templates",
        "0",
        "--batch-size",
        "8",
        "--out",
        str(tmp_path / "c"),
        "--samples",
        "2",
        "--temperature",
        "1.0",
        "--top-p",
        "0.9",
    ]
    kill_once_written(cmd, out_file, 32)
    assert 32 <= out_file.read_text().count("\n") < 48  # killed in sample 1
    generate(SMALL, out_dir=tmp_path / "c", progress=False, models_file=models, **SAMPLED)
    resumed = read_generations(out_file.parent).sort_values(key).reset_index(drop=True)
    assert resumed[key + ["raw"]].equals(one[key + ["raw"]])
