"""Two reports on one outputs folder with other scoring settings: each report
reads the score sets it scored, linked into the report when its scoring ends
(ocg/scoring/pinned.py), whatever the other rescores meanwhile; a set scored otherwise than the
run asks is refused, naming the setting."""

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from ocg.core.errors import OcgInputError
from ocg.core.paths import PROJECT_ROOT
from ocg.scoring import load_scoring_config
from ocg.scoring.pinned import pin_scores
from tests.jobs.small_report import MODEL, TAG, wait_for, write_run

SMALL = str(Path(__file__).with_name("small_report.py"))


def coverage_rule(provenance: dict) -> str:
    return provenance["scored_models"][MODEL]["metric_keys"]["coverage"]["rule"]


@pytest.mark.slow
def test_two_concurrent_reports_with_other_scoring_each_read_their_own_scores(tmp_path):
    outputs, pause = tmp_path / "outputs", tmp_path / "pause"
    pause.mkdir()
    env = dict(os.environ, PYTHONPATH=str(PROJECT_ROOT), **{TAG: uuid.uuid4().hex})
    first = subprocess.Popen(
        [sys.executable, SMALL, str(write_run(tmp_path, "a", outputs)), str(pause)],
        cwd=PROJECT_ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        wait_for(lambda: (pause / "ready").exists(), 1200, "first report at its analyses", first)
        # the second report, on the same models and outputs, rescores under another matching rule
        second = subprocess.run(
            [
                sys.executable,
                "-m",
                "ocg.cli",
                "report",
                str(
                    write_run(tmp_path, "b", outputs, scoring={"matching_rule": "commongen_lemma"})
                ),
            ],
            cwd=PROJECT_ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=1200,
        )
        assert second.returncode == 0, second.stderr[-3000:]
    finally:
        (pause / "go").write_text("")
    out, _ = first.communicate(timeout=1200)
    assert first.returncode == 0, out[-3000:]
    reports = {name: outputs / "reports" / name for name in ("a", "b")}
    assert [json.loads((r / "report.json").read_text())["state"] for r in reports.values()] == [
        "done",
        "done",
    ]
    # Table 1 of the first was computed after the second rescored: under the first's own rule
    assert {
        name: coverage_rule(json.loads((r / "tables" / "table1.provenance.json").read_text()))
        for name, r in reports.items()
    } == {"a": "pos_aware_lookup", "b": "commongen_lemma"}
    assert {
        name: json.loads((r / "scores" / MODEL / "signature.json").read_text())["config"][
            "matching_rule"
        ]
        for name, r in reports.items()
    } == {"a": "pos_aware_lookup", "b": "commongen_lemma"}
    shared = json.loads((outputs / "scores" / MODEL / "signature.json").read_text())
    assert (
        shared["config"]["matching_rule"] == "commongen_lemma"
    )  # the last scoring, outside both reports
    results = json.loads((outputs / "reports" / "a" / "results.json").read_text())
    assert results["run"]["scoring"] == {}  # and the numbers beside it are that scoring's


def test_a_set_scored_otherwise_than_the_run_asks_is_refused_naming_the_setting(
    scored_run, tmp_path
):
    from tests.helpers import two_models_rows

    root = scored_run(
        "pinned",
        two_models_rows(["A boy rides a bike on the street."]),
        ["distinct"],
        models=("a",),
    )
    pin_scores(
        root / "scores", ["a", "absent"], tmp_path / "ok", load_scoring_config(), ["distinct"]
    )
    assert sorted(p.name for p in (tmp_path / "ok" / "a").iterdir()) == [
        "answers.parquet",
        "groups.parquet",
        "signature.json",
        "summary.parquet",
    ]
    assert (tmp_path / "ok" / "a" / "answers.parquet").stat().st_ino == (
        root / "scores" / "a" / "answers.parquet"
    ).stat().st_ino
    with pytest.raises(
        OcgInputError, match=r"matching_rule='pos_aware_lookup' \(this run: 'commongen_lemma'\)"
    ):
        pin_scores(
            root / "scores",
            ["a"],
            tmp_path / "rule",
            load_scoring_config(overrides=dict(matching_rule="commongen_lemma")),
            ["distinct"],
        )
    with pytest.raises(
        OcgInputError, match=r"metrics \['distinct'\] \(this run: \['distinct', 'pbleu'\]\)"
    ):
        pin_scores(
            root / "scores",
            ["a"],
            tmp_path / "metrics",
            load_scoring_config(),
            ["distinct", "pbleu"],
        )
    pin_scores(
        root / "scores",
        ["a"],
        tmp_path / "speed",
        load_scoring_config(overrides=dict(spacy_batch_size=3)),
        ["distinct"],
    )  # speed only
