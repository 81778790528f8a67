"""What PoS-correct coverage rests on (analysis/pos_tagging.py): per concept, the share of its
matches spaCy tags with the asked part of speech, summed from the summary; a concept never tagged
so is named under Table 1 and unbolds the PoS-correct columns of the LaTeX table."""

import json

import pandas as pd
import pytest

from ocg.analysis import latex, pos_tagging
from ocg.metrics.coverage import load_nlp, score_coverage
from ocg.scoring.summary import pos_tagging as summary_pos_tagging


def _answers(rows):
    return pd.DataFrame(rows, columns=["concepts", "pos_pattern", "pos_matched", "pos_tagged"])


def _summary(*per_row: dict, condition="ordered"):
    return pd.DataFrame(
        [
            {
                "model": f"m{i}",
                "condition": condition,
                "template_id": 0,
                "pos_tagging": json.dumps(c),
            }
            for i, c in enumerate(per_row)
        ]
    )


def test_the_summary_sums_each_concepts_matches_and_tags_over_answers():
    answers = _answers(
        [
            (["bobsle", "hill"], "VN", [1, 2], [0, 2]),
            (["bobsle", "snow"], "VN", [2, 0], [0, 0]),
            (["hill"], None, [1], [1]),
        ]
    )
    assert json.loads(summary_pos_tagging(answers)) == {
        "bobsle_V": [3, 0],
        "hill_N": [3, 3],
        "snow_N": [0, 0],
    }


def test_a_concept_never_tagged_so_is_named_and_unbolds_the_pos_columns():
    summary = pd.concat(
        [
            _summary({"bobsle_V": [2, 0], "sew_V": [4, 1]}, {"bobsle_V": [3, 0], "snow_N": [0, 0]}),
            _summary({"sew_V": [4, 4]}, condition="original"),
            _summary({"ski_V": [5, 0]}, condition="ordered_one_shot"),  # not Table 1's
        ]
    )
    tagging = pos_tagging.concept_tagging(summary).set_index("concept")
    assert tagging.loc["sew_V", "share"] == pytest.approx(62.5)  # 5 of 8, both conditions
    untagged = pos_tagging.never_tagged(summary)
    assert list(zip(untagged["model"], untagged["concept"], untagged["matched"])) == [
        ("m0", "bobsle_V", 2),
        ("m1", "bobsle_V", 3),
    ]
    assert set(untagged["pos"]) == {"VERB"}  # snow_N, never matched, is not named
    assert pos_tagging.unbolded(summary) == set(pos_tagging.POS_METRICS)
    assert pos_tagging.unbolded(_summary({"sew_V": [1, 1]})) == frozenset()
    assert (
        pos_tagging.unbolded(pd.DataFrame({"condition": ["ordered"]})) == frozenset()
    )  # old scores


def test_a_concept_one_model_never_tags_is_named_for_that_model():
    # the audit: bobsle_V was never a verb in one model's 117 matches; pooled with another model's
    # tagged ones, no caveat was printed and the PoS columns were bolded
    summary = _summary({"bobsle_V": [117, 0]}, {"bobsle_V": [40, 12]})
    assert pos_tagging.concept_tagging(summary).set_index("concept").loc["bobsle_V", "tagged"] == 12
    untagged = pos_tagging.never_tagged(summary)
    assert untagged[["model", "concept", "matched"]].values.tolist() == [["m0", "bobsle_V", 117]]
    assert pos_tagging.unbolded(summary) == set(pos_tagging.POS_METRICS)


def test_the_latex_table_leaves_an_unmarked_metric_unbolded():
    long = pd.DataFrame(
        [
            {"model": m, "metric": metric, "value": v, "delta": d}
            for m, v, d in (("a", 3.0, 1.0), ("b", 1.0, -1.0))
            for metric in ("coverage_wo_order", "pos_coverage_wo_order")
        ]
    )
    tex = latex.latex_from_long(
        long,
        "model",
        "value",
        "delta",
        "delta",
        table="table1",
        unmarked=frozenset(pos_tagging.POS_METRICS),
    )
    row_a = next(line for line in tex.splitlines() if line.startswith("a &"))
    assert row_a.count(r"\textbf") == 2  # coverage's value and Δ, not PoS's
    assert "$3.00_{+1.00}$" in row_a


@pytest.mark.slow
def test_a_match_the_tagger_gives_another_part_of_speech_is_counted_untagged():
    """On the pipeline scoring uses: "Bobsle" is matched, not tagged VERB."""
    nlp = load_nlp("auto", "no_parser")
    row = score_coverage(
        pd.Series(["Bobsle down the track."]),
        pd.Series([["bobsle", "track"]]),
        nlp,
        pos_patterns=pd.Series(["VN"]),
    ).iloc[0]
    assert list(row["pos_matched"]) == [1, 1] and list(row["pos_tagged"])[0] == 0
    assert row["all_present"] and not row["pos_all_present"]
