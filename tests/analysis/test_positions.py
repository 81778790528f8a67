"""Where order breaks (ocg/analysis/positions.py, preferences.py) on answers built by hand, every
expected value worked out below from the positions given; and on hand-written answers scored by
ocg's coverage scoring, where a repeated word decides which mention counts."""

import numpy as np
import pandas as pd
import pytest

from ocg.analysis import positions, preferences
from ocg.core.errors import OcgInputError
from ocg.results.scores import load_scores

WORDS = {
    "boy": "N",
    "ride": "V",
    "bike": "N",
    "street": "N",
    "dog": "N",
    "catch": "V",
    "frisbee": "N",
    "throw": "V",
}


def answer(condition, set_id, perm, asked, used, sample=0):
    """One answer row: the asked order and the token positions the order check used (-1 missing)."""
    present = [p >= 0 for p in used]
    in_order = all(present) and all(a < b for a, b in zip(used, used[1:]))
    return {
        "model": "m",
        "condition": condition,
        "template_id": 0,
        "set_id": set_id,
        "perm_index": perm,
        "sample": sample,
        "concepts": asked.split(),
        "pos_pattern": "".join(WORDS[w] for w in asked.split()),
        "order_positions": np.array(used),
        "all_present": all(present),
        "in_order": in_order,
        "answer": f"answer {set_id} {perm} {sample}",
    }


# "The boy rides a bike down the street": boy 1, ride 2, bike 4, street 6.
ORDERED = [
    answer("ordered", "s", 0, "boy ride bike street", [1, 2, 4, 6]),  # 1: in order
    answer("ordered", "s", 1, "ride boy bike street", [2, 1, 4, 6]),  # 2: first two swapped
    answer("ordered", "s", 2, "street bike ride boy", [6, 4, 2, 1]),  # 3: all reversed
    answer("ordered", "s", 3, "boy bike ride street", [1, -1, 2, 5]),  # 4: bike missing
    answer(
        "ordered", "s", 1, "ride boy bike street", [1, 1, 3, 5], sample=1
    ),  # 5: ride and boy on one token
]
ORIGINAL = [
    answer("original", "s", 0, "boy ride bike street", [1, 2, 4, 6]),
    answer("original", "s", 1, "ride boy bike street", [2, 1, 4, 6]),
    answer("original", "s", 2, "street bike ride boy", [6, 4, 2, 1]),
    answer("original", "s2", 0, "dog catch frisbee throw", [1, 2, 4, 6]),  # written as asked
    answer("original", "s2", 1, "throw frisbee catch dog", [1, 2, 3, 4]),  # written as asked
]


@pytest.fixture
def hand():
    return pd.DataFrame(ORDERED + ORIGINAL)


def test_present_and_in_place_by_asked_position(hand):
    t = positions.by_position(hand).set_index(["condition", "position"])
    o = t.loc["ordered"]
    assert list(o.n_answers) == [5] * 4 and list(o.n_complete) == [4] * 4
    # present: only answer 4 misses a concept, the one asked second
    assert list(o.present_pct) == [100, 80, 100, 100]
    # in place, place 1: answers 1 and 4; 2: answer 1; 3 and 4: answers 1, 2, 5 (not 5's tied pair)
    assert list(o.in_place_pct) == [40, 20, 60, 60]
    # among the 4 complete answers (1, 2, 3, 5): 1 / 1 / 3 / 3 in place
    assert list(o.in_place_if_complete_pct) == [25, 25, 75, 75]
    # original: 1 in order, 2 swaps the first two, 3 is reversed; s2 both in order
    assert list(t.loc["original"].in_place_pct) == [60, 60, 80, 80]


def test_complete_answers_are_all_in_place_exactly_when_in_order(hand):
    pos = np.stack(hand["order_positions"])
    placed = positions.in_place(pos)
    complete = (pos >= 0).all(axis=1)
    assert list(placed.all(axis=1) & complete) == list(hand["in_order"])


def test_out_of_order_pairs(hand):
    t = positions.swapped_pairs(hand).set_index(["condition", "first", "second"])
    o = t.loc["ordered"]
    # pairs with place 2 lack answer 4 (bike missing): 4 answers, else 5
    assert o.n_both.to_dict() == {(1, 2): 4, (1, 3): 5, (1, 4): 5, (2, 3): 4, (2, 4): 4, (3, 4): 5}
    # 1-2: answers 2 (swapped), 3 (reversed) and 5 (same token); every other pair: answer 3 only
    assert o.n_out_of_order.to_dict() == {
        (1, 2): 3,
        (1, 3): 1,
        (1, 4): 1,
        (2, 3): 1,
        (2, 4): 1,
        (3, 4): 1,
    }
    assert o.out_of_order_pct.to_dict() == {
        (1, 2): 75,
        (1, 3): 20,
        (1, 4): 20,
        (2, 3): 25,
        (2, 4): 25,
        (3, 4): 20,
    }
    wide = positions.swaps_wide(positions.swapped_pairs(hand))
    assert list(wide.columns) == ["1–2", "1–3", "1–4", "2–3", "2–4", "3–4"]
    assert wide.loc[("m", "ordered", 4), "1–2"] == 75


def test_written_order_breaks_a_shared_token_alphabetically(hand):
    orders = preferences.written_orders(hand)
    assert orders.iloc[2] == "boy ride bike street"  # asked reversed, written as answer 1
    assert orders.iloc[3] is None  # a concept missing: no order
    assert (
        orders.iloc[4] == "boy ride bike street"
    )  # ride and boy on one token: boy first, not as asked


def test_preferred_order_and_how_much_ordered_weakens_it(hand):
    prefs = preferences.preferred_orders(hand).set_index(["condition", "set_id"])
    s = prefs.loc[("ordered", "s")]
    # 5 answers (two samples of permutation 1) over 4 permutations; 4 complete, all "boy ride bike street"
    assert (s.n_answers, s.n_permutations, s.n_complete, s.n_orders) == (5, 4, 4, 1)
    assert (s.preferred_order, s.n_preferred, s.preferred_pct) == ("boy ride bike street", 4, 80)
    assert prefs.loc[("original", "s"), "preferred_pct"] == 100  # 3 of 3
    tie = prefs.loc[("original", "s2")]  # one answer each way: the alphabetically first order
    assert (tie.preferred_order, tie.n_preferred, tie.preferred_pct) == (
        "dog catch frisbee throw",
        1,
        50,
    )
    summary = preferences.preference_summary(preferences.preferred_orders(hand)).set_index(
        "condition"
    )
    assert (
        summary.loc["original", "preferred_pct"] == 75
        and summary.loc["ordered", "preferred_pct"] == 80
    )
    assert summary.loc["ordered", "preferred_pct_vs_original"] == 5
    assert summary.one_order_groups.to_dict() == {"original": 1, "ordered": 0}
    assert summary.permutations.to_dict() == {"original": 3, "ordered": 4}
    assert summary.loc["ordered", "baseline_pct"] == 25
    shown = preferences.strongest(preferences.preferred_orders(hand), hand, "ordered")
    assert list(shown.how_often) == ["4 of 5"]


def test_first_concept_part_of_speech(hand):
    t = preferences.by_first_pos(hand, "ordered").set_index("first_pos")
    # asked first a noun: answers 1, 3, 4 (2 complete, 1 in order, first in place in 1 and 4)
    assert t.loc["N", "n_answers"] == 3
    assert t.loc["N", "coverage_wo_order_mean"] == pytest.approx(200 / 3)
    assert t.loc["N", "coverage_w_order_mean"] == pytest.approx(100 / 3)
    assert t.loc["N", "ordered_rate_mean"] == 50
    assert t.loc["N", "first_in_place_pct_mean"] == pytest.approx(200 / 3)
    # asked first a verb: answers 2 and 5, both complete, neither in order nor the first in place
    assert list(
        t.loc[
            "V",
            [
                "n_answers",
                "coverage_wo_order_mean",
                "coverage_w_order_mean",
                "first_in_place_pct_mean",
            ],
        ]
    ) == [2, 100, 0, 0]


def test_answers_without_positions_or_the_condition_are_refused(hand):
    with pytest.raises(OcgInputError, match="order_positions"):
        positions.by_position(hand.drop(columns="order_positions"))
    with pytest.raises(
        OcgInputError,
        match="'ordered_one_shot' has no scored answers; expected one of original, ordered",
    ):
        preferences.by_first_pos(hand, "ordered_one_shot")


@pytest.fixture(scope="module")
def scored(scored_run):
    sentence, mentioned_twice = (
        "The boy rides a bike down the street.",
        "A bike: the boy rides a bike down the street.",
    )
    rows = [
        (0, "boy ride bike street", sentence),
        (1, "bike boy ride street", sentence),
        (2, "bike boy ride street", mentioned_twice),
        (3, "boy ride bike street", mentioned_twice),
    ]
    root = scored_run(
        "positions",
        [
            {
                "set_id": "s",
                "template_id": 0,
                "perm_index": p,
                "concepts": asked.split(),
                "answer": text,
                "pos_pattern": "".join(WORDS[w] for w in asked.split()),
            }
            for p, asked, text in rows
        ],
        ["coverage"],
    )
    return load_scores(root / "scores").answers.sort_values("perm_index").reset_index(drop=True)


def test_scored_answers_count_the_mention_the_order_check_used(scored):
    pos = np.stack(scored["order_positions"])
    placed = positions.in_place(pos)
    assert placed.tolist() == [
        [True] * 4,
        [False, False, False, True],  # bike asked first, written third
        [True] * 4,  # bike at its first mention, before the boy
        [True] * 4,
    ]  # bike at its second mention, after the ride
    assert list(preferences.written_orders(scored)) == ["boy ride bike street"] * 2 + [
        "bike boy ride street",
        "boy ride bike street",
    ]
    assert list(placed.all(axis=1)) == list(scored["in_order"])
