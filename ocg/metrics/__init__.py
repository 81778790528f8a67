"""Metrics of Ordered CommonGen, one module per family (docs/METHODS.md, "Metrics")."""

from .bleu import pairwise_bleu, pairwise_bleu_loop, pairwise_matrix
from .coverage import load_nlp, score_coverage
from .diversity import distinct2_pooled, distinct2_sentence, diverse_rate
from .registry import Metric, MetricFamily, label, metric, metrics, names

__all__ = ["Metric", "MetricFamily", "distinct2_pooled", "distinct2_sentence", "diverse_rate", "label", "load_nlp",
           "metric", "metrics", "names", "pairwise_bleu", "pairwise_bleu_loop", "pairwise_matrix", "score_coverage"]
