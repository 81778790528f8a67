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
                "perm_index": i,  # the i-th answers of the two conditions share their prompt
                "all_present": bool(p),
                "in_order": bool(o),
                "copies_list": bool(k),
            }
            for (c, t), rows in DATA.items()
            for i, (p, o, k) in enumerate(rows)
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


def test_the_paired_row_stands_on_the_prompts_where_neither_answer_copies(answers):
    long = table1_sensitivity(answers)
    rows = long[(long["choice"] == copies.CHOICE) & (long["variant"] == copies.PAIRED)]
    rows = rows.set_index("metric")
    pairs = [
        (a, b)
        for t in (0, 1)
        for a, b in zip(DATA[("ordered", t)], DATA[("original", t)])
        if not a[2] and not b[2]
    ]
    assert len(pairs) == 10  # 16 prompts, 6 of them with a copy on one side or both
    ordered, original = _rates([a for a, _ in pairs]), _rates([b for _, b in pairs])
    for name in ordered:
        assert rows.at[name, "value"] == pytest.approx(ordered[name])
        assert rows.at[name, "delta"] == pytest.approx(ordered[name] - original[name])
    assert (rows["n_answers"] == 10).all() and (rows["n_original"] == 10).all()
    # not the excluded-copies figure: that one compares 10 ordered with 14 original answers
    excluded = long[(long["choice"] == copies.CHOICE) & (long["variant"] == copies.EXCLUDED)]
    assert rows.at["coverage_w_order", "delta"] != pytest.approx(
        excluded.set_index("metric").at["coverage_w_order", "delta"]
    )


def test_the_shift_ranks_same_denominator_figures_with_both_deltas(answers):
    long = table1_sensitivity(answers)
    shifts = largest_shifts(long, n=5)
    assert not any(s.startswith("excluding list copies") for s in shifts)  # other denominators
    sentence = next(s for s in shifts if s.startswith("copies as failures: w/ order"))
    assert "5.00 → " not in sentence and "→ 31.25 " in sentence  # 5 of all 16 answers
    assert "in order and not a copy, over all 16 ordered answers" in sentence
    assert "counting copies as failures" in sentence
    assert "paired on the 10 prompts where neither answer copies" in sentence
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


def test_commongen_s_rule_is_always_named_and_pos_correct_coverage_is_no_matching_rule():
    from ocg.analysis.coverage_variants import POS_CHOICE, READING_LABELS, RULE_LABELS

    ours = f"order: {READING_LABELS['in_order']}"

    def row(choice, shift):
        return {
            "model": "m",
            "metric": "coverage_w_order",
            "choice": choice,
            "variant": ours,
            "value": 50 + shift,
            "default": 50.0,
            "shift": shift,
        }

    rules = ["commongen_lemma", "commongen_lemma_lower", "lemma_or_surface", "any_lookup"]
    long = pd.DataFrame(
        [row(f"matching: {RULE_LABELS[r]}", s) for r, s in zip(rules, (0.5, 9.0, 8.0, 7.0))]
        + [row(POS_CHOICE[0], 30.0)]
    )
    shifts = largest_shifts(long, n=3)
    matching = [s for s in shifts if s.startswith("matching rule:")]
    assert len(matching) == 4 and "CommonGen's" in matching[-1]  # the smallest shift, still named
    assert any(s.startswith("PoS-correct coverage: w/ order of m 50.00 → 80.00") for s in shifts)
    assert not any("PoS-correct" in s for s in matching)


def test_a_copies_as_failures_ordered_rate_names_its_own_denominator(answers):
    # the audit: "over all 98 ordered answers" stood beside an Ordered Rate over 37 complete ones
    long = table1_sensitivity(answers)
    sentence = next(
        s for s in largest_shifts(long, n=9) if s.startswith("copies as failures: Ordered Rate")
    )
    a = answers[answers["condition"] == "ordered"]
    complete = int((a["all_present"].astype(bool) & ~a["copies_list"].astype(bool)).sum())
    assert f"over the {complete} complete answers that are not copies (of {len(a)}" in sentence
    assert "over all" not in sentence


def test_shifts_tied_with_the_last_one_named_are_all_named():
    # the audit: head(n) dropped one of four tied shifts silently
    from ocg.analysis.sensitivity import READING_LABELS, RULE_LABELS

    long = pd.DataFrame(
        [
            {
                "model": m,
                "metric": "coverage_w_order",
                "choice": f"matching: {RULE_LABELS['lemma_or_surface']}",
                "variant": f"order: {READING_LABELS['in_order']}",
                "value": 50.0 + shift,
                "default": 50.0,
                "shift": shift,
            }
            for m, shift in (("a", 9.0), ("b", 4.0), ("c", 4.0), ("d", 4.001), ("e", 1.0))
        ]
    )
    named = [s for s in largest_shifts(long, n=2) if s.startswith("matching rule")]
    assert [s.split(" of ")[1].split(" ")[0] for s in named[:2]] == ["a", "d"]
    assert named[2:] == ["matching rule: and 2 more shifts of the same size (4.00)"]
    assert len([s for s in largest_shifts(long, n=3) if s.startswith("matching rule")]) == 4
