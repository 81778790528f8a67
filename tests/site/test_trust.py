"""The line above Table 1 that says how far to trust the page (ocg/site/trust.py): its figures
from a run whose truncated answers are known, the fallbacks it names, and Table 1's notes folded
under a details element, the table itself in a container that scrolls with its key column fixed."""

import re
from dataclasses import replace

import hypothesis.strategies as st
import pandas as pd
import pytest
from hypothesis import given

from ocg.analysis import paper_tables as tables
from ocg.analysis.report import save_table
from ocg.results.scores import Scores, load_scores
from ocg.site import verify as v
from ocg.site.landing import write_index
from ocg.site.render import _environment
from ocg.site.trust import trust_line
from tests.helpers import checked_run

ANSWERS = ["The boy rides a bike down the street.", "Street, bike, boy.", "Boy ride bike street."]


def _rows(model, condition):
    """Sets s1-s3, templates 0 and 1, six permutations; `ordered` answers of permutation 0, and
    every one of model b's, stopped at the token budget."""
    return [
        {
            "set_id": s,
            "template_id": t,
            "perm_index": p,
            "concepts": ["boy", "ride", "bike", "street"],
            "pos_pattern": "NVNN",
            "answer": ANSWERS[(p + t) % len(ANSWERS)],
            "finish_reason": "length"
            if condition == "ordered" and (p == 0 or model == "b")
            else "stop",
        }
        for s in ("s1", "s2", "s3")
        for t in (0, 1)
        for p in range(6)
    ]


@pytest.fixture(scope="module")
def run(scored_run):
    root = scored_run(
        "trust", _rows, ["coverage"], models=("a", "b"), conditions=("original", "ordered")
    )
    return root, load_scores(root / "scores")


def test_the_trust_line_counts_sets_answers_and_truncated_answers(run):
    _, scores = run
    line = trust_line(scores)
    per_model_condition = 3 * 2 * 6  # sets x templates x permutations
    truncated = 3 * 2 * 1 + per_model_condition  # a: permutation 0 of ordered; b: all of ordered
    answers = 2 * 2 * per_model_condition
    assert (line.sets, line.answers, line.truncated) == ("3", answers, truncated)
    assert line.truncated_pct == pytest.approx(100 * 42 / 144)
    assert line.small_sample and line.min_sets == 20
    assert line.conditions == ["ordered", "original"] and line.fallbacks == []


def test_a_reference_entry_s_replayed_sentences_are_no_model_s_answers(run):
    # the audit (c): 576 replayed sentences were counted among 96 answers, diluting 29 cut ones
    _, scores = run
    summary = scores.summary
    line = trust_line(replace(scores, references={"b": "a reference source"}))
    a = summary[(summary["model"] == "a") & summary["condition"].isin(["ordered", "original"])]
    b = summary[(summary["model"] == "b") & summary["condition"].isin(["ordered", "original"])]
    assert (
        (line.answers, line.truncated) == (a["n_answers"].sum(), a["n_truncated"].sum()) == (72, 6)
    )
    assert line.replayed == b["n_answers"].sum() == 72
    assert line.truncated_pct == pytest.approx(100 * 6 / 72)
    assert trust_line(replace(scores, references={"a": "x", "b": "y"})) is None


def test_the_trust_line_names_a_metric_that_fell_back(run):
    _, scores = run
    sig = scores.signatures["a"]
    fell_back = {
        **sig.families,
        "perplexity": {"requested": "gpt2-xl", "used": "embedded:smollm2-135m-instruct"},
    }
    line = trust_line(replace(scores, signatures={"a": sig.replace(families=fell_back)}))
    assert line.fallbacks == ["perplexity of a from embedded:smollm2-135m-instruct (not gpt2-xl)"]


def test_the_page_shows_it_above_table1_with_the_notes_open(run):
    root, scores = run
    out = root / "report"
    save_table(tables.table1(scores.summary), "table1", out)
    run_file = checked_run(
        models=["a", "b"], conditions=["original", "ordered"], subset_k=3, n_concepts=4
    )
    page = write_index(
        out, "t", [], run=run_file, scores_root=root / "scores", generations_root=root / "gen"
    ).read_text()
    t1 = page.split("<h2>Table 1")[1].split("<h2>")[0]
    trust, rest = t1.split("<table", 1)
    assert (
        "How far to trust this page:</b> Table 1 stands on 3 concept sets (“small sample”" in trust
    )
    assert (
        "144 answers (ordered and original, the run's models); 42 of them (29.2%) cut at" in trust
    )
    assert "no fallback used" in trust
    assert re.search(r"<div class='scroll table1'>\s*<table", t1)
    assert ".scroll tr>:first-child{position:sticky;left:0" in page  # its key column stays
    notes = re.search(
        r"<details class='notes' open><summary>Notes on this table</summary>(.*?)</details>\s*<p class='sub'>From",
        t1,
        re.S,
    )
    assert notes and "What each row stands on" in notes[1] and "What the columns mean" in notes[1]
    assert "<p class='note'>" not in t1.replace(notes[0], "")  # every note is in the notes


@st.composite
def _summaries(draw):
    """A summary of models and reference entries (replayed sentences) over Table 1's conditions
    and others, each row's answers and the truncated among them."""
    models = [f"m{i}" for i in range(draw(st.integers(0, 3)))]
    refs = [f"ref{i}" for i in range(draw(st.integers(0, 3)))]
    rows = []
    for entry in models + refs:
        for condition in draw(
            st.sets(st.sampled_from(["ordered", "original", "ordered_one_shot", "forced"]))
        ):
            n = draw(st.integers(0, 5000))
            rows.append(
                {
                    "model": entry,
                    "condition": condition,
                    "n_answers": n,
                    "n_truncated": draw(st.integers(0, n)),
                }
            )
    summary = pd.DataFrame(rows, columns=["model", "condition", "n_answers", "n_truncated"])
    designs = {e: {"sets": draw(st.integers(1, 40))} for e in models + refs}
    return Scores(summary=summary, designs=designs, references=dict.fromkeys(refs, "commongen"))


@given(_summaries())
def test_the_trust_box_counts_the_models_answers_and_never_a_reference_entry_s(scores):
    """Over generated answer sets of models and reference entries: the trust box's data-answers
    and data-truncated (index.html) are the models' answers in Table 1's conditions and the cut
    ones among them, the reference entries' counted apart as replayed; no box where no model
    answered there; verify (I5) reads the box as written and breaks a count with the references'."""
    s = scores.summary
    table1 = s[s["condition"].isin(["ordered", "original"])]
    mine = table1[~table1["model"].isin(scores.references)]
    theirs = table1[table1["model"].isin(scores.references)]
    line = trust_line(scores)
    if mine.empty:
        assert line is None
        return
    assert (line.answers, line.truncated, line.replayed) == (
        mine["n_answers"].sum(),
        mine["n_truncated"].sum(),
        theirs["n_answers"].sum(),
    )
    page = v._Tables()
    page.feed(_environment().get_template("sections.html").module.trust(line))
    page.close()
    assert page.trust is not None
    assert (page.trust["answers"], page.trust["truncated"]) == (
        str(mine["n_answers"].sum()),
        str(mine["n_truncated"].sum()),
    )
    c = v._Check()
    v._trust_counts(page.trust, s, set(scores.references), c)
    assert c.broken == [] and c.checked == 2
    page.trust["answers"] = str(table1["n_answers"].sum())  # the references' counted in
    c = v._Check()
    v._trust_counts(page.trust, s, set(scores.references), c)
    assert bool(c.broken) == bool(theirs["n_answers"].sum())
