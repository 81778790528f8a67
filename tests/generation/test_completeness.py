"""Generations that do not match what was asked: missing instances,
foreign records and unfinished runs are counted and shown; models run on different instances
are compared on the instances they share."""

import json

import pandas as pd
import pytest

from ocg.analysis import notebook
from ocg.analysis.paper_tables import table1
from ocg.cli import main
from ocg.core.errors import OcgInputError
from ocg.data.instances import instance_id
from ocg.generation import generate
from ocg.jobs.run_checks import check_run
from ocg.results.scores import load_scores
from ocg.scoring import score_model
from ocg.site.landing import write_index
from tests.helpers import checked_run, disk_record, write_generations

ASK = {
    "conditions": ["original", "ordered"],
    "subset_k": 2,
    "template_ids": [0, 1],
}  # 2 x 2 x 2 x 24


@pytest.fixture
def models_file(tmp_path):
    path = tmp_path / "models.yaml"
    path.write_text(
        "models:\n  synth: {backend: replay, id: meta-llama/Llama-3.2-1B-Instruct, batch_size: 64}\n"
    )
    return path


def run(models_file, out):
    return generate("synth", out_dir=out, models_file=models_file, progress=False, **ASK)


def append_foreign(model_dir):
    """Two records appended by hand: one of a concept set not asked, one of template 5."""
    path = model_dir / "ordered.jsonl"
    first, second = (disk_record(line) for line in path.read_text().splitlines()[:2])
    first.update(
        set_id="zzz",
        instance_id=instance_id("ordered", first["template_id"], "zzz", first["perm_index"]),
    )
    second.update(
        template_id=5,
        instance_id=second["instance_id"].replace(f"-t{second['template_id']}-", "-t5-"),
    )
    with path.open("a") as fh:
        fh.write(json.dumps(first) + "\n" + json.dumps(second) + "\n")
    return first["instance_id"], second["instance_id"]


def test_a_resume_counts_only_asked_instances_and_reports_foreign_records(
    models_file, tmp_path, capsys
):
    model_dir = run(models_file, tmp_path / "gen")
    foreign = append_foreign(model_dir)
    code = main(
        [
            "generate",
            "synth",
            "--out",
            str(tmp_path / "gen"),
            "--models-file",
            str(models_file),
            "--conditions",
            "original",
            "ordered",
            "--subset-k",
            "2",
            "--templates",
            "0",
            "1",
        ]
    )
    printed = capsys.readouterr().out
    assert code == 0 and "192 of 192 asked instances" in printed and "foreign" in printed, printed
    card = json.loads((model_dir / "run_card.json").read_text())
    assert card["status"] == "complete"
    assert card["records"]["ordered"] == {
        "asked": 96,
        "present": 96,
        "missing": 0,
        "foreign": 2,
        "foreign_examples": list(foreign),
    }
    assert card["records"]["original"]["foreign"] == 0


def test_foreign_records_are_left_out_of_the_scores_and_counted(models_file, tmp_path, capsys):
    model_dir = run(models_file, tmp_path / "gen")
    append_foreign(model_dir)
    assert (
        main(
            [
                "score",
                "--generations",
                str(tmp_path / "gen"),
                "--out",
                str(tmp_path / "s"),
                "--metrics",
                "pbleu",
            ]
        )
        == 0
    )
    assert "complete: 192 of 192 asked instances; 2 foreign records" in capsys.readouterr().out
    sig = json.loads((tmp_path / "s" / "synth" / "signature.json").read_text())
    assert sig["completeness"]["foreign"] == 2 and sig["completeness"]["run_status"] == "complete"
    summary = pd.read_parquet(tmp_path / "s" / "synth" / "summary.parquet")
    assert sorted(summary.template_id.unique()) == [0, 1] and summary.n_answers.sum() == 192
    scores = load_scores(tmp_path / "s")  # only a note: the numbers hold what was asked
    assert any("2 foreign records" in line for line in scores.incomplete)


def crashed(models_file, tmp_path):
    """As after a disk-full crash: run card 'running', ordered gone, original short of 30 records."""
    model_dir = run(models_file, tmp_path / "gen")
    (model_dir / "ordered.jsonl").unlink()
    lines = (model_dir / "original.jsonl").read_text().splitlines(keepends=True)
    (model_dir / "original.jsonl").write_text("".join(lines[:-30]))
    card = json.loads((model_dir / "run_card.json").read_text())
    (model_dir / "run_card.json").write_text(json.dumps({**card, "status": "running"}))
    return model_dir


def test_an_unfinished_run_is_scored_with_its_counts_and_tables_refuse_it(
    models_file, tmp_path, capsys, monkeypatch
):
    crashed(models_file, tmp_path)
    assert (
        main(
            [
                "score",
                "--generations",
                str(tmp_path / "gen"),
                "--out",
                str(tmp_path / "s"),
                "--metrics",
                "pbleu",
            ]
        )
        == 0
    )
    printed = capsys.readouterr().out
    assert "INCOMPLETE" in printed and "'running'" in printed
    assert "126 of 192 asked instances missing (ordered 96 of 96, original 30 of 96)" in printed, (
        printed
    )
    block = json.loads((tmp_path / "s" / "synth" / "signature.json").read_text())["completeness"]
    assert (block["asked"], block["present"], block["missing"]) == (192, 66, 126)
    with pytest.raises(
        OcgInputError, match=r"(?s)synth: the run card says 'running'.*126 of 192.*allow_incomplete"
    ):
        load_scores(tmp_path / "s")
    shown = []
    monkeypatch.setattr(notebook, "_note", shown.append)
    scores = notebook.setup(tmp_path / "s", None, allow_incomplete=True)
    assert len(scores.answers) == 66 and any("126 of 192" in text for text in shown)
    run = checked_run(**{"models": ["synth"], "conditions": ASK["conditions"], "file": "r.yaml"})
    html = write_index(
        tmp_path / "report",
        "t",
        [],
        run=run,
        scores_root=tmp_path / "s",
        generations_root=tmp_path / "gen",
    ).read_text()
    assert (
        "<span class='bad'>incomplete</span>" in html
        and "126 of 192 asked instances missing" in html
    )


def test_an_older_card_is_checked_from_its_runs_and_an_unbuildable_one_named(models_file, tmp_path):
    model_dir = crashed(models_file, tmp_path)
    card = json.loads((model_dir / "run_card.json").read_text())
    del card["selection"]  # as written before selections were recorded
    (model_dir / "run_card.json").write_text(json.dumps(card))
    out = score_model(model_dir, metrics=["pbleu"], out_dir=tmp_path / "s", progress=False)
    assert json.loads((out / "signature.json").read_text())["completeness"]["missing"] == 126
    for run in card["runs"]:
        run["template_ids"] = [3]  # the recorded selection no longer gives the card's instance set
    (model_dir / "run_card.json").write_text(json.dumps(card))
    with pytest.raises(
        OcgInputError, match=r"run_card.json: cannot rebuild the instance set of condition"
    ):
        score_model(model_dir, metrics=["pbleu"], out_dir=tmp_path / "s", progress=False)


def test_a_run_file_takes_allow_incomplete(tmp_path):
    base = {"name": "x", "models": ["smollm2-135m-instruct"], "conditions": ["ordered"]}
    assert check_run(base, tmp_path / "r.yaml").file.allow_incomplete is False
    with pytest.raises(OcgInputError, match="allow_incomplete: got 'yes'; expected true or false"):
        check_run({**base, "allow_incomplete": "yes"}, tmp_path / "r.yaml")


def rows(sets, templates):
    return [
        {
            "set_id": s,
            "template_id": t,
            "perm_index": p,
            "concepts": ["dog", "run", "ball", "throw"],
            "answer": ["The dog runs after the ball.", "Throw the ball.", "A dog."][(p + t) % 3],
        }
        for s in sets
        for t in templates
        for p in range(24)
    ]


@pytest.fixture(scope="module")
def two_designs(scored_run):
    """'wide' over 2 sets x 3 templates, 'narrow' over 1 set x 1 template, both conditions."""
    designs = {"wide": (["s1", "s2"], [0, 1, 2]), "narrow": (["s1"], [0])}
    return scored_run(
        "designs",
        lambda model, _: rows(*designs[model]),
        ["pbleu"],
        models=tuple(designs),
        conditions=("original", "ordered"),
    )


def test_models_on_different_instances_are_compared_on_those_they_share(two_designs):
    scores = load_scores(two_designs / "scores")
    assert scores.designs["wide"]["n"] == 288 and scores.designs["narrow"]["n"] == 48
    assert scores.answers.groupby("model").size().to_dict() == {"narrow": 48, "wide": 48}
    s = scores.summary
    assert set(s.template_id) == {0} and (s.n_answers == 24).all()
    t1 = table1(s).set_index(["model", "metric"])["value"]
    assert t1["wide", "pbleu"] == pytest.approx(
        t1["narrow", "pbleu"]
    )  # same answers on the same instances
    (line,) = scores.instance_differences
    assert "wide: 288 answers: ordered, original; templates 0, 1, 2; 2 concept sets" in line
    assert "narrow: 48 answers" in line and "wide 240" in line
    mixed = load_scores(two_designs / "scores", allow_mixed=True)
    assert len(mixed.answers) == 288 + 48 and "not comparable" in mixed.instance_differences[0]


def test_models_sharing_no_instance_are_refused_with_their_designs(tmp_path):
    for model, sets in (("a", ["s1"]), ("b", ["s2"])):
        write_generations(tmp_path / "gen", model, rows(sets, [0]))
        score_model(
            tmp_path / "gen" / model, metrics=["pbleu"], out_dir=tmp_path / "s", progress=False
        )
    with pytest.raises(
        OcgInputError, match=r"share no instance of condition\(s\) \['ordered'\].*a: 24 answers"
    ):
        load_scores(tmp_path / "s")
    assert len(load_scores(tmp_path / "s", allow_mixed=True).answers) == 48


def test_the_landing_page_shows_each_design_and_the_difference(two_designs, tmp_path):
    run = checked_run(
        **{"models": ["wide", "narrow"], "conditions": ["original", "ordered"], "file": "r.yaml"}
    )
    html = write_index(
        tmp_path / "report",
        "t",
        [],
        run=run,
        scores_root=two_designs / "scores",
        generations_root=two_designs / "gen",
    ).read_text()
    assert "ordered, original; templates 0, 1, 2; 2 concept sets" in html
    assert "ordered, original; template 0; 1 concept set" in html
    assert "compare them on the instances they share" in html
