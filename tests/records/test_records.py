"""The run card and the scoring signature as typed records (ocg/records/): what generation and
scoring write reads back to the same JSON, older files read with defaults, bad ones are named."""

import json

import pytest

from ocg.cli import main
from ocg.core.errors import OcgInputError
from ocg.core.layout import ModelGenerations, ModelScores
from ocg.generation.run_generation import generate
from ocg.records import RunCard, Signature
from ocg.results.scores import load_scores
from ocg.scoring import score_model


@pytest.fixture
def scored(tmp_path):
    """A replay model's generations (24 instances) and their pBLEU scores."""
    models = tmp_path / "models.yaml"
    models.write_text(
        "models:\n  synth: {backend: replay, id: meta-llama/Llama-3.2-1B-Instruct, batch_size: 64}\n"
    )
    gen = generate(
        "synth",
        conditions=["ordered"],
        subset_k=1,
        template_ids=[0],
        out_dir=tmp_path / "gen",
        models_file=models,
        progress=False,
    )
    return ModelGenerations(gen), ModelScores(
        score_model(gen, metrics=["pbleu"], out_dir=tmp_path / "s", progress=False)
    )


def _as_written(record) -> str:
    return json.dumps(record.to_json(), indent=2, default=str) + "\n"


def test_what_generation_and_scoring_wrote_reads_back_to_the_same_bytes(scored):
    gen, scores = scored
    card = RunCard.read(gen.run_card)
    assert _as_written(card) == gen.run_card.read_text()
    assert card.status == "complete" and card.model == "synth"
    assert card.model_id == "meta-llama/Llama-3.2-1B-Instruct" and card.revision.startswith(
        "synthetic-v2"
    )
    assert card.records["ordered"].asked == card.records["ordered"].present == 24
    assert card.selection_of("ordered").to_json() == {
        "subset_k": 1,
        "dataset": None,
        "template_ids": [0],
    }
    sig = Signature.read(scores.signature)
    assert _as_written(sig) == scores.signature.read_text()
    assert (
        sig.metrics == ["pbleu"] and list(sig.families) == ["pbleu"] and sig.status("pbleu") == "ok"
    )
    assert sig.completeness["run_status"] == "complete" and sig.family("coverage") == {}
    assert set(sig.files) == {scores.answers.name, scores.groups.name, scores.summary.name}
    assert load_scores(scores.folder.parent).signatures["synth"] == Signature.from_json(
        {k: v for k, v in json.loads(scores.signature.read_text()).items() if k != "config"}
    )


def test_older_files_read_with_defaults_and_keep_keys_this_version_does_not_know():
    check = {"checked": 8, "differ": 1}
    old = {
        "model": "m",
        "settings": {"id": "org/m"},
        "an_old_key": 1,
        "runs": [
            {
                "conditions": ["ordered"],
                "subset_k": 2,
                "dataset": None,
                "template_ids": None,
                "batch_invariance": check,
            },
            {"conditions": ["original"]},
        ],
    }
    card = RunCard.from_json(old)
    assert card.status == "unknown" and card.instances == {} and card.records is None
    assert card.selection_of("ordered").to_json() == {
        "subset_k": 2,
        "dataset": None,
        "template_ids": None,
    }
    assert card.selection_of("ordered_one_shot") is None
    assert card.batch_invariance.to_json() == check and card.batch_invariance.differ == 1
    written = card.to_json()
    assert "records" not in written and "checked_utc" not in written and written["an_old_key"] == 1
    sig = Signature.from_json({"metrics": ["coverage"], "coverage": {"rule": "r"}, "kept": [1]})
    assert sig.completeness is None and sig.files is None and sig.metric_keys == {}
    assert sig.family("coverage") == {"rule": "r"} and sig.status("coverage") == "ok"
    assert sig.to_json() == {
        "format_version": 1,
        "metrics": ["coverage"],
        "code_sha256": {},
        "metric_keys": {},
        "coverage": {"rule": "r"},
        "kept": [1],
    }


def test_a_record_of_the_wrong_shape_is_refused_naming_the_field():
    with pytest.raises(
        OcgInputError, match=r"^gen/m/run_card.json: runs: expected a list, got 'x'"
    ):
        RunCard.from_json({"runs": "x"}, "gen/m/run_card.json")
    with pytest.raises(
        OcgInputError, match=r"^s/m/signature.json: expected a JSON object \(a scoring signature\)"
    ):
        Signature.from_json([], "s/m/signature.json")
    with pytest.raises(OcgInputError, match=r"seconds: expected a number, got True"):
        Signature.from_json({"seconds": True})


def test_a_bad_run_card_or_signature_is_an_error_naming_it_not_a_traceback(scored, capsys):
    gen, scores = scored
    card = json.loads(gen.run_card.read_text())
    gen.run_card.write_text(json.dumps({**card, "instances": ["ordered"]}))
    assert (
        main(
            [
                "score",
                "--generations",
                str(gen.folder.parent),
                "--out",
                str(scores.folder.parent),
                "--metrics",
                "pbleu",
            ]
        )
        == 2
    )
    assert f"ocg: error: {gen.run_card}: instances: expected an object" in capsys.readouterr().err
    sig = json.loads(scores.signature.read_text())
    scores.signature.write_text(json.dumps({**sig, "metric_keys": ["pbleu"]}))
    with pytest.raises(
        OcgInputError,
        match=r"unfinished score set: signature.json: metric_keys: expected an object",
    ):
        load_scores(scores.folder.parent)
