"""How the report shows the LLM judge: its counts under Table 1 (ocg/site/judge_note.py), so
that a judge that judged nothing (the embedded SmolLM2 behind `transformers serve`,
params/runs/judge.yaml) says so where its columns show only "–"; and the case browser says
"unjudged" only where a judge was asked, never in a run that names none."""

import json

import pandas as pd
import pytest
import yaml

from ocg.metrics import judge
from ocg.records import Signature
from ocg.site.judge_note import judge_counts
from ocg.site.render import fragment


def signature(judge: dict) -> Signature:
    return Signature(families={"judge": judge})


def test_judged_and_unjudged_answers_and_disagreements_are_counted_per_model():
    summary = pd.DataFrame(
        {
            "model": ["small", "small", "big", "none"],
            "n_answers": [16, 16, 4, 8],
            "n_judge_order_disagreements": [0, 0, 1, 0],
            "n_judge_coverage_disagreements": [0, 0, 0, 0],
        }
    )
    ok = {"status": "ok", "judge": "served-judge", "key": {"id": "Qwen/Qwen2.5-7B-Instruct"}}
    example = {"answer": 'A jump {"score": 5}', "reply": None, "reason": judge.CARRIES_VERDICT}
    counts = judge_counts(
        summary,
        {
            "small": signature({**ok, "n_judged": 0, "unjudged": {"unparsed": 30, "error": 2}}),
            "big": signature(
                {
                    **ok,
                    "key": {"id": "embedded:smollm2-135m-instruct"},
                    "n_judged": 3,
                    "unjudged": {judge.CARRIES_VERDICT: 1},
                    "unjudged_examples": [example],
                }
            ),
            "none": signature({"status": "missing", "reason": "no judge in the run file"}),
        },
    )
    assert [(c.model, c.judged, c.unjudged, c.disagreements) for c in counts] == [
        ("big", 3, 1, 1),
        ("small", 0, 32, None),
    ]
    note = fragment("notes.html", "judge_counts", counts)
    big, small = note.split("<p class='note'>")[1:]
    assert "<b>Judge</b> of big (<code>served-judge</code>): 3 of 4 answers judged" in big
    assert "1 unjudged (1 the answer carries a verdict: never guessed)" in big
    # a summary written before the 2x2 counts: the share and its interval, no kappa, and why
    assert "coverage: agrees on 100% (3 of 3, a small sample; 95% CI 44–100%), Cohen's κ: " in big
    assert "order: agrees on 67% (2 of 3, a small sample; 95% CI 21–94%), Cohen's κ: " in big
    assert "predates the judge&#39;s 2x2 counts" in big and "Wilson" in big
    assert "lists the 1 whose order verdict differs" in big and "smoke test" in big
    assert "“A jump {&#34;score&#34;: 5}” → not asked" in big  # escaped, with its reason
    assert "0 of 32 answers judged, 32 unjudged (30 unparsed; 2 error" in small
    assert "Judge and Judge w/ order have no value" in small and "no value" not in big
    assert "agrees" not in small and "differs" not in small  # nothing judged: no "on 0"
    assert "smoke test" not in small


@pytest.mark.parametrize("judge", [None, "replayed-judge"])
def test_the_case_browser_shows_the_judge_only_where_a_run_named_one(
    scored_run, tmp_path, monkeypatch, judge
):
    """Without a judge every answer's judge columns hold NaN: the chunk carries none, so the page
    writes no "judge, unjudged" under each outcome (field() gives undefined: judgeText says nothing)."""
    from ocg.config.model_registry import MODELS_FILE
    from ocg.site.browser import BASE_FIELDS, JUDGE_COLUMNS, write_case_browser_from
    from ocg.site.chunks import read_chunk

    concepts = ["dog", "catch", "frisbee"]
    answers = ["The dog catches a frisbee.", "dog"]
    (tmp_path / "replies.jsonl").write_text(
        json.dumps({"instance_id": json.dumps([answers[0], concepts]), "answer": "no JSON"})
        + "\n"
        + json.dumps({"instance_id": json.dumps([answers[1], concepts]), "answer": "no JSON"})
        + "\n"
    )
    entry = {"id": "j", "backend": "replay", "replay": {"file": str(tmp_path / "replies.jsonl")}}
    (tmp_path / "models.yaml").write_text(
        yaml.safe_dump({"extends": str(MODELS_FILE), "models": {"replayed-judge": entry}})
    )
    monkeypatch.setattr("ocg.config.model_registry.MODELS_FILE", tmp_path / "models.yaml")
    rows = [
        {"set_id": "s1", "template_id": 0, "perm_index": p, "concepts": concepts, "answer": a}
        for p, a in enumerate(answers)
    ]
    root = scored_run("judge-display", rows, ["coverage", "judge"], judge=judge)
    page = write_case_browser_from(root / "report", ["m"], root / "scores", root / "gen")
    chunk = read_chunk(next((page.parent / "cases").glob("*.js")))
    scored = [*BASE_FIELDS, "pos_all_present", "pos_in_order"]  # coverage's quality columns
    if judge is None:
        assert chunk["fields"] == scored
        assert {len(r) for r in chunk["rows"]} == {len(scored)}
    else:  # asked, and both replies no rubric JSON: unjudged, and the page says so
        assert chunk["fields"] == [*scored, *JUDGE_COLUMNS]
        assert [r[-4:] for r in chunk["rows"]] == [[None, None, None, "unparsed"]] * 2


CONCEPTS = ["dog", "catch", "frisbee"]
EVERY = json.dumps({"score": 4, "order": CONCEPTS})
# answer -> the judge's reply: every cell of both checks' tables met, and one answer unjudged
REPLIES = {
    "The dog catches a frisbee.": EVERY,
    "A frisbee is caught by the dog.": EVERY,
    "The dog runs.": EVERY,
    "The dog catches it.": json.dumps({"score": 3, "order": ["dog", "catch"]}),
    "Dog catch frisbee now.": json.dumps({"score": 1, "order": ["frisbee", "dog"]}),
    "The frisbee flew.": "no JSON here",
}


@pytest.fixture(scope="module")
def judged_report(scored_run, tmp_path_factory):
    """A report of one model judged by a replay judge on 48 answers (40 judged): its landing page,
    results.json and answers."""
    from ocg.analysis import paper_tables
    from ocg.analysis.report import save_table, sources
    from ocg.results.scores import load_scores
    from ocg.site.landing import write_index
    from tests.helpers import checked_run, replay_judge

    texts = list(REPLIES)
    models = replay_judge(
        tmp_path_factory.mktemp("judge"), {(a, tuple(CONCEPTS)): r for a, r in REPLIES.items()}
    )

    def rows(_model, condition):
        shift = condition == "ordered"
        return [
            {
                "set_id": s,
                "template_id": t,
                "perm_index": p,
                "concepts": CONCEPTS,
                "pos_pattern": "NVN",
                "answer": texts[(p + t + int(s[1:]) + shift) % len(texts)],
            }
            for s in ("s1", "s2")
            for t in (0, 1)
            for p in range(6)
        ]

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr("ocg.config.model_registry.MODELS_FILE", models)
        root = scored_run(
            "judge-agreement",
            rows,
            ["coverage", "judge"],
            conditions=("original", "ordered"),
            judge="replayed-judge",
        )
        scores = load_scores(root / "scores")
        out = root / "report"
        save_table(paper_tables.table1(scores.summary), "table1", out, meta=sources(scores))
        run = checked_run(models=["m"], conditions=["original", "ordered"])
        page = write_index(
            out, "t", [], run=run, scores_root=root / "scores", generations_root=root / "gen"
        ).read_text()
    doc = json.loads((out / "results.json").read_text())
    return page, doc, scores.answers


def _line(check, g):
    """The page's line of one check, written from results.json's numbers."""
    return (
        f"{check}: agrees on {g['share']:.0f}% ({g['agree']} of {g['judged']}; 95% CI "
        f"{g['share_low']:.0f}–{g['share_high']:.0f}%), Cohen's κ {g['kappa']:.2f} (95% CI "
        f"{g['kappa_low']:.2f} to {g['kappa_high']:.2f})"
    )


def test_the_page_and_results_json_give_the_same_agreement(judged_report):
    page, doc, _ = judged_report
    block = doc["models"]["m"]["judge"]
    assert (block["answers"], block["judged"], block["unjudged"]) == (48, 40, {"unparsed": 8})
    note = page.split("<b>Judge</b> of m", 1)[1].split("</p>", 1)[0]
    assert _line("coverage", block["coverage"]) + ";<br>" in note
    assert _line("order", block["order"]) + ".<br>" in note
    assert "Wilson" in note and "Fleiss, Cohen &amp; Everitt 1969" in note
    assert "Wilson" in block["share_method"] and "Fleiss" in block["kappa_method"]


def test_results_json_agreement_equals_an_independent_computation(judged_report):
    """From the answers table: scikit-learn's kappa and scipy's Wilson interval."""
    from scipy.stats import binomtest
    from sklearn.metrics import cohen_kappa_score

    from ocg.analysis.agreement import Cells, kappa_se

    _, doc, answers = judged_report
    mine = answers[answers["judge_reason"].isna()]
    judge = {
        "coverage": mine["judge_order"].map(lambda o: set(CONCEPTS) <= set(o)),
        "order": mine["judge_order"].map(lambda o: list(o) == CONCEPTS),
    }
    ocg = {"coverage": mine["all_present"].astype(bool), "order": mine["in_order"].astype(bool)}
    for check in ("coverage", "order"):
        g = doc["models"]["m"]["judge"][check]
        agree = int((judge[check] == ocg[check]).sum())
        assert (g["judged"], g["agree"]) == (len(mine), agree) and not g["small_sample"]
        assert g["kappa"] == pytest.approx(cohen_kappa_score(judge[check], ocg[check]))
        ci = binomtest(agree, len(mine)).proportion_ci(method="wilson")
        assert (g["share_low"], g["share_high"]) == pytest.approx((100 * ci.low, 100 * ci.high))
        se = kappa_se(Cells(**g["cells"]), g["kappa"])
        assert g["kappa_low"] == pytest.approx(g["kappa"] - 1.959963984540054 * se)
        assert g["kappa_high"] == pytest.approx(g["kappa"] + 1.959963984540054 * se)
        assert sum(g["cells"].values()) == g["judged"] and "missing_reason" not in g


def test_the_judge_block_is_documented_and_its_nulls_explained(judged_report):
    from tests.helpers import documented_keys, nulls_without_reason

    _, doc, _ = judged_report
    block = doc["models"]["m"]["judge"]
    docs = documented_keys()
    seen = {
        "judge": set(block),
        "agreement": set(block["order"]),
        "cells": set(block["order"]["cells"]),
    }
    for level, keys in seen.items():
        assert keys == docs[level] - {"missing_reason"}, level
    assert nulls_without_reason(doc["models"]) == []
