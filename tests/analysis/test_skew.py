"""Means beside medians (analysis/skew.py): the pooled median, the median Δ where it contradicts
the mean Δ, no bold on such a mean in LaTeX, and metrics a compared model scored itself."""

import re
from types import SimpleNamespace

import hypothesis.strategies as st
import numpy as np
import pandas as pd
import pytest
from hypothesis import given

from ocg.analysis import latex, skew
from ocg.records import Signature


def _answers() -> pd.DataFrame:
    """Model a: one-shot's perplexity mostly above zero-shot's, but three answers of 10^5 in
    zero-shot make its mean larger (mean Δ < 0 while median Δ > 0). Model b: no skew."""
    rows = []
    for model, cond, values in (
        ("a", "ordered_one_shot", [120, 130, 140, 150, 160, 170, 180]),
        ("a", "ordered", [10, 20, 30, 40, 1e5, 1e5, 1e5]),
        ("b", "ordered_one_shot", [50, 55, 60, 65, 70, 75]),
        ("b", "ordered", [60, 65, 70, 75, 80, 85]),
    ):
        for i, v in enumerate(values):  # answer i of one condition pairs with answer i of the other
            rows.append(
                {
                    "model": model,
                    "condition": cond,
                    "template_id": i % 2,
                    "set_id": f"s{i}",
                    "perm_index": 0,
                    "perplexity": v,
                }
            )
    return pd.DataFrame(rows)


def _table(answers: pd.DataFrame) -> pd.DataFrame:
    means = answers.groupby(["model", "condition"])["perplexity"].mean()
    return pd.DataFrame(
        [
            {
                "model": m,
                "metric": "perplexity",
                "value": means[(m, "ordered_one_shot")],
                "delta": means[(m, "ordered_one_shot")] - means[(m, "ordered")],
            }
            for m in ("a", "b")
        ]
        + [
            {"model": m, "metric": "coverage_w_order", "value": v, "delta": 1.0}
            for m, v in (("a", 50.0), ("b", 40.0))
        ]
    )


def test_pooled_median_is_over_every_answer_not_a_mean_of_template_medians():
    answers = _answers()
    pooled = skew.pooled_medians(answers, "ordered", "perplexity")
    assert pooled["a"] == pytest.approx(40)
    per_template = (
        answers[answers.condition == "ordered"]
        .groupby(["model", "template_id"])["perplexity"]
        .median()
    )
    assert pooled["a"] != pytest.approx(per_template["a"].mean())


def test_a_mean_delta_its_median_contradicts_is_flagged_with_the_median_delta():
    answers = _answers()
    out = skew.with_medians(_table(answers), answers, "ordered_one_shot", "ordered", "delta")
    rows = out.set_index(["model", "metric"])
    a, b = rows.loc[("a", "perplexity")], rows.loc[("b", "perplexity")]
    assert a["delta"] < 0 < a["median_delta"]
    assert a["median_delta"] == pytest.approx(150 - 40)
    assert bool(a["mean_median_disagree"]) and bool(a["dagger_base"]) and not bool(a["dagger"])
    assert not bool(b["mean_median_disagree"]) and not bool(b["dagger"] or b["dagger_base"])
    assert np.isnan(rows.loc[("a", "coverage_w_order"), "median_delta"])
    assert "median Δ" in skew.median_text(a) and skew.median_text(b) == ""


def test_opposite_signs_alone_disagree():
    assert skew.disagree(-3.0, 2.0, False) and not skew.disagree(-3.0, -2.0, False)
    # a median Δ of exactly 0 beside a mean Δ of +80.32 disagrees; two zeros agree
    assert skew.disagree(80.32, 0.0, False) and not skew.disagree(0.0, 0.0, False)
    assert skew.disagree(1.0, 1.0, True)
    assert not skew.disagree(np.nan, 2.0, False)


def test_latex_bolds_no_mean_its_median_contradicts():
    answers = _answers()
    out = skew.with_medians(_table(answers), answers, "ordered_one_shot", "ordered", "delta")
    tex = latex.latex_from_long(out, "model", "value", "delta", "delta", table="table4")
    row_a = next(line for line in tex.splitlines() if line.startswith("a &"))
    row_b = next(line for line in tex.splitlines() if line.startswith("b &"))
    ppl_a = row_a.split(" & ")[2]
    assert r"\textbf" not in ppl_a and r"\underline" not in ppl_a
    assert r"\ddagger" in ppl_a and r"\mathrm{median}" in ppl_a
    assert r"\textbf" in row_b.split(" & ")[2]  # the only other perplexity: best, and bolded
    # without the flag, a's perplexity Δ would have been bolded (lower is better)
    plain = latex.latex_from_long(
        _table(answers), "model", "value", "delta", "delta", table="table4"
    )
    assert (
        r"\textbf{-" in next(x for x in plain.splitlines() if x.startswith("a &")).split(" & ")[2]
    )


def test_self_scored_names_the_compared_model_that_scored_perplexity_and_slor():
    sig = Signature(
        families={
            "perplexity": {"used": "embedded:smollm2-135m-instruct"},
            "slor": {"perplexity_model": "embedded:smollm2-135m-instruct"},
        }
    )
    ids = {
        "small": ("embedded:smollm2-135m-instruct", "none"),
        "small-4bit": ("embedded:smollm2-135m-instruct", "4bit"),
    }
    scorers = skew.self_scored({"small": sig}, ids)
    assert set(scorers) == {"perplexity", "slor"} and scorers["perplexity"].exact == ("small",)
    assert skew.self_scored({"small": sig}, {"other": "org/other"}) == {}
    assert "bolds these columns across no models" in skew.self_scored_note(scorers)
    tex = latex.latex_from_long(
        _table(_answers()),
        "model",
        "value",
        "delta",
        "delta",
        table="table4",
        unmarked=frozenset(scorers),
        note=skew.self_scored_note(scorers),
    )
    for line in [x for x in tex.splitlines() if x.startswith(("a &", "b &"))]:
        assert r"\textbf" not in line.split(" & ")[2]
    assert "bolds these columns across no models" in tex


@pytest.mark.parametrize("order", [1, -1])
def test_the_scorer_note_names_the_unquantized_entry_whichever_comes_last(order):
    # the audit (b): two entries share one id; inverting name -> id kept the last, the 4-bit one
    sig = Signature(
        families={"perplexity": {"used": "embedded:x"}, "slor": {"perplexity_model": "embedded:x"}}
    )
    entries = [
        ("x-4bit", ("embedded:x", "4bit")),
        ("x", ("embedded:x", "none")),
        ("y", ("org/y", "none")),
    ]
    scorers = skew.self_scored({"x": sig}, dict(entries[::order]))
    for metric in ("perplexity", "slor"):
        assert scorers[metric].exact == ("x",)
        assert scorers[metric].same_weights == (("x-4bit", "4bit"),)
    note = skew.self_scored_note(scorers)
    assert "perplexity by x (its weights also compared 4bit in x-4bit)" in note
    assert "by x-4bit" not in note


def test_a_quantized_entry_alone_is_named_as_sharing_the_scorer_s_weights():
    sig = Signature(families={"perplexity": {"used": "embedded:x"}})
    scorers = skew.self_scored({"q": sig}, {"q": ("embedded:x", "8bit")})
    assert str(scorers["perplexity"]) == "embedded:x, unquantized (the weights of 8bit in q)"


_IDS = ("org/p", "org/q", "embedded:r")  # a few ids, so that entries share one


@st.composite
def _compared(draw):
    """Compared entries, some sharing an id (quantized or not), as self_scored takes them (an
    (id, quantization) pair, an id alone, a models-file entry; a model the file does not know
    named by its id), with {name: (id, quantized or None)}."""
    entries, truth = {}, {}
    for i in range(draw(st.integers(1, 6))):
        model_id = draw(st.sampled_from(_IDS))
        q = draw(st.sampled_from([None, None, "none", "4bit", "8bit"]))
        form = draw(st.sampled_from(["pair", "id", "entry", "unknown"]))
        if form in ("id", "unknown"):
            q = None
        name = model_id if form == "unknown" else f"e-{i}"
        if name in entries:
            continue
        entries[name] = {
            "pair": (model_id, q),
            "id": model_id,
            "entry": SimpleNamespace(id=model_id, quantization=q),
            "unknown": (model_id, "none"),
        }[form]
        truth[name] = (model_id, None if q in (None, "none") else q)
    return entries, truth


def _named(text: str, names) -> set[str]:
    return set(re.findall(r"[\w:/.-]+", text)) & set(names)


@given(
    _compared(),
    st.sampled_from([*_IDS, "org/other", None]),
    st.sampled_from([*_IDS, "org/other", None]),
    st.integers(1, 3),
)
def test_the_scorer_note_names_exactly_the_entries_with_the_scorer_s_weights(
    compared, ppl, slor, n_models
):
    """Over generated compared entries sharing ids, and a scorer (perplexity's, SLOR's) that is
    none, one or several of them: each metric is named iff some entry holds the scorer's weights,
    the note names as its scorer exactly the unquantized entries of that id and as sharing its
    weights exactly the quantized ones, and no other entry."""
    entries, truth = compared
    families = {}
    if ppl:
        families["perplexity"] = {"used": ppl}
    if slor:
        families["slor"] = {"perplexity_model": slor}
    signatures = {f"s{i}": Signature(families=families) for i in range(n_models)}
    scorers = skew.self_scored(signatures, entries)
    note = skew.self_scored_note(scorers)
    parts = dict(
        part.split(" by ", 1)
        for part in (re.search(r"models \((.*)\): a model's own", note) or [None, ""])[1].split(
            "; "
        )
        if part
    )
    for metric, used in (("perplexity", ppl), ("slor", slor)):
        exact = sorted(n for n, (i, q) in truth.items() if i == used and q is None)
        shared = sorted((n, q) for n, (i, q) in truth.items() if i == used and q is not None)
        assert (metric in scorers) == (metric in parts) == bool(exact or shared)
        if metric not in scorers:
            continue
        assert (scorers[metric].exact, scorers[metric].same_weights) == (
            tuple(exact),
            tuple(shared),
        )
        head, _, rest = parts[metric].partition("(")
        assert _named(head, truth) == set(exact)
        assert _named(rest, truth) == {n for n, _ in shared}
        assert exact or head == f"{used}, unquantized "
    assert (note == "") == (not scorers)


def _paired_answers(seed: int, n: int = 40):
    """One model, two conditions of n prompts each, heavy-tailed perplexity, a few answers
    unscored on each side: the pooled medians' difference and the paired median differ."""
    rng = np.random.default_rng(seed)
    rows = []
    for cond, scale in (("ordered", 1.0), ("original", 1.3)):
        values = scale * np.exp(rng.normal(4, 1.5, n))
        values[rng.choice(n, 3, replace=False)] = np.nan
        for i, v in enumerate(values):
            rows.append(
                {
                    "model": "m",
                    "condition": cond,
                    "template_id": i % 3,
                    "set_id": f"s{i // 3}",
                    "perm_index": i % 2,
                    "perplexity": v,
                }
            )
    return pd.DataFrame(rows)


@pytest.mark.parametrize("seed", range(5))
def test_the_median_delta_is_the_median_of_paired_per_prompt_differences(seed):
    answers = _paired_answers(seed)
    o = answers[answers.condition == "ordered"]["perplexity"].to_numpy()
    r = answers[answers.condition == "original"]["perplexity"].to_numpy()
    mean, mean_base = np.nanmean(o), np.nanmean(r)
    long = pd.DataFrame(
        [{"model": "m", "metric": "perplexity", "value": mean, "delta": mean - mean_base}]
    )
    row = skew.with_medians(long, answers, "ordered", "original", "delta").iloc[0]
    both = ~np.isnan(o) & ~np.isnan(r)  # rows are in the same prompt order in both conditions
    assert row["median_delta"] == pytest.approx(np.median(o[both] - r[both]), rel=1e-12)
    assert row["n_pairs"] == both.sum()
    assert row["median"] == pytest.approx(np.nanmedian(o)) and row["median_base"] == pytest.approx(
        np.nanmedian(r)
    )
    assert bool(row["dagger"]) == bool(mean > 10 * np.nanmedian(o))
    assert bool(row["dagger_base"]) == bool(mean_base > 10 * np.nanmedian(r))
    # the same helper, two bases: the forced order's columns per base equal the single-base ones
    two = skew.with_medians(
        long.assign(other=long["delta"]), answers, "ordered", {"original": "delta", "x": "other"}
    ).iloc[0]
    assert two["median_delta_vs_original"] == row["median_delta"]
    assert np.isnan(two["median_delta_vs_x"]) and two["n_pairs_vs_x"] == 0


def test_ppl_mean_over_median_is_defined_once():
    import re
    from pathlib import Path

    root = Path(skew.__file__).resolve().parents[1]
    defined = [
        p.relative_to(root).as_posix()
        for p in root.rglob("*.py")
        if re.search(r"^PPL_MEAN_OVER_MEDIAN\s*=", p.read_text(), re.M)
    ]
    assert defined == ["analysis/skew.py"]
