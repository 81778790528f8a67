"""Metrics of Ordered CommonGen, one module per family (SPEC section 3)."""

from .bleu import pairwise_bleu, pairwise_bleu_loop, pairwise_matrix
from .coverage import load_nlp, score_coverage
from .diversity import distinct2_pooled, distinct2_sentence, diverse_rate

__all__ = ["distinct2_pooled", "distinct2_sentence", "diverse_rate", "load_nlp",
           "pairwise_bleu", "pairwise_bleu_loop", "pairwise_matrix", "score_coverage"]
