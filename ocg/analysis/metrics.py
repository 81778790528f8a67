"""Names, labels and directions of the paper's eight metrics."""

PAPER_METRICS = ["coverage_wo_order", "coverage_w_order", "ordered_rate", "pbleu", "pbleurt",
                 "distinct_2", "diverse_rate", "perplexity"]
COVERAGE_METRICS = ["coverage_wo_order", "coverage_w_order", "ordered_rate"]
POS_METRICS = COVERAGE_METRICS + ["diverse_rate"]  # Tables 2 and 3

LABELS = {"coverage_wo_order": "w/o order", "coverage_w_order": "w/ order",
          "ordered_rate": "Ordered Rate", "pbleu": "pBLEU", "pbleurt": "pBLEURT",
          "distinct_2": "Distinct", "diverse_rate": "Diverse Rate", "perplexity": "Perplexity"}

# Lower is better for similarity (a diverse model writes different sentences) and perplexity.
LOWER_IS_BETTER = {"pbleu", "pbleurt", "perplexity"}

CONDITION_LABELS = {"original": "without_phrase", "ordered": "with_phrase"}  # paper Table 3
