"""`ocg compare`: two reports' models side by side on the instances both answered, with the
project's paired test; the refusal of designs that share nothing and of an ambiguous side; the
JSON's figures recomputed here from the answers; the page."""

import json
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from ocg.analysis.versus import compare_models
from ocg.cli import main
from ocg.core.layout import ModelScores, ReportFolder

CONCEPTS = ["boy", "ride", "bike", "street"]
SETS = [f"s{i}" for i in range(6)]


def _answer(model, s, p):
    """a: in order in sets s0-s3 (permutations 0-3), b: in order where (set + permutation) is
    even; the others out of order, with markup the page must show as text."""
    i = int(s[1:])
    good = (i < 4 and p < 4) if model == "a" else (i + p) % 2 == 0
    return "The boy rides a bike down the street." if good else "Street bike boy <b>ride</b>."


def _rows(sets, templates, model):
    return [
        {
            "set_id": s,
            "template_id": t,
            "perm_index": p,
            "concepts": CONCEPTS,
            "pos_pattern": "NVNN",
            "answer": _answer(model, s, p),
        }
        for s in sets
        for t in templates
        for p in range(6)
    ]


@pytest.fixture(scope="module")
def runs(scored_run, tmp_path_factory):
    """Reports: `both` (models a and b), `b` (b alone), `pilot` (a on 2 sets, one template),
    `other` (a on sets no one else ran)."""
    full = scored_run(
        "versus",
        lambda m, _c: _rows(SETS, (0, 1), m),
        ["coverage"],
        models=("a", "b"),
        conditions=("original", "ordered"),
    )
    pilot = scored_run(
        "versus-pilot", lambda m, _c: _rows(SETS[:2], (0,), m), ["coverage"], models=("a",)
    )
    other = scored_run(
        "versus-other", lambda m, _c: _rows(["s9"], (0,), m), ["coverage"], models=("a",)
    )
    reports = tmp_path_factory.mktemp("reports")
    for name, root, models in (
        ("both", full, ("a", "b")),
        ("b", full, ("b",)),
        ("pilot", pilot, ("a",)),
        ("other", other, ("a",)),
    ):
        for m in models:
            shutil.copytree(
                ModelScores.of(m, root / "scores").folder,
                ModelScores.of(m, ReportFolder(reports / name).scores).folder,
            )
    return reports


def test_the_paired_differences_are_the_answers_own_and_the_test_is_the_sign_flip(runs):
    c = compare_models(runs / "both", runs / "b", model_a="a")
    answers = {
        m: pd.read_parquet(ModelScores.of(m, ReportFolder(runs / "both").scores).answers)
        for m in "ab"
    }
    assert c.shared == c.a.n == c.b.n == 2 * 6 * 2 * 6 and c.conditions == ["ordered", "original"]
    row = c.tests[(c.tests.condition == "ordered") & (c.tests.metric == "coverage_w_order")].iloc[0]
    per_set = {
        m: a[a.condition == "ordered"].groupby("set_id")["in_order"].mean() * 100
        for m, a in answers.items()
    }
    d = (per_set["a"] - per_set["b"]).to_numpy()
    assert row.value_a == pytest.approx(per_set["a"].mean())
    assert row.difference == pytest.approx(d.mean()) and row.difference != 0
    # equal answers per set: swapping a set's models flips the sign of its difference
    sign_flip = stats.permutation_test(
        (d,), np.mean, permutation_type="samples", n_resamples=np.inf
    )
    assert row.p_value == pytest.approx(sign_flip.pvalue)
    assert row.n == 6 and row.small_sample and row.p_method == "exact: all 64 sign vectors"
    assert set(c.tests.metric) >= {"coverage_w_order", "coverage_wo_order", "ordered_rate"}
    assert "pbleu" not in set(c.tests.metric)  # per-answer metrics only


def test_the_json_and_the_page(runs, outputs):
    assert main(["compare", str(runs / "both"), str(runs / "b"), "--model-a", "a"]) == 0
    folder = outputs / "comparisons" / "both~a~vs~b~b"
    data = json.loads((folder / "comparison.json").read_text())
    assert data["a"]["model"] == "a" and data["b"]["model"] == "b"
    assert data["a"]["models_in_report"] == ["a", "b"]
    assert data["shared"] == {
        "instances": 144,
        "concept_sets": 6,
        "conditions": ["ordered", "original"],
    }
    answers = {
        m: pd.read_parquet(ModelScores.of(m, ReportFolder(runs / "both").scores).answers)
        for m in "ab"
    }
    key = ["condition", "template_id", "set_id", "perm_index"]
    merged = answers["a"].merge(answers["b"], on=key)
    n_differ = int((merged.in_order_x != merged.in_order_y).sum())
    assert data["verdicts_differ"]["n"] == n_differ == data["verdicts_differ"]["listed"] > 0
    first = data["verdicts_differ"]["answers"][0]
    assert first["in_order_a"] != first["in_order_b"] and first["answer_a"] != first["answer_b"]
    tests = {(t["condition"], t["metric"]): t for t in data["tests"]}
    row = tests[("ordered", "coverage_w_order")]
    assert row["n"] == 6 and row["small_sample"] and row["difference"] is not None
    for key in ("ci_low", "ci_high", "p_value", "p_holm"):  # 6 sets: as the landing page, none
        assert row[key] is None and row["missing_reason"][key].startswith("small sample")
    assert "median_a" not in row  # coverage: no median beside it
    assert data["bootstrap"]["unit"] == "sets"
    page = (folder / "index.html").read_text()
    assert (
        "<style>" in page and "w/ order" in page and f"{n_differ:,} of 144 shared answers" in page
    )
    assert "Street bike boy &lt;b&gt;ride&lt;/b&gt;." in page and "<b>ride" not in page
    assert "small sample (6 concept sets &lt; 20)" in page and "exact: all 64" not in page


def test_an_ambiguous_side_is_refused_with_its_models(runs, capsys):
    assert main(["compare", str(runs / "both"), str(runs / "b")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("ocg: error: --model-a:") and "['a', 'b']" in err[0]
    assert main(["compare", str(runs / "b"), str(runs / "b"), "--model-a", "z"]) == 2
    assert "'z' is not a model" in capsys.readouterr().err


def test_designs_that_share_nothing_are_refused_saying_what_each_has(runs, capsys, outputs):
    assert main(["compare", str(runs / "other"), str(runs / "b")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("ocg: error: ocg compare:")
    assert "A has 6 answers: ordered; template 0; 1 concept set" in err[0]
    assert "B has 144 answers: ordered, original; templates 0, 1; 6 concept sets" in err[0]
    assert not (outputs / "comparisons").exists()


def test_a_pilot_is_compared_on_the_shared_part(runs, outputs, capsys):
    assert main(["compare", str(runs / "pilot"), str(runs / "b")]) == 0
    assert "(pilot, 12 instances) vs b (b, 144 instances): 12 shared" in capsys.readouterr().out
    folder = outputs / "comparisons" / "pilot~a~vs~b~b"
    data = json.loads((folder / "comparison.json").read_text())
    assert (data["a"]["instances"], data["b"]["instances"], data["shared"]["instances"]) == (
        12,
        144,
        12,
    )
    page = (folder / "index.html").read_text()
    assert "12 instances both answered, of A's 12 and B's 144" in page


def test_a_run_file_names_its_report(runs, outputs, tmp_path, capsys):
    shutil.copytree(runs / "b", outputs / "reports" / "mine")
    run_file = tmp_path / "mine.yaml"
    run_file.write_text(
        "name: mine\nn_concepts: 4\nsubset_k: 2\nconditions: [ordered]\n"
        "models: [smollm2-135m-instruct]\n"
    )
    assert main(["compare", str(runs / "both"), str(run_file), "--model-a", "a"]) == 0
    assert (outputs / "comparisons" / "both~a~vs~mine~b" / "comparison.json").exists()


# answer -> the judge's reply (a replay judge): every cell of both checks' tables met on each side
JUDGE_REPLIES = {
    "The boy rides a bike down the street.": CONCEPTS,  # in order: both say so
    "Street bike boy <b>ride</b>.": CONCEPTS,  # the judge says in order, ocg not
    "The boy rides a bike.": ["boy", "ride", "bike"],  # street missing: both say so
    "A street where the boy rides a bike.": ["street", "boy", "ride", "bike"],
    "The boy and the bike.": CONCEPTS,  # the judge reads every concept, ocg does not
    "Boy ride bike street.": ["boy", "bike"],  # ocg reads every concept in order, the judge not
}


@pytest.fixture(scope="module")
def judged(scored_run, tmp_path_factory):
    """A report `judged` of models a and b, both judged by the same replay judge."""
    from tests.helpers import replay_judge

    texts = list(JUDGE_REPLIES)
    models = replay_judge(
        tmp_path_factory.mktemp("judge"),
        {
            (a, tuple(CONCEPTS)): json.dumps({"score": 3, "order": order})
            for a, order in JUDGE_REPLIES.items()
        },
    )

    pools = {"a": [0, 0, 0, 1, 2, 2, 3, 4, 5], "b": [0, 1, 1, 2, 3, 3, 3, 4, 5, 5, 5]}

    def rows(model, _condition):  # the two models' answers in different proportions
        pool = pools[model]
        return [
            {
                "set_id": s,
                "template_id": t,
                "perm_index": p,
                "concepts": CONCEPTS,
                "pos_pattern": "NVNN",
                "answer": texts[pool[(int(s[1:]) + 6 * t + p) % len(pool)]],
            }
            for s in SETS
            for t in (0, 1)
            for p in range(6)
        ]

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr("ocg.config.model_registry.MODELS_FILE", models)
        root = scored_run(
            "versus-judged", rows, ["coverage", "judge"], models=("a", "b"), judge="replayed-judge"
        )
    report = tmp_path_factory.mktemp("judged-reports") / "judged"
    for m in ("a", "b"):
        shutil.copytree(
            ModelScores.of(m, root / "scores").folder,
            ModelScores.of(m, ReportFolder(report).scores).folder,
        )
    return report


def test_where_a_judge_metric_is_compared_each_sides_agreement_is_given(judged, outputs):
    """Each side's judge against ocg's checks over the shared answers, as scikit-learn and scipy
    compute them from the answers; on the page, one line per check."""
    from sklearn.metrics import cohen_kappa_score

    assert main(["compare", str(judged), str(judged), "--model-a", "a", "--model-b", "b"]) == 0
    folder = outputs / "comparisons" / "judged~a~vs~judged~b"
    data = json.loads((folder / "comparison.json").read_text())
    assert {"judge_score", "judge_in_order"} <= {t["metric"] for t in data["tests"]}
    block = data["judge_agreement"]
    assert "judge_agreement" not in data["missing_reason"] and "Wilson" in block["share_method"]
    page = (folder / "index.html").read_text()
    for side in ("a", "b"):
        answers = pd.read_parquet(ModelScores.of(side, ReportFolder(judged).scores).answers)
        mine = answers[answers["judge_reason"].isna()]
        judge = {
            "coverage": mine["judge_order"].map(lambda o: set(CONCEPTS) <= set(o)),
            "order": mine["judge_order"].map(lambda o: list(o) == CONCEPTS),
        }
        ocg = {"coverage": mine["all_present"], "order": mine["in_order"]}
        for check in ("coverage", "order"):
            g = block[side][check]
            agree = int((judge[check] == ocg[check].astype(bool)).sum())
            assert (g["judged"], g["agree"]) == (len(mine), agree) == (72, g["agree"])
            assert g["kappa"] == pytest.approx(cohen_kappa_score(judge[check], ocg[check]))
            ci = stats.binomtest(agree, len(mine)).proportion_ci(method="wilson")
            assert (g["share_low"], g["share_high"]) == pytest.approx((100 * ci.low, 100 * ci.high))
            assert g["kappa_low"] < g["kappa"] < g["kappa_high"] and g["kappa"] != 0
            line = (
                f"{check}: agrees on {g['share']:.0f}% ({agree} of 72; 95% CI "
                f"{g['share_low']:.0f}–{g['share_high']:.0f}%), Cohen's κ {g['kappa']:.2f} "
                f"(95% CI {g['kappa_low']:.2f} to {g['kappa_high']:.2f})"
            )
            assert line in page
    assert block["a"]["order"]["kappa"] != block["b"]["order"]["kappa"]
    assert "Each side's judge against ocg's checks" in page and "Fleiss" in page


def test_no_judge_metric_compared_no_agreement(runs, outputs):
    assert main(["compare", str(runs / "both"), str(runs / "b"), "--model-a", "a"]) == 0
    data = json.loads((outputs / "comparisons" / "both~a~vs~b~b" / "comparison.json").read_text())
    assert data["judge_agreement"] is None
    assert "no judge metric" in data["missing_reason"]["judge_agreement"]
    page = (outputs / "comparisons" / "both~a~vs~b~b" / "index.html").read_text()
    assert "judge against ocg" not in page


def test_another_pair_of_the_same_reports_gets_its_own_folder(runs, outputs, capsys):
    """Folders are named by both reports and both models: a second pair never replaces the first."""
    assert main(["compare", str(runs / "both"), str(runs / "b"), "--model-a", "a"]) == 0
    first = outputs / "comparisons" / "both~a~vs~b~b"
    before = {p.name: p.read_bytes() for p in first.iterdir()}
    argv = ["compare", str(runs / "both"), str(runs / "b"), "--model-a", "b", "--model-b", "b"]
    assert main(argv) == 0
    second = outputs / "comparisons" / "both~b~vs~b~b"
    assert {p.name: p.read_bytes() for p in first.iterdir()} == before
    for folder, model_a in ((first, "a"), (second, "b")):
        data = json.loads((folder / "comparison.json").read_text())
        assert (data["a"]["model"], data["b"]["model"]) == (model_a, "b")


def test_one_writer_per_comparison_folder(runs, outputs, capsys):
    import os

    from ocg.core.layout import ComparisonFolder
    from ocg.core.lock import exclusive

    argv = ["compare", str(runs / "both"), str(runs / "b"), "--model-a", "a"]
    assert main(argv) == 0
    folder = ComparisonFolder.of(outputs / "comparisons", "both", "a", "b", "b").folder
    before = {p.name: p.read_bytes() for p in folder.iterdir()}
    capsys.readouterr()
    with exclusive(folder, doing="is writing this comparison"):
        assert main(argv) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "is writing this comparison" in err[0] and str(os.getpid()) in err[0]
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == before


def test_comparison_folder_names_never_collide():
    from pathlib import Path

    from ocg.core.layout import ComparisonFolder

    root = Path("/c")
    assert ComparisonFolder.of(root, "a.b", "c", "d", "e") != ComparisonFolder.of(
        root, "a", "b.c", "d", "e"
    )
    long = ComparisonFolder.of(root, "r" * 128, "m" * 128, "s" * 128, "n" * 128).folder.name
    other = ComparisonFolder.of(root, "r" * 128, "m" * 128, "s" * 128, "o" * 128).folder.name
    assert len(long.encode()) <= 255 and long != other


@pytest.fixture(scope="module")
def zero_of_zero(scored_run, tmp_path_factory):
    """Reports `ra` (answers with every concept, in order) and `rb` (never every concept: its
    Ordered Rate is 0 of 0 answers)."""
    root = scored_run(
        "versus-zero",
        lambda m, _c: [
            dict(r, answer="The boy rides a bike down the street." if m == "a" else "A boy sat.")
            for r in _rows(SETS, (0,), m)
        ],
        ["coverage"],
        models=("a", "b"),
        conditions=("original", "ordered"),
    )
    reports = tmp_path_factory.mktemp("zero-reports")
    for name, m in (("ra", "a"), ("rb", "b")):
        shutil.copytree(
            ModelScores.of(m, root / "scores").folder,
            ModelScores.of(m, ReportFolder(reports / name).scores).folder,
        )
    return reports


def test_a_side_with_no_complete_answer_compares_without_warnings(zero_of_zero, tmp_path):
    """The bootstrap of a 0/0 share is NaN in every resample: its interval is null, and numpy's
    "All-NaN slice" never reaches the user's terminal."""
    import os
    import subprocess
    import sys

    from ocg.core.paths import PROJECT_ROOT

    result = subprocess.run(
        [sys.executable, "-m", "ocg.cli", "compare", str(zero_of_zero / "ra")]
        + [str(zero_of_zero / "rb")],
        capture_output=True,
        text=True,
        env=dict(os.environ, PYTHONPATH=str(PROJECT_ROOT), OCG_OUTPUTS=str(tmp_path)),
        timeout=300,
    )
    assert result.returncode == 0 and result.stderr == "", result.stderr[-2000:]
    data = json.loads((tmp_path / "comparisons" / "ra~a~vs~rb~b" / "comparison.json").read_text())
    rate = [t for t in data["tests"] if t["metric"] == "ordered_rate"]
    assert rate and all(t["value_b"] is None and t["ci_low"] is None for t in rate), rate
    for t in rate:  # every null says why, never a catch-all
        assert t["missing_reason"]["value_b"].startswith("none of B's shared answers in `")
        assert "see value_a, value_b" in t["missing_reason"]["difference"]
    reasons = [why for t in data["tests"] for why in t.get("missing_reason", {}).values()]
    assert reasons and "not computed" not in reasons
    nulls = [(t["metric"], k) for t in data["tests"] for k, v in t.items() if v is None]
    assert all(
        k in t.get("missing_reason", {}) for t in data["tests"] for k, v in t.items() if v is None
    ), nulls


def test_each_test_names_its_metrics_unit_direction_and_what_was_resampled(runs, outputs):
    assert main(["compare", str(runs / "both"), str(runs / "b"), "--model-a", "a"]) == 0
    data = json.loads((outputs / "comparisons" / "both~a~vs~b~b" / "comparison.json").read_text())
    assert data["format_version"] == 3
    # what every value is computed on, in the file and on the page (ocg verify checks both)
    assert (
        data["aggregation"]["name"] == "pooled"
        and "Table 1" in data["aggregation"]["report_tables"]
    )
    page = (outputs / "comparisons" / "both~a~vs~b~b" / "index.html").read_text()
    assert "id='aggregation' data-aggregation=\"pooled\"" in page
    row = next(t for t in data["tests"] if t["metric"] == "ordered_rate")
    assert row["metric_unit"] == "% of complete answers" and row["higher_is_better"] is True
    assert row["resampling_unit"] == data["bootstrap"]["unit"] == "sets" and "unit" not in row
    assert row["label"] == "Ordered Rate"


def _reference_reports(tmp_path):
    """Report folders `refs` (a reference entry, ref-x) and `mine` (a model, m), each generated by
    `ocg generate` from set answers (replay `key: set_id`) and scored by `ocg score`."""
    import yaml

    from ocg.core.paths import PARAMS_DIR
    from ocg.generation import select_instances

    sets = select_instances(conditions=["original"], subset_k=3, template_ids=[0]).set_id.unique()
    lines = [
        {"model": w, "id": s, "output": f"The boy rides a bike {w}."} for s in sets for w in "ab"
    ]
    answers = tmp_path / "sets.jsonl"
    answers.write_text("".join(json.dumps(line) + "\n" for line in lines))
    entry = {"backend": "replay", "replay": {"file": str(answers), "key": "set_id"}}
    models = {
        "ref-x": {**entry, "id": "x/ref", "reference": "a <b>test's</b> sentences"},
        "m": {**entry, "id": "x/m"},
    }
    models["ref-x"]["replay"] = {**entry["replay"], "model": "a"}
    models["m"]["replay"] = {**entry["replay"], "model": "b"}
    path = tmp_path / "m.yaml"
    path.write_text(yaml.safe_dump({"extends": str(PARAMS_DIR / "models.yaml"), "models": models}))
    gen, scores = tmp_path / "gen", tmp_path / "scores"
    for name in models:
        argv = ["generate", name, "--models-file", str(path), "--out", str(gen)]
        assert main([*argv, "--subset-k", "3", "--templates", "0", "--conditions", "original"]) == 0
    argv = ["score", "--generations", str(gen), "--out", str(scores), "--metrics", "coverage"]
    assert main(argv) == 0
    for report, model in (("refs", "ref-x"), ("mine", "m")):
        shutil.copytree(
            ModelScores.of(model, scores).folder,
            ModelScores.of(model, ReportFolder(tmp_path / report).scores).folder,
        )
    return tmp_path / "mine", tmp_path / "refs"


def test_a_reference_side_is_named_on_the_page_the_json_and_the_command_line(
    tmp_path, outputs, capsys
):
    """A reference entry compared as a model: comparison.json gives its source and a note, the
    page shows the note (escaped), `ocg compare` prints it; a model side's `reference` is null
    with its reason, and a comparison of two models has no note."""
    mine, refs = _reference_reports(tmp_path)
    capsys.readouterr()
    assert main(["compare", str(mine), str(refs)]) == 0
    out = capsys.readouterr().out.strip().splitlines()
    folder = outputs / "comparisons" / "mine~m~vs~refs~ref-x"
    data = json.loads((folder / "comparison.json").read_text())
    assert data["b"]["reference"] == "a <b>test's</b> sentences"
    assert data["a"]["reference"] is None and data["a"]["missing_reason"]["reference"]
    assert data["note"].startswith("B (ref-x) is a reference entry (a <b>test's</b> sentences)")
    assert "asked no order" in data["note"] and "note" not in data.get("missing_reason", {})
    assert out[-1] == f"note: {data['note']}"
    page = (folder / "index.html").read_text()
    assert "reference-note" in page and "a &lt;b&gt;test&#39;s&lt;/b&gt; sentences" in page
    assert "<b>test's</b>" not in page

    assert main(["compare", str(mine), str(mine)]) == 0
    same = json.loads(
        (outputs / "comparisons" / "mine~m~vs~mine~m" / "comparison.json").read_text()
    )
    assert same["note"] is None and same["missing_reason"]["note"]
    assert (
        "reference-note"
        not in (outputs / "comparisons" / "mine~m~vs~mine~m" / "index.html").read_text()
    )


@pytest.mark.slow
def test_two_compares_at_once_one_writes_the_other_names_the_holder(runs, tmp_path):
    """Two real `ocg compare` processes on one pair: the first is stopped (SIGSTOP) while it holds
    the folder's lock, the second exits 1 in one line naming it; the first then finishes, and its
    comparison.json is whole."""
    import os
    import signal
    import subprocess
    import sys
    import time

    env = dict(os.environ, OCG_OUTPUTS=str(tmp_path / "out"))
    argv = [sys.executable, "-m", "ocg.cli", "compare", str(runs / "both"), str(runs / "b")]
    argv += ["--model-a", "a"]
    folder = tmp_path / "out" / "comparisons" / "both~a~vs~b~b"
    for _ in range(10):  # until the first is caught holding the lock (it holds it about a second)
        shutil.rmtree(folder, ignore_errors=True)
        first = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        caught = False
        while first.poll() is None:
            try:
                stamp = (folder / ".lock").read_text()
            except OSError:
                stamp = ""
            if f'"pid": {first.pid}' in stamp:
                first.send_signal(signal.SIGSTOP)
                caught = True
                break
            time.sleep(0.002)
        if caught:
            break
        first.communicate()
    assert caught, "the first compare never seen holding its lock"
    try:
        second = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=300)
    finally:
        first.send_signal(signal.SIGCONT)
    out, err = first.communicate(timeout=300)
    assert first.returncode == 0, err
    lines = second.stderr.strip().splitlines()
    assert second.returncode == 1 and len(lines) == 1, second.stderr
    assert lines[0].startswith("ocg: error: ") and "is writing this comparison" in lines[0]
    assert f"PID {first.pid}" in lines[0] or str(first.pid) in lines[0], lines[0]
    data = json.loads((folder / "comparison.json").read_text())
    assert (data["a"]["model"], data["b"]["model"]) == ("a", "b")
    assert data["a"]["report"] in (folder / "index.html").read_text()


def test_a_judge_setting_is_warned_of_only_where_a_judge_metric_is_compared(judged, runs, outputs):
    """A's model was judged, B's not: the two score sets differ in the judge family, but no judge
    metric is compared (both must hold one), so neither the page nor the JSON warns of it."""
    from ocg.analysis.versus import compare_models, compared_families
    from ocg.results.scores import load_scores, scoring_differences

    sigs = {
        "A": load_scores(ReportFolder(judged).scores, ["a"]).signatures["a"],
        "B": load_scores(ReportFolder(runs / "b").scores, ["b"]).signatures["b"],
    }
    every = scoring_differences(sigs)
    assert every and all(line.startswith("judge.") for line in every)  # what was warned before
    c = compare_models(judged, runs / "b", model_a="a")
    assert "judge" not in compared_families(c.tests) and c.judge is None and c.scoring == []
    assert scoring_differences(sigs, compared_families(c.tests) | {"judge"}) == every
    assert main(["compare", str(judged), str(runs / "b"), "--model-a", "a"]) == 0
    folder = outputs / "comparisons" / "judged~a~vs~b~b"
    data = json.loads((folder / "comparison.json").read_text())
    assert data["scoring_differences"] == [] and data["judge_agreement"] is None
    page = (folder / "index.html").read_text()
    assert "scored differently" not in page and "judge" not in page.lower().split("<h2>")[1]


def test_each_side_names_how_its_answers_were_made(runs, outputs, tmp_path):
    """Model id, revision, dtype, quantisation and decoding of each side, from the run card
    beside the generations its score set names; where they differ besides the model, a warning."""
    from ocg.core.layout import ModelGenerations
    from ocg.records import RunCard, Signature

    for m, settings, sampling in (
        ("a", {"id": "org/a-7b", "dtype": "bfloat16", "quantization": "none"}, None),
        (
            "b",
            {"id": "org/b-7b", "dtype": "float32", "quantization": "4bit", "max_new_tokens": 48},
            {"samples": 2, "seeds": [0, 1], "temperature": 0.7, "top_p": 0.95},
        ),
    ):
        sig = Signature.read(ModelScores.of(m, ReportFolder(runs / "both").scores).signature)
        card = ModelGenerations(Path(sig.generations)).run_card
        RunCard(
            model=m,
            settings={**settings, "resolved_revision": f"rev-{m}"},
            sampling=sampling,
        ).write(card)
    try:
        assert (
            main(
                [
                    "compare",
                    str(runs / "both"),
                    str(runs / "both"),
                    "--model-a",
                    "a",
                    "--model-b",
                    "b",
                ]
            )
            == 0
        )
    finally:
        for m in ("a", "b"):
            sig = Signature.read(ModelScores.of(m, ReportFolder(runs / "both").scores).signature)
            ModelGenerations(Path(sig.generations)).run_card.unlink()
    folder = outputs / "comparisons" / "both~a~vs~both~b"
    data = json.loads((folder / "comparison.json").read_text())
    a, b = data["a"]["generation"], data["b"]["generation"]
    assert (a["model_id"], a["revision"], a["dtype"], a["quantization"]) == (
        "org/a-7b",
        "rev-a",
        "bfloat16",
        "none",
    )
    assert a["decoding"] == "greedy, one answer per prompt" and "missing_reason" not in a
    assert (b["model_id"], b["revision"], b["dtype"], b["quantization"]) == (
        "org/b-7b",
        "rev-b",
        "float32",
        "4bit",
    )
    assert b["decoding"] == (
        "2 sampled answers per prompt (temperature 0.7, top_p 0.95), at most 48 new tokens"
    )
    page = (folder / "index.html").read_text()
    sides = page.split("id='sides'>")[1].split("</table>")[0]
    fields = ("model_id", "revision", "dtype", "quantization", "decoding")
    for value in (side[f] for side in (a, b) for f in fields):
        assert f"<td>{value}</td>" in sides
    assert a["source"].endswith("run_card.json")
    assert "the sides differ in revision, dtype, quantization, decoding" in page


def test_a_side_without_a_run_card_says_why(runs, outputs):
    assert main(["compare", str(runs / "both"), str(runs / "b"), "--model-a", "a"]) == 0
    data = json.loads((outputs / "comparisons" / "both~a~vs~b~b" / "comparison.json").read_text())
    made = data["a"]["generation"]
    assert made["model_id"] is None and "no run card" in made["missing_reason"]["model_id"]


def test_differing_verdicts_are_concepts_and_both_answers_in_one_row(runs, outputs):
    """Each listed answer is one row: a short set label (its id in the tooltip, never shown as
    text), where it was asked, the concepts in order, A's and B's answers with their verdicts."""
    import re
    from html import unescape

    assert main(["compare", str(runs / "both"), str(runs / "b"), "--model-a", "a"]) == 0
    folder = outputs / "comparisons" / "both~a~vs~b~b"
    data = json.loads((folder / "comparison.json").read_text())
    listed = data["verdicts_differ"]["answers"]
    table = (
        (folder / "index.html").read_text().split("id='verdicts-differ'>")[1].split("</table>")[0]
    )
    rows = re.findall(r"<tr><td>(.*?)</tr>", table, re.S)
    assert len(rows) == len(listed)
    labels = {s: f"set {i}" for i, s in enumerate(sorted({r["set_id"] for r in listed}), 1)}
    for html, answer in zip(rows, listed):
        cells = [unescape(re.sub(r"<[^>]+>", " ", c)).split() for c in html.split("<td>")]
        assert len(cells) == 4
        assert f"title='{answer['set_id']}'>{labels[answer['set_id']]}<" in html
        assert " ".join(cells[1]) == " → ".join(answer["concepts"].split())
        for cell, side in ((cells[2], "a"), (cells[3], "b")):
            verdict = "in order:" if answer[f"in_order_{side}"] else "not in order:"
            assert " ".join(cell) == f"{verdict} {answer[f'answer_{side}']}"


def test_the_sets_needed_come_from_the_per_set_differences(runs, outputs):
    """Each test's concept sets for a ±|Δ|/2 interval and 80% power, recomputed here from the
    answers' per-set differences by the normal formulas (scipy's quantiles)."""
    assert main(["compare", str(runs / "both"), str(runs / "b"), "--model-a", "a"]) == 0
    folder = outputs / "comparisons" / "both~a~vs~b~b"
    data = json.loads((folder / "comparison.json").read_text())
    answers = {
        m: pd.read_parquet(ModelScores.of(m, ReportFolder(runs / "both").scores).answers)
        for m in "ab"
    }
    row = next(
        t for t in data["tests"] if (t["condition"], t["metric"]) == ("ordered", "coverage_w_order")
    )
    per_set = {
        m: a[a.condition == "ordered"].groupby("set_id")["in_order"].mean() * 100
        for m, a in answers.items()
    }
    d = (per_set["a"] - per_set["b"]).to_numpy()
    sd, delta = np.std(d, ddof=1), row["difference"]
    z, z80 = stats.norm.ppf(0.975), stats.norm.ppf(0.8)
    assert row["per_set_sd"] == pytest.approx(sd) and row["sets_with_difference"] == 6
    assert row["interval_half_width"] == pytest.approx(abs(delta) / 2)
    assert row["sets_for_interval"] == max(2, int(np.ceil((z * sd / (abs(delta) / 2)) ** 2)))
    assert row["sets_for_power"] == max(2, int(np.ceil(((z + z80) * sd / abs(delta)) ** 2)))
    page = (folder / "index.html").read_text()
    assert f"{row['sets_for_interval']:,} · {row['sets_for_power']:,}" in page
    assert "How many concept sets" in page and "80% power" in page
    zero = [t for t in data["tests"] if t["difference"] == 0]
    for t in zero:  # no number of sets detects a zero difference: null, with the reason
        assert t["sets_for_power"] is None and "is 0" in t["missing_reason"]["sets_for_power"]
