"""Metrics of Ordered CommonGen (docs/METHODS.md, "Metrics"): what each reported metric is
(registry.py) and how it is summed (statistics.py), the functions that compute them (bleu,
bleurt, coverage with matching, diversity, perplexity with lm_nll, listcopy, degenerate,
pass_at_k; and the sentence's quality: pos_coverage, slor, nonword, semantic) and spaCy's
attribute ruler made fast (attribute_ruler.py). The scoring families
that call them: ocg/scoring/families.py.

Names load on first use (PEP 562), so importing one module (lm_nll for perplexity) does not
import pandas or sacrebleu: benchmarks/gpu_check.py runs with torch and transformers alone.
"""

import importlib

_EXPORTS = {
    "pairwise_bleu": "bleu",
    "pairwise_bleu_loop": "bleu",
    "pairwise_matrix": "bleu",
    "load_nlp": "coverage",
    "score_coverage": "coverage",
    "distinct2_pooled": "diversity",
    "distinct2_sentence": "diversity",
    "diverse_rate": "diversity",
    "Metric": "registry",
    "MetricFamily": "registry",
    "label": "registry",
    "metric": "registry",
    "metrics": "registry",
    "names": "registry",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name):
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f".{_EXPORTS[name]}", __name__), name)
