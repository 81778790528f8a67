"""Typed run state (ocg/records/, ocg/sweep/markers.py): each status field holds a word of a
closed vocabulary, run_card.json, signature.json and report.json carry a format version that a
reader checks, and what ocg wrote before either (tests/fixtures/c20dad0) reads as it did."""

import json
import re
import shutil

import pytest
import yaml

from ocg.cli import main
from ocg.core.errors import OcgInputError
from ocg.core.layout import ModelGenerations, ModelScores
from ocg.core.paths import PROJECT_ROOT
from ocg.generation.run_generation import generate
from ocg.records import ReportStamp, ReportStatus, RunCard, RunStatus
from ocg.scoring import score_model
from ocg.sweep import load_sweep, status_table
from ocg.sweep.markers import AnalysisMarker, AnalysisStatus
from ocg.sweep.state import ModelState, print_status
from tests.records.old_records import C20DAD0, RECORDS, VERSIONED


@pytest.mark.parametrize("name", RECORDS)
def test_a_file_written_before_format_versions_reads_as_version_1_and_keeps_every_key(name):
    record = RECORDS[name].read(C20DAD0 / name)
    written, before = record.to_json(), json.loads((C20DAD0 / name).read_text())
    new = ["format_version"] if name in VERSIONED else []
    assert list(written) == new + list(before) and json.loads(json.dumps(written)) == {
        **({"format_version": 1} if new else {}),
        **before,
    }
    assert not record.other or name in (
        "failed.json",
        "interrupted.json",
    )  # those keep SLURM_* verbatim


def test_the_words_read_are_the_vocabularies_members():
    card = RunCard.read(C20DAD0 / "run_card.json")
    assert card.status is RunStatus.COMPLETE and [r.status for r in card.runs] == [
        RunStatus.COMPLETE
    ]
    assert type(card.runs[0].status) is RunStatus
    assert ReportStamp.read(C20DAD0 / "report.json").state is ReportStatus.FAILED
    assert AnalysisMarker.read(C20DAD0 / "analysis.json").state is AnalysisStatus.FAILED
    assert (
        f"{RunStatus.COMPLETE:<9}|{ReportStatus.DONE}" == "complete |done"
    )  # as words in text too


@pytest.mark.parametrize("name", VERSIONED)
def test_a_newer_format_version_is_refused_naming_the_file_and_both_versions(tmp_path, name):
    path = tmp_path / name
    path.write_text(json.dumps({"format_version": 2, **json.loads((C20DAD0 / name).read_text())}))
    what = {
        "run_card.json": "a run card",
        "signature.json": "a scoring signature",
        "report.json": "a report's state",
    }
    with pytest.raises(
        OcgInputError,
        match=rf"^{re.escape(str(path))}: format_version: {what[name]} of format "
        r"version 2, but this ocg reads format version 1 at most: it was "
        r"written by a newer ocg",
    ):
        RECORDS[name].read(path)
    for bad in ("1", 0, True):
        path.write_text(
            json.dumps({**json.loads((C20DAD0 / name).read_text()), "format_version": bad})
        )
        with pytest.raises(OcgInputError, match=r"format_version: expected a whole number from 1"):
            RECORDS[name].read(path)


VOCABULARIES = [  # file, key, a word outside its vocabulary, the words allowed
    (
        "run_card.json",
        "status",
        "finished",
        "'running', 'complete', 'failed', 'interrupted', 'unknown'",
    ),
    ("report.json", "state", "paused", "'building', 'done', 'failed'"),
    ("analysis.json", "state", "building", "'done', 'failed'"),
]


@pytest.mark.parametrize(("name", "key", "word", "allowed"), VOCABULARIES)
def test_each_vocabulary_refuses_a_word_outside_it_naming_file_and_field(
    tmp_path, name, key, word, allowed
):
    path = tmp_path / name
    path.write_text(json.dumps({**json.loads((C20DAD0 / name).read_text()), key: word}))
    with pytest.raises(
        OcgInputError,
        match=rf"^{re.escape(str(path))}: {key}: expected one of "
        rf"{re.escape(allowed)}, got '{word}'",
    ):
        RECORDS[name].read(path)


def test_a_run_of_the_run_card_with_an_unknown_status_is_refused_naming_it(tmp_path):
    card = json.loads((C20DAD0 / "run_card.json").read_text())
    path = tmp_path / "run_card.json"
    path.write_text(json.dumps({**card, "runs": [*card["runs"], {"status": "done"}]}))
    with pytest.raises(
        OcgInputError,
        match=rf"^{re.escape(str(path))}: runs\[1\]\.status: expected one of "
        r"'running', .*, got 'done'",
    ):
        RunCard.read(path)
    with pytest.raises(
        ValueError
    ):  # a word outside the vocabulary is a bug in the code that writes it too
        ReportStamp(state="finished")
    with pytest.raises(
        OcgInputError, match=r"report.json: state: missing \(a report's state always has it\)"
    ):
        ReportStamp.from_json({"pid": 1}, "report.json")


@pytest.fixture
def scored_before(tmp_path):
    """A replay model's generations and pBLEU scores, their run card and signature as ocg wrote
    them before format versions (the key taken out, every other byte as written)."""
    models = tmp_path / "models.yaml"
    models.write_text(
        "models:\n  synth: {backend: replay, id: meta-llama/Llama-3.2-1B-Instruct, batch_size: 64}\n"
    )
    ask = dict(
        conditions=["ordered"],
        subset_k=1,
        template_ids=[0],
        out_dir=tmp_path / "gen",
        models_file=models,
        progress=False,
    )
    gen = ModelGenerations(generate("synth", **ask))
    scores = ModelScores(
        score_model(gen.folder, metrics=["pbleu"], out_dir=tmp_path / "s", progress=False)
    )
    for path in (gen.run_card, scores.signature):
        data = json.loads(path.read_text())
        assert data.pop("format_version") == 1
        path.write_text(json.dumps(data, indent=2) + "\n")
    return gen, scores, ask


def test_generations_and_a_score_set_written_before_format_versions_are_reused(scored_before):
    gen, scores, ask = scored_before
    runs, signature = json.loads(gen.run_card.read_text())["runs"], scores.signature.read_bytes()
    assert generate("synth", **ask) == gen.folder  # nothing asked is missing: no new run
    card = json.loads(gen.run_card.read_text())
    assert card["runs"] == runs and card["format_version"] == 1 and card["status"] == "complete"
    score_model(gen.folder, metrics=["pbleu"], out_dir=scores.folder.parent, progress=False)
    assert scores.signature.read_bytes() == signature  # reused as it stands, not recomputed


def test_a_newer_run_card_stops_scoring_with_a_clear_error(scored_before, capsys):
    gen, scores, _ = scored_before
    gen.run_card.write_text(
        json.dumps({**json.loads(gen.run_card.read_text()), "format_version": 7})
    )
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
    assert (
        f"ocg: error: {gen.run_card}: format_version: a run card of format version 7, but this ocg reads "
        "format version 1 at most"
    ) in capsys.readouterr().err


def _sweep(tmp_path) -> dict:
    models = ["m-done", "m-failed", "m-stopped", "m-begun", "m-new"]
    (tmp_path / "models.yaml").write_text(
        yaml.safe_dump({"models": {m: {"backend": "replay", "id": f"x/{m}"} for m in models}})
    )
    path = tmp_path / "sweep.yaml"
    path.write_text(
        yaml.safe_dump(
            {
                "name": "t",
                "models": models,
                "models_file": str(tmp_path / "models.yaml"),
                "conditions": ["ordered"],
                "subset_k": 1,
                "template_ids": [0],
                "metrics": ["coverage"],
                "analysis": ["03_main_results"],
                "outputs": str(tmp_path / "out"),
            }
        )
    )
    return load_sweep(str(path))


def test_a_sweeps_model_states_are_the_closed_set_and_its_markers_are_checked(tmp_path, capsys):
    sweep, status = _sweep(tmp_path), tmp_path / "out" / "status" / "t"
    for model in ("m-done", "m-failed", "m-stopped"):
        (status / model).mkdir(parents=True)
    for notebook in sweep.file.notebooks:
        (status / "m-done" / f"{notebook}.done").write_text("{}")
    shutil.copy(C20DAD0 / "failed.json", status / "m-failed" / "failed.json")
    shutil.copy(C20DAD0 / "interrupted.json", status / "m-stopped" / "interrupted.json")
    ModelGenerations(tmp_path / "out" / "generations" / "m-begun").store("ordered").parent.mkdir(
        parents=True
    )
    ModelGenerations(tmp_path / "out" / "generations" / "m-begun").store("ordered").write_text("")
    rows = status_table(sweep, with_slurm=False)
    assert [(m, s) for m, s, _ in rows] == [
        ("m-done", "done"),
        ("m-failed", "failed"),
        ("m-stopped", "partial"),
        ("m-begun", "partial"),
        ("m-new", "missing"),
    ]
    assert all(type(s) is ModelState for _, s, _ in rows)
    assert rows[1][2] == "02_score cell 5: KeyError: 'answer' (log: /tmp/out/logs/t/m-a.log)"
    shutil.copy(C20DAD0 / "analysis.json", status / "analysis.json")
    print_status(sweep)
    out = capsys.readouterr().out
    assert "done: 1  running: 0  pending: 0  partial: 2  failed: 1  missing: 1" in out
    assert (
        "analysis: failed over 0 model(s): no finished model (out of date: 1 model(s) done now"
        in out
    )
    failed = json.loads((C20DAD0 / "failed.json").read_text())
    (status / "m-failed" / "failed.json").write_text(json.dumps({**failed, "cell": "five"}))
    with pytest.raises(
        OcgInputError,
        match=rf"{re.escape(str(status / 'm-failed' / 'failed.json'))}: cell: "
        r"expected an integer, got 'five'",
    ):
        status_table(sweep, with_slurm=False)


def test_methods_lists_each_vocabulary_as_the_code_declares_it():
    text = " ".join((PROJECT_ROOT / "docs" / "METHODS.md").read_text().split())
    for vocabulary in (RunStatus, ReportStatus, AnalysisStatus, ModelState):
        assert (
            f"({', '.join(f'`{w}`' for w in vocabulary)}" in text
            or f"one of {', '.join(f'`{w}`' for w in vocabulary)}." in text
        ), vocabulary.__name__
