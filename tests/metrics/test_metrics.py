"""Hand-worked examples for every metric, and pBLEU equal to sacrebleu's loop."""

import math
import random

import numpy as np
import pandas as pd
import pytest
from sacrebleu import sentence_bleu

from ocg.metrics import (
    degenerate,
    distinct2_pooled,
    distinct2_sentence,
    diverse_rate,
    load_nlp,
    pairwise_bleu,
    pairwise_bleu_loop,
    pairwise_matrix,
    score_coverage,
)
from ocg.metrics.coverage import analyse, match
from ocg.scoring import summarise


@pytest.fixture(scope="module")
def nlp():
    return load_nlp("auto")


def cover(nlp, answer, concepts, rule="pos_aware_lookup", pos=None):
    tokens = analyse([answer], nlp, rule=rule)[answer]
    return match(tokens, concepts, pos)


def test_order_check_with_a_repeated_concept(nlp):
    concepts = ["frisbee", "dog", "catch", "throw"]
    r = cover(nlp, "A dog saw the frisbee, and the dog caught it after I threw it.", concepts)
    # dog is first mentioned before frisbee, but its second mention follows it: in order
    assert r["all_present"] and r["in_order"]
    assert r["match_positions"] == [4, 1, 9, 13]


def test_order_positions_are_the_ones_the_verdict_used(nlp):
    """The case browser shows these: in order through dog's second mention (8), not its first (1);
    "first occurrences only" reads the same answer as out of order."""
    from ocg.metrics.matching import verdicts

    concepts = ["frisbee", "dog", "catch", "throw"]
    answer = "A dog saw the frisbee, and the dog caught it after I threw it."
    r = cover(nlp, answer, concepts)
    assert r["order_positions"] == [4, 8, 9, 13] and r["match_positions"] == [4, 1, 9, 13]
    v = verdicts(analyse([answer], nlp)[answer], concepts)
    assert v["in_order"] and not v["in_order_first"]
    broken = cover(
        nlp, "The dog threw the frisbee and then the dog caught it.", ["dog", "catch", "throw"]
    )
    assert not broken["in_order"] and broken["order_positions"] == [
        1,
        9,
        2,
    ]  # the sequence breaks at "throw"


def test_every_rules_verdicts_are_stored_beside_the_default(nlp):
    from ocg.metrics.coverage import VARIANT_COLUMNS

    df = score_coverage(
        pd.Series(["The boy rides a bike.", "A dog saw the frisbee, and the dog caught it."]),
        pd.Series([["boy", "ride", "bike"], ["frisbee", "dog", "catch"]]),
        nlp,
        pos_patterns=pd.Series(["NVN", "NNV"]),
    )
    assert set(VARIANT_COLUMNS) <= set(df.columns)
    assert df["all_present@pos_aware_lookup"].tolist() == df["all_present"].tolist() == [True, True]
    assert df["all_present@commongen_lemma"].tolist() == [False, True]  # "rides" -> "rid"
    assert df["in_order@pos_aware_lookup"].tolist() == [True, True]
    assert df["in_order_first@pos_aware_lookup"].tolist() == [True, False]


def test_all_concepts_out_of_order(nlp):
    r = cover(
        nlp, "The frisbee was thrown and the dog caught it.", ["dog", "catch", "throw", "frisbee"]
    )
    assert r["all_present"] and not r["in_order"] and r["coverage_frac"] == 1.0


def test_concept_matched_only_by_inflection(nlp):
    concepts, pos = ["boy", "ride", "bike", "street"], "NVNN"
    answer = "The boy rides his bikes down the street."
    # the small pipeline lemmatises "rides" to "rid": without the lookup rule "ride" is missed
    assert not cover(nlp, answer, concepts, "commongen_lemma", pos)["all_present"]
    r = cover(nlp, answer, concepts, pos=pos)
    assert r["all_present"] and r["in_order"]  # "rides" via the lookup table, "bikes" via the lemma
    assert (
        cover(nlp, "Riding a bike, the boy crossed the street.", concepts, pos=pos)["coverage_frac"]
        == 1.0
    )


def test_missing_concepts_and_missing_answers(nlp):
    df = score_coverage(
        pd.Series(["The dog ran in the park.", None, ""]),
        pd.Series([["dog", "run", "park", "ball"]] * 3),
        nlp,
    )
    assert df.coverage_frac.tolist() == [0.75, 0.0, 0.0]
    assert not df.all_present.any() and not df.in_order.any()
    assert df.match_positions[0] == [1, 2, 5, -1]


def test_identical_answers_are_lemmatised_once(nlp, monkeypatch):
    from ocg.metrics import coverage

    calls = []
    real = coverage.parse

    def counting(texts, nlp, batch_size=256):
        calls.extend(texts)
        return real(texts, nlp, batch_size)

    monkeypatch.setattr(coverage, "parse", counting)
    scored = score_coverage(
        pd.Series(["A dog.", "A dog.", "A cat."]), pd.Series([["dog"]] * 3), nlp
    )
    assert calls == ["A dog.", "A cat."]
    assert scored["all_present"].tolist() == [True, True, False]


def answers_table(rows):
    """rows: (template_id, all_present, in_order) -> a minimal scored answers table."""
    df = pd.DataFrame(rows, columns=["template_id", "all_present", "in_order"])
    df["model"], df["condition"], df["set_id"] = "m", "ordered", "s"
    df["coverage_frac"] = df.all_present.astype(float)
    df["answer"] = [f"answer {i}" for i in range(len(df))]
    for flag in degenerate.FLAG_COLUMNS:
        df[flag] = False
    return df


def test_ordered_rate_pooled_vs_per_template():
    answers = answers_table(
        [
            (0, True, True),
            (0, True, False),
            (0, True, False),
            (0, True, False),
            (0, False, False),
            (1, True, True),
            (1, False, False),
        ]
    )
    groups = pd.DataFrame(
        {"model": "m", "condition": "ordered", "template_id": [0, 1], "set_id": "s"}
    )
    s = summarise(answers, groups).set_index("template_id")
    assert s.loc[0, "ordered_rate"] == pytest.approx(25.0)
    assert s.loc[1, "ordered_rate"] == pytest.approx(100.0)
    assert s.loc[0, "coverage_wo_order"] == pytest.approx(80.0)
    assert s.loc[0, "coverage_w_order"] == pytest.approx(20.0)
    pooled = 100 * s.n_in_order.sum() / s.n_all_present.sum()
    assert pooled == pytest.approx(40.0) != pytest.approx(s.ordered_rate.mean())


def test_diverse_rate_with_duplicates():
    group = ["The dog runs.", "The dog runs. ", " The dog runs.", "A cat sleeps.", None, ""]
    assert diverse_rate(group) == pytest.approx(3 / 6)  # stripped: dog, cat, empty (None = "")
    assert diverse_rate(["a"] * 24) == pytest.approx(1 / 24)


def test_distinct2_both_forms():
    answers = ["the cat sat", "the cat ran", "", "dog"]
    per_sentence = [distinct2_sentence(a) for a in answers]
    assert per_sentence == pytest.approx([2 / 3, 2 / 3, 0.0, 0.0])
    assert distinct2_pooled(answers) == pytest.approx(3 / 4)  # {the cat, cat sat, cat ran} / 4
    assert distinct2_sentence("the cat , the cat") == pytest.approx(
        3 / 5
    )  # 13a: "the cat, the cat"


EDGE_CASES = [
    "",
    " ",
    "dog",
    "a b",
    "a b c",
    "!!!",
    "...",
    ".",
    "&amp; &lt;b&gt; tags",
    "<b>bold</b> dog",
    "Der Hund fängt den Frisbee — très bien!",
    "狗接住了飞盘。",
    "The dog. The dog. The dog.",
    "dog dog dog dog dog dog",
    "**Answer:** The dog caught the frisbee.",
    "The dog caught the frisbee.",
    "The dog caught the frisbee .",
    "the Dog caught THE frisbee",
    "1,000 dogs caught 2.5 frisbees",
    "It's the dog's frisbee; isn't it?",
    "word " * 400,
]


def realistic(rng, k):
    subj = ["The dog", "A boy", "My sister", "The chef", "A man", "The team"]
    verb = ["caught", "threw", "cut", "rode", "pushed", "jumped over"]
    obj = ["the frisbee", "a bike", "the onion", "the sled", "a ball", "the table"]
    tail = ["", " in the park", " with a knife", " on the street", " at night", " quickly"]
    return [
        f"{rng.choice(subj)} {rng.choice(verb)} {rng.choice(obj)}{rng.choice(tail)}."
        for _ in range(k)
    ]


def test_pbleu_matrix_equals_sacrebleu_on_edge_cases():
    m = pairwise_matrix(EDGE_CASES)
    expected = np.array([[sentence_bleu(h, [r]).score for r in EDGE_CASES] for h in EDGE_CASES])
    assert np.abs(m - expected).max() < 1e-9


def test_pbleu_equals_sacrebleu_loop_over_thousands_of_pairs():
    rng = random.Random(0)
    pool = realistic(rng, 40) + EDGE_CASES
    worst, pairs = 0.0, 0
    for _ in range(8):
        group = [rng.choice(pool) for _ in range(24)]  # duplicates inside groups
        worst = max(worst, abs(pairwise_bleu(group) - pairwise_bleu_loop(group)))
        pairs += 24 * 23
    assert pairs == 4416 and worst < 1e-9
    assert pairwise_bleu(["The dog runs."] * 24) == pytest.approx(100.0)
    assert math.isnan(pairwise_bleu(["one"]))


def test_permutations_cover_patterns_evenly():
    """Why Table 2's Diverse Rates tie: each set's 24 instances give each of its POS patterns
    the same number of permutations (24 / number of distinct patterns of its composition)."""
    from ocg.data import build_instances, load_concept_sets, load_templates

    df = build_instances(load_concept_sets(4), load_templates(), ["ordered"], [0])
    per_set = (
        df.groupby(["set_id", "pos_pattern"]).size().groupby("set_id").agg(["min", "max", "count"])
    )
    assert (per_set["min"] == per_set["max"]).all()
    assert set(per_set["count"] * per_set["min"]) == {24} and set(per_set["count"]) <= {1, 4, 6}
