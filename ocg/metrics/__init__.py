"""Metrics of Ordered CommonGen, one module per family (docs/METHODS.md, "Metrics")."""

from .bleu import pairwise_bleu, pairwise_bleu_loop, pairwise_matrix
from .coverage import load_nlp, score_coverage
from .diversity import distinct2_pooled, distinct2_sentence, diverse_rate
from .registry import LABELS, LOWER_IS_BETTER, PAPER_METRICS

__all__ = ["LABELS", "LOWER_IS_BETTER", "PAPER_METRICS", "distinct2_pooled", "distinct2_sentence", "diverse_rate", "load_nlp",
           "pairwise_bleu", "pairwise_bleu_loop", "pairwise_matrix", "score_coverage"]
