"""The replay backend: synthetic and file answers through the real store, run card and resume."""

import json

import pytest

from ocg.config.model_registry import load_models
from ocg.core.errors import OcgInputError
from ocg.generation import GenerationStore, generate, read_generations
from ocg.generation.backends.synthetic import WRITER_VERSION, model_rates, write_answer
from ocg.metrics import degenerate
from tests.helpers import disk_record

CONDITIONS = ["original", "ordered", "ordered_one_shot"]


@pytest.fixture
def models_file(tmp_path):
    path = tmp_path / "models.yaml"
    path.write_text(f"""models:
  synth-a: {{backend: replay, id: meta-llama/Llama-3.2-1B-Instruct, batch_size: 64}}
  synth-b: {{backend: replay, id: Qwen/Qwen2.5-7B-Instruct, batch_size: 64}}
  synth-set: {{backend: replay, id: x/y, replay: {{rates: {{repeat: 0.0, degenerate: 0.0, drop: 0.0}}}}}}
  from-file: {{backend: replay, id: x/z, replay: {{file: {tmp_path / "answers.jsonl"}}}}}
""")
    return path


def run(models_file, name, out, **kw):
    kw = {"conditions": CONDITIONS, "subset_k": 2, **kw}
    return generate(name, out_dir=out, models_file=models_file, progress=False, **kw)


def test_synthetic_answers_go_through_the_store_and_are_deterministic(models_file, tmp_path):
    a = read_generations(run(models_file, "synth-a", tmp_path / "one"))
    again = read_generations(run(models_file, "synth-a", tmp_path / "two"))
    assert len(a) == 2 * 24 * 6 * 3 and set(a.condition) == set(CONDITIONS)
    assert (
        a.sort_values("instance_id").answer.tolist()
        == again.sort_values("instance_id").answer.tolist()
    )
    assert (
        a.prompt_sha256.str.len().eq(64).all()
        and a.prompt.map(lambda p: p[-1]["role"] == "user").all()
    )
    card = json.loads((tmp_path / "one" / "synth-a" / "run_card.json").read_text())
    assert card["status"] == "complete" and card["backend"]["backend"] == "replay"
    assert card["settings"]["resolved_revision"].startswith(WRITER_VERSION)
    # realistic: concepts present mostly, repeats inside groups, not all in order
    groups = a.groupby(["condition", "template_id", "set_id"]).answer.nunique() / 24
    assert 0.3 < groups.mean() < 1.0
    b = read_generations(run(models_file, "synth-b", tmp_path / "one"))
    assert (
        a.sort_values("instance_id").answer.tolist() != b.sort_values("instance_id").answer.tolist()
    )


def test_rates_shape_the_answers(models_file, tmp_path):
    clean = read_generations(run(models_file, "synth-set", tmp_path))
    assert clean.answer.nunique() == len(clean)  # repeat 0: every answer its own
    flags = degenerate.flag_answers(clean.answer)
    assert not flags[["empty", "markdown", "overlong", "non_ascii"]].any().any()
    row = {
        "condition": "ordered",
        "template_id": 0,
        "set_id": "s",
        "perm_index": 3,
        "concepts": ["dog", "catch", "frisbee", "throw"],
        "pos_pattern": "NVNV",
    }
    always = write_answer(row, "m", 1, {**model_rates("m", 1), "degenerate": 1.0})
    assert degenerate.flags(always) != degenerate.flags("A dog catches the frisbee.")


def test_resume_writes_only_what_is_missing_and_the_same_bytes(models_file, tmp_path):
    model_dir = run(models_file, "synth-a", tmp_path)
    path = model_dir / "ordered.jsonl"
    full = path.read_bytes()
    lines = full.splitlines(keepends=True)
    path.write_bytes(b"".join(lines[:100]) + lines[100][:30])  # killed mid-write
    run(models_file, "synth-a", tmp_path)
    assert len(GenerationStore(path).done) == len(lines)
    by_id = {disk_record(x)["instance_id"]: disk_record(x)["answer"] for x in full.splitlines()}
    assert {r["instance_id"]: r["answer"] for r in GenerationStore(path).records()} == by_id


def test_file_answers_are_replayed_and_checked(models_file, tmp_path):
    source = read_generations(run(models_file, "synth-a", tmp_path / "src", conditions=["ordered"]))
    answers = tmp_path / "answers.jsonl"
    answers.write_text(
        "".join(
            json.dumps({"instance_id": i, "answer": f"Answer {n}."}) + "\n"
            for n, i in enumerate(source.instance_id)
        )
    )
    out = read_generations(run(models_file, "from-file", tmp_path / "out", conditions=["ordered"]))
    assert dict(zip(out.instance_id, out.answer)) == {
        i: f"Answer {n}." for n, i in enumerate(source.instance_id)
    }
    with pytest.raises(OcgInputError, match="no answer for 288 of the 576"):
        run(models_file, "from-file", tmp_path / "more", conditions=["ordered", "original"])
    answers.write_text(answers.read_text() + "{not json\n")
    with pytest.raises(OcgInputError, match=r"answers.jsonl:289: not JSON"):
        run(models_file, "from-file", tmp_path / "bad", conditions=["ordered"])
    answers.write_text(
        "".join(
            json.dumps({"instance_id": i, "answer": "Other."}) + "\n" for i in source.instance_id
        )
    )
    with pytest.raises(
        OcgInputError, match="resolved_revision"
    ):  # another file into the same directory
        run(
            models_file,
            "from-file",
            tmp_path / "out",
            conditions=["ordered"],
            template_ids=[0, 1, 2, 3, 4, 5],
        )


@pytest.mark.parametrize(
    "entry, where",
    [
        ("{backend: replay, id: a/b, quantization: 4bit}", "models.m.quantization"),
        (
            "{backend: replay, id: a/b, replay: {rates: {reorder: 2}}}",
            "models.m.replay.rates.reorder",
        ),
        (
            "{backend: replay, id: a/b, replay: {rates: {speed: 0.1}}}",
            "models.m.replay.rates.speed",
        ),
        ("{backend: replay, id: a/b, replay: {path: x}}", "models.m.replay.path"),
        ("{id: a/b, replay: {file: x.jsonl}}", "models.m.replay"),
    ],
)
def test_bad_replay_entries_are_refused(tmp_path, entry, where):
    path = tmp_path / "models.yaml"
    path.write_text(f"models:\n  m: {entry}\n")
    with pytest.raises(OcgInputError, match=where.replace(".", r"\.")):
        load_models(path)
