"""Bad input is refused before any work, with `ocg: error:` naming the file, line or field."""

import json
import os
import time
from pathlib import Path

import pytest
import yaml

from ocg.cli import main
from ocg.core.errors import OcgInputError
from ocg.jobs.pipeline import load_run
from ocg.results.scores import load_scores
from ocg.sweep import load_sweep
from tests.config.bad_params import BAD_RUNS
from tests.helpers import write_generations

DEMO = yaml.safe_load(open("params/runs/demo.yaml"))


def run_cli(capsys, *args):
    t0 = time.time()
    code = main(list(args))
    return code, capsys.readouterr().err, time.time() - t0


@pytest.mark.parametrize(
    "args, message",
    [
        (["--batch-size", "-1"], "batch_size: got -1; expected a positive integer"),
        (["--batch-size", "0"], "batch_size: got 0; expected a positive integer"),
        (["--subset-k", "0"], "subset_k: got 0; expected a positive number"),
        (["--templates", "99"], "template_ids: unknown template id 99"),
        (["--conditions", "orderd"], "unknown condition 'orderd'"),
        (["--dataset", "/nonexistent"], "/nonexistent: not a built dataset"),
    ],
)
def test_generate_refuses_bad_arguments_before_loading_a_model(capsys, tmp_path, args, message):
    code, err, seconds = run_cli(
        capsys, "generate", "smollm2-135m-instruct", "--out", str(tmp_path), *args
    )
    assert code == 2 and err.startswith("ocg: error: ") and message in err, err
    assert "Traceback" not in err and seconds < 20
    assert not list(tmp_path.rglob("*.jsonl"))


def write_run(tmp_path, **changes):
    run = {**DEMO, **changes}
    path = tmp_path / "run.yaml"
    path.write_text(yaml.safe_dump(run))
    return path


@pytest.mark.parametrize("changes, where, what", BAD_RUNS)
def test_run_files_are_validated_completely_on_load(tmp_path, changes, where, what):
    path = write_run(tmp_path, **changes)
    with pytest.raises(OcgInputError) as info:
        load_run(path)
    assert str(info.value).startswith(f"{path}: {where}: ") and what in str(info.value), str(
        info.value
    )


def test_report_with_a_bad_run_file_is_an_error_not_a_traceback(tmp_path, capsys):
    code, err, _ = run_cli(capsys, "report", str(write_run(tmp_path, models=[])))
    assert code == 2 and err.startswith(f"ocg: error: {tmp_path / 'run.yaml'}: models")


def test_sweep_files_check_slurm_fields(tmp_path):
    sweep = yaml.safe_load(open("params/sweeps/demo.yaml"))
    for key, value, what in (
        ("time", "1 hour", "expected Slurm's [D-]HH:MM:SS"),
        ("mem", "lots", "expected e.g. 16G"),
        ("cpus", 0, "expected a positive integer"),
    ):
        bad = json.loads(json.dumps(sweep))
        bad["resources"]["default"][key] = value
        path = tmp_path / "s.yaml"
        path.write_text(yaml.safe_dump(bad))
        with pytest.raises(OcgInputError, match=rf"resources.default.{key}: .*{what[:12]}"):
            load_sweep(path)


ROW = {
    "set_id": "s1",
    "template_id": 0,
    "perm_index": 0,
    "concepts": ["dog", "run"],
    "answer": "A dog runs.",
}


@pytest.mark.parametrize(
    "bad_line, what",
    [
        ("{}", "record has no 'instance_id' field"),
        ("7", "expected a JSON object"),
        (
            '{"instance_id": "x", "condition": "ordered", "template_id": 0, "set_id": "s", "perm_index": 1, '
            '"concepts": ["a"], "pos_pattern": "N", "answer": 5, "answer_status": "ok"}',
            "field 'answer' must be str or null",
        ),
    ],
)
def test_score_refuses_records_of_the_wrong_shape_before_any_metric(
    tmp_path, capsys, bad_line, what
):
    model_dir = write_generations(tmp_path / "gen", "m", [ROW])
    with (model_dir / "ordered.jsonl").open("a") as fh:
        fh.write(bad_line + "\n")
    code, err, seconds = run_cli(
        capsys, "score", "--generations", str(tmp_path / "gen"), "--out", str(tmp_path / "s")
    )
    assert code == 2 and f"{model_dir / 'ordered.jsonl'}:2: " in err and what in err, err
    assert not (tmp_path / "s").exists() and seconds < 20


def test_analyses_name_models_without_scores(tmp_path):
    with pytest.raises(
        OcgInputError, match=r"no scored models in /.*; run 02_score first"
    ):  # the folder searched
        load_scores(tmp_path)
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "signature.json").write_text("{}")
    with pytest.raises(
        OcgInputError, match=r"no scores for \['typo-model'\] \(scored here: \['a'\]\)"
    ):
        load_scores(tmp_path, ["a", "typo-model"])


def test_non_utf8_inputs_name_file_and_byte_offset(tmp_path):
    from ocg.data import read_concept_sets
    from ocg.generation import GenerationStore

    sets = tmp_path / "sets.jsonl"
    sets.write_bytes(
        b'{"id": "a", "concept_set": ["dog_N", "run_V", "ball_N", "park_N"]}\n{"id": "b\xe9"}\n'
    )
    with pytest.raises(OcgInputError, match=rf"{sets}: not UTF-8 text: byte 76 is 0xe9"):
        read_concept_sets(sets)
    store = tmp_path / "ordered.jsonl"
    good = json.dumps(
        {
            "instance_id": "x",
            "condition": "ordered",
            "template_id": 0,
            "set_id": "s",
            "perm_index": 0,
            "concepts": ["a"],
            "pos_pattern": "N",
            "answer": "A.",
            "answer_status": "ok",
        }
    )
    store.write_bytes(good.encode() + b"\n" + b'{"answer": "\xff"}\n')
    with pytest.raises(
        OcgInputError,
        match=rf"{store}:2: not UTF-8: byte offset {len(good) + 13} of the file is 0xff",
    ):
        GenerationStore(store)


def test_repair_command_keeps_the_first_record_of_each_id(tmp_path, capsys):
    model_dir = write_generations(tmp_path, "m", [ROW, dict(ROW, perm_index=1)])
    path = model_dir / "ordered.jsonl"
    lines = path.read_text().splitlines()
    path.write_text("\n".join(lines + [lines[0].replace("A dog runs.", "A second answer.")]) + "\n")
    code, err, _ = run_cli(
        capsys, "score", "--generations", str(tmp_path), "--out", str(tmp_path / "s")
    )
    assert code == 2 and "written twice" in err and f"ocg repair {model_dir}" in err
    assert main(["repair", str(model_dir)]) == 0
    assert "kept 2 records, removed 1" in capsys.readouterr().out
    from ocg.generation import read_generations

    assert read_generations(model_dir).answer.tolist() == ["A dog runs.", "A dog runs."]


def test_a_run_file_says_where_its_outputs_go(tmp_path, monkeypatch):
    import ocg.jobs.pipeline
    from ocg.core.paths import PROJECT_ROOT, model_cache_dir

    assert load_run(write_run(tmp_path)).file.outputs is None  # OCG_OUTPUTS, else outputs/
    # relative: under OCG_OUTPUTS when set (each test's own, tests/conftest.py), else the project root
    assert load_run(write_run(tmp_path, outputs="runs/mine")).file.outputs == str(
        Path(os.environ["OCG_OUTPUTS"]) / "runs" / "mine"
    )
    monkeypatch.delenv("OCG_OUTPUTS")
    assert load_run(write_run(tmp_path, outputs="runs/mine")).file.outputs == str(
        PROJECT_ROOT / "runs" / "mine"
    )
    assert load_run(write_run(tmp_path, outputs=str(tmp_path / "o"))).file.outputs == str(
        tmp_path / "o"
    )
    seen = {}

    def steps_seen(run, staging, final):
        seen.update(env=os.environ["OCG_OUTPUTS"], cache=model_cache_dir(), final=final)
        return 0, {}, True

    monkeypatch.setattr(ocg.jobs.pipeline, "_write_report", steps_seen)
    monkeypatch.setattr(ocg.jobs.pipeline, "finish", lambda *a: None)
    monkeypatch.setenv("OCG_OUTPUTS", str(tmp_path / "elsewhere"))
    monkeypatch.delenv("OCG_MODEL_CACHE", raising=False)
    ocg.jobs.pipeline.run_report(write_run(tmp_path, outputs=str(tmp_path / "o")))
    assert seen == {
        "env": str(tmp_path / "o"),
        "cache": PROJECT_ROOT / "outputs" / "models",  # not converted again
        "final": tmp_path / "o" / "reports" / DEMO["name"],
    }
    assert (
        os.environ["OCG_OUTPUTS"] == str(tmp_path / "elsewhere")
        and "OCG_MODEL_CACHE" not in os.environ
    )  # restored


def test_score_takes_the_perplexity_fallback(tmp_path, monkeypatch, capsys):
    import ocg.scoring

    asked = []
    monkeypatch.setattr(ocg.scoring, "score_all", lambda request: asked.append(request) or [])
    assert main(["score", "--perplexity-fallback", "embedded:smollm2-135m-instruct"]) == 0
    assert asked[0].scoring.perplexity_fallback == "embedded:smollm2-135m-instruct"
    assert (
        main(["score"]) == 0 and asked[1].scoring == ocg.scoring.load_scoring_config()
    )  # params/scoring.yaml decides
