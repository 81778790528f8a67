"""A finished replay or reference model whose file moved: its answers are stored, so `ocg
generate` and `ocg report --check` go on without the file (the card keeps the file's revision);
with answers still to make, or another file's content, the refusal names the entry's file."""

import json
import shutil

import yaml

from ocg.cli import main
from ocg.generation import select_instances
from ocg.records import RunCard, RunStatus


def _setup(tmp_path):
    rows = select_instances(conditions=["original"], subset_k=1, template_ids=[0])
    answers = tmp_path / "answers.jsonl"
    answers.write_text(
        "".join(
            json.dumps({"instance_id": i, "answer": f"A {i}."}) + "\n" for i in rows.instance_id
        )
    )
    models = tmp_path / "m.yaml"
    models.write_text(
        yaml.safe_dump(
            {
                "models": {
                    "rp": {"backend": "replay", "id": "x/rp", "replay": {"file": str(answers)}}
                }
            }
        )
    )
    run = tmp_path / "run.yaml"
    run.write_text(
        yaml.safe_dump(
            {
                "name": "moved",
                "models": ["rp"],
                "models_file": str(models),
                "conditions": ["original"],
                "subset_k": 1,
                "template_ids": [0],
                "metrics": ["coverage"],
                "analysis": ["03_main_results"],
                "outputs": str(tmp_path / "out"),
            }
        )
    )
    return answers, models, run


def test_a_finished_replay_model_goes_on_once_its_file_moved(tmp_path, capsys):
    answers, models, run = _setup(tmp_path)
    gen = ["generate", "rp", "--models-file", str(models), "--conditions", "original"]
    gen += ["--subset-k", "1", "--templates", "0", "--out", str(tmp_path / "out" / "generations")]
    capsys.readouterr()
    assert main(["report", str(run), "--check"]) == 0
    assert main(gen) == 0
    card = tmp_path / "out" / "generations" / "rp" / "run_card.json"
    first = RunCard.read(card)
    assert first.status == RunStatus.COMPLETE and first.settings.resolved_revision.startswith(
        "file sha256 "
    )
    shutil.move(answers, tmp_path / "elsewhere.jsonl")  # the models file still names the old place
    capsys.readouterr()
    assert main(["report", str(run), "--check"]) == 0, capsys.readouterr().err
    assert main(gen) == 0, capsys.readouterr().err
    again = RunCard.read(card)
    assert again.status == RunStatus.COMPLETE
    assert again.settings.resolved_revision == first.settings.resolved_revision

    # an answer lost from the store: the file is needed again, and the error names it
    store = card.with_name("original.jsonl")
    store.write_text("".join(store.read_text().splitlines(keepends=True)[:-1]))
    capsys.readouterr()
    assert main(gen) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("ocg: error: "), err
    assert "models.rp.replay.file" in err[0] and "no such file" in err[0], err


def test_without_stored_answers_a_missing_file_is_refused_at_load(tmp_path, capsys):
    answers, _, run = _setup(tmp_path)
    answers.unlink()
    assert main(["report", str(run), "--check"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "models.rp.replay.file" in err[0], err


def test_another_files_content_at_the_old_place_is_refused(tmp_path, capsys):
    answers, models, _ = _setup(tmp_path)
    gen = ["generate", "rp", "--models-file", str(models), "--conditions", "original"]
    gen += ["--subset-k", "1", "--templates", "0", "--out", str(tmp_path / "g")]
    assert main(gen) == 0
    answers.write_text(answers.read_text().replace('."', '!"'))
    capsys.readouterr()
    assert main(gen) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "resolved_revision" in err[0], err
