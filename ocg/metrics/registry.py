"""The paper's eight reported metrics, each declared once: what scoring, tables, bootstrap,
LaTeX and the notebooks need to know about it (docs/METHODS.md, "Metrics").

A reported metric is computed by one scoring family (`ocg.scoring.METRICS`: coverage, pbleu,
...) and aggregated as a ratio of sums over answers or groups: `numerator / denominator x
scale`. A per-answer or per-group mean is the special case whose denominator is a count. The
same ratio gives the summary value, the template average (Ordered Rate pooled, as every row of
the paper's Table 1 satisfies OR = w/ / w/o) and the bootstrap over concept sets.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Metric:
    name: str            # column in summaries and tables, and the paper CSVs' metric name
    label: str           # as printed in the paper's tables
    family: str          # the scoring family that computes it (params/scoring.yaml `metrics`)
    higher_is_better: bool
    numerator: str       # a sufficient statistic (metrics/statistics.py): summed over answers or groups
    denominator: str     # the count it is divided by
    scale: float         # 100 for percentages
    pooled: bool = False  # averaged over templates as a ratio of sums (Ordered Rate), not a mean


PAPER = (
    Metric("coverage_wo_order", "w/o order", "coverage", True, "all_present", "n", 100.0),
    Metric("coverage_w_order", "w/ order", "coverage", True, "in_order", "n", 100.0),
    Metric("ordered_rate", "Ordered Rate", "coverage", True, "in_order", "all_present", 100.0, pooled=True),
    Metric("pbleu", "pBLEU", "pbleu", False, "pbleu", "n_pbleu", 1.0),
    Metric("pbleurt", "pBLEURT", "pbleurt", False, "pbleurt", "n_pbleurt", 1.0),
    Metric("distinct_2", "Distinct", "distinct", True, "distinct_2", "n", 100.0),
    Metric("diverse_rate", "Diverse Rate", "diverse", True, "diverse_rate", "n_diverse_rate", 100.0),
    Metric("perplexity", "Perplexity", "perplexity", False, "perplexity", "n_perplexity", 1.0),
)
BY_NAME = {m.name: m for m in PAPER}

PAPER_METRICS = [m.name for m in PAPER]
LABELS = {m.name: m.label for m in PAPER}
LOWER_IS_BETTER = {m.name for m in PAPER if not m.higher_is_better}
COVERAGE_METRICS = [m.name for m in PAPER if m.family == "coverage"]
POS_METRICS = COVERAGE_METRICS + ["diverse_rate"]  # Tables 2 and 3
CONDITION_LABELS = {"original": "without_phrase", "ordered": "with_phrase"}  # paper Table 3
