"""What PoS-correct coverage rests on (docs/METHODS.md, "PoS-correct coverage"): per concept, the
share of the tokens that match it which spaCy tags with the part of speech its set asks. A concept
never tagged so (`bobsle_V`: spaCy tags "bobsled" NOUN or PROPN) fails every answer of its set by
construction, for every model: the metric then measures the tagger as much as the answers, so
Table 1 names such concepts under the table and bolds no PoS-correct column.
"""

from __future__ import annotations

import json

import pandas as pd

POS_METRICS = ("pos_coverage_wo_order", "pos_coverage_w_order")
POS_NAMES = {"N": "NOUN or PROPN", "V": "VERB"}
TABLE1_CONDITIONS = ("ordered", "original")


def concept_tagging(summary: pd.DataFrame, conditions=TABLE1_CONDITIONS) -> pd.DataFrame:
    """Per concept (`word_N`, `word_V`): matched tokens, those tagged with its part of speech and
    their share (%), summed over the models and templates of `conditions` (from the summary's
    `pos_tagging`; empty for scores stored before it)."""
    columns = ["concept", "pos", "matched", "tagged", "share"]
    if "pos_tagging" not in summary or summary.empty:
        return pd.DataFrame(columns=columns)
    counts: dict[str, list[int]] = {}
    for text in summary.loc[summary["condition"].isin(conditions), "pos_tagging"].dropna():
        for concept, (matched, tagged) in json.loads(text).items():
            tally = counts.setdefault(concept, [0, 0])
            tally[0] += matched
            tally[1] += tagged
    rows = [
        (c, POS_NAMES.get(c.rsplit("_", 1)[-1], "?"), m, t, 100.0 * t / m if m else float("nan"))
        for c, (m, t) in sorted(counts.items())
    ]
    return pd.DataFrame(rows, columns=columns)


def never_tagged(summary: pd.DataFrame, conditions=TABLE1_CONDITIONS) -> pd.DataFrame:
    """The concepts matched at least once yet never tagged with their part of speech."""
    t = concept_tagging(summary, conditions)
    return t[(t["matched"] > 0) & (t["tagged"] == 0)].reset_index(drop=True)


def unbolded(summary: pd.DataFrame, conditions=TABLE1_CONDITIONS) -> frozenset[str]:
    """The PoS-correct metrics, where a concept of the run's sets is never tagged so: every set
    holding it scores 0 for every model, and the comparison rests on the tagger."""
    return frozenset(POS_METRICS) if len(never_tagged(summary, conditions)) else frozenset()
