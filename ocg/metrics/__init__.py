"""Metrics of Ordered CommonGen, one module per family (docs/METHODS.md, "Metrics").

Names load on first use (PEP 562), so importing one module (lm_nll for perplexity) does not
import pandas or sacrebleu: benchmarks/gpu_check.py runs with torch and transformers alone.
"""

import importlib

_EXPORTS = {"pairwise_bleu": "bleu", "pairwise_bleu_loop": "bleu", "pairwise_matrix": "bleu",
            "load_nlp": "coverage", "score_coverage": "coverage", "distinct2_pooled": "diversity",
            "distinct2_sentence": "diversity", "diverse_rate": "diversity", "Metric": "registry",
            "MetricFamily": "registry", "label": "registry", "metric": "registry", "metrics": "registry",
            "names": "registry"}
__all__ = sorted(_EXPORTS)


def __getattr__(name):
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f".{_EXPORTS[name]}", __name__), name)
