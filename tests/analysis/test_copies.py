"""Table 1 without the list copies: both sides of the Δ, excluded or counted as
failures, pooled so that Ordered Rate = w/ / w/o holds; recomputed here by counting."""

import pandas as pd
import pytest

from ocg.analysis import copies
from ocg.analysis.sensitivity import largest_shifts, table1_sensitivity, wide
from ocg.site import caveats

# (condition, template): answers as (all_present, in_order, copies_list); the templates keep
# different numbers of non-copies, so a mean over templates would break the identity
DATA = {
    ("ordered", 0): [(1, 1, 1)] * 5 + [(1, 1, 0)] * 2 + [(1, 0, 0)] * 1,
    ("ordered", 1): [(1, 1, 1)] * 1 + [(1, 1, 0)] * 3 + [(1, 0, 0)] * 2 + [(0, 0, 0)] * 2,
    ("original", 0): [(1, 1, 1)] * 2 + [(1, 1, 0)] * 1 + [(1, 0, 0)] * 4 + [(0, 0, 0)] * 1,
    ("original", 1): [(1, 1, 0)] * 2 + [(1, 0, 0)] * 4 + [(0, 0, 0)] * 2,
}


@pytest.fixture
def answers():
    return pd.DataFrame(
        [
            {
                "model": "m",
                "condition": c,
                "template_id": t,
                "set_id": "s",
                "all_present": bool(p),
                "in_order": bool(o),
                "copies_list": bool(k),
            }
            for (c, t), rows in DATA.items()
            for p, o, k in rows
        ]
    )


def _counts(condition, keep):
    rows = [r for (c, _), rs in DATA.items() if c == condition for r in rs]
    kept = [keep(r) for r in rows]
    return [r for r in kept if r is not None]


def _rates(rows):
    n, present, inside = len(rows), sum(r[0] for r in rows), sum(r[1] for r in rows)
    return {
        "coverage_wo_order": 100 * present / n,
        "coverage_w_order": 100 * inside / n,
        "ordered_rate": 100 * inside / present,
    }


def test_both_variants_recomputed_by_counting_keep_the_ordered_rate_identity(answers):
    long = table1_sensitivity(answers)
    rows = long[long["choice"] == copies.CHOICE].set_index(["variant", "metric"])
    keep = {
        copies.EXCLUDED: lambda r: None if r[2] else r,
        copies.FAILED: lambda r: (r[0] and not r[2], r[1] and not r[2]),
    }
    for variant, rule in keep.items():
        ordered, original = _rates(_counts("ordered", rule)), _rates(_counts("original", rule))
        got = rows.loc[variant]
        for name in ordered:
            assert got.loc[name, "value"] == pytest.approx(ordered[name])
            assert got.loc[name, "delta"] == pytest.approx(ordered[name] - original[name])
        assert got.loc["ordered_rate", "value"] == pytest.approx(
            100 * got.loc["coverage_w_order", "value"] / got.loc["coverage_wo_order", "value"]
        )
    assert rows.loc[(copies.EXCLUDED, "coverage_w_order"), "n_answers"] == 16 - 6
    assert rows.loc[(copies.EXCLUDED, "coverage_w_order"), "n_original"] == 16 - 2
    assert rows.loc[(copies.FAILED, "coverage_w_order"), "n_answers"] == 16
    # Table 1's Δ beside them: the mean over templates of ordered minus original
    t1 = {
        t: 100 * sum(r[1] for r in DATA[("ordered", t)]) / 8
        - 100 * sum(r[1] for r in DATA[("original", t)]) / 8
        for t in (0, 1)
    }
    assert rows.loc[(copies.EXCLUDED, "coverage_w_order"), "default_delta"] == pytest.approx(
        sum(t1.values()) / 2
    )


def test_the_shift_names_the_same_denominator_figure_and_both_deltas(answers):
    long = table1_sensitivity(answers)
    sentence = next(
        s for s in largest_shifts(long, n=5) if s.startswith("excluding list copies: w/ order")
    )
    assert "(in order and not a copy: 31.25% of all 16 answers)" in sentence  # 5 of 16
    assert (
        "excluding copies on both sides" in sentence and "counting copies as failures" in sentence
    )
    shown = wide(long, "copies")
    assert ("excluding copies on both sides", "answers") in shown.columns
    assert shown.loc[("m", "w/ order"), ("excluding copies on both sides", "answers")] == "10 / 14"
    assert copies.CHOICE not in {c[0] for c in wide(long, "coverage").columns}


def test_table1_cells_resting_on_copies_are_marked():
    summary = pd.DataFrame(
        [
            {
                "model": "m",
                "condition": c,
                "template_id": 0,
                "n_all_present": 10,
                "n_in_order": 8,
                "n_copies_list": k,
            }
            for c, k in (("ordered", 4), ("original", 1))
        ]
    )
    table = pd.DataFrame(
        {
            ("w/o order", ""): [80.0],
            ("w/o order", "Δ"): [5.0],
            ("w/ order", ""): [60.0],
            ("w/ order", "Δ"): [12.5],
            ("pBLEU", ""): [3.0],
        },
        index=["m"],
    )
    marked = caveats.mark_copies(table, summary)
    # ordered: 4 of 10 complete answers (40%), 4 of 8 in order (50%); original: 10% and 12.5%
    assert (
        marked.loc["m", ("w/o order", "")] == "80.00 †"
        and marked.loc["m", ("w/ order", "Δ")] == "+12.50 †"
    )
    assert marked.loc["m", ("pBLEU", "")] == 3.0
    assert "40%" in caveats.copy_mark_note(summary, ".").shares
