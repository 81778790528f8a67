"""Why a value of the report's results file (ReportFolder.results) is null: every object holding
a null carries `missing_reason`, {key: why} (docs/DATA.md, its section on the results file), so no
null reads as a zero or as an oversight."""

from __future__ import annotations

from ..analysis.uncertainty import MIN_SETS

SMALL = (
    f"small sample: under {MIN_SETS} resampled units an interval is too narrow and a p-value "
    "cannot be small; the page gives none either (docs/METHODS.md, 'Uncertainty')"
)
NO_CARD = "no run card for this model in the generations folder read"

# key -> why it is null, where the key alone says it (per level: top, model, metric, test)
_TOP = {
    "bootstrap": "notebook 03 computed no bootstrap interval in this report",
    "paired_test": "notebook 03 computed no paired test in this report",
}
_RUN = {  # the run file's settings that are null by design
    "permutations": "every permutation asked",
    "template_ids": "all the templates",
    "samples": "one sample per prompt (greedy)",
    "sampling": "greedy decoding",
    "metrics": "params/scoring.yaml's default metrics",
    "subset_k": "every concept set of the size asked",
    "n_concepts": "the run file names no concept count",
}
_SIGNATURE = {  # a scoring family's signature key (copied from the score set's signature)
    "revision": "embedded model: no hub revision",
    "judge": "no judge named",
}
_BLOCK = {  # a block beside Table 1's: its own reasons come first (results_comparisons.py)
    "bootstrap": "its notebook computed no bootstrap interval in this report",
    "paired_test": "its notebook computed no paired test in this report",
}
_MODEL = {
    "model_id": NO_CARD,
    "revision": NO_CARD,
    "quantization": NO_CARD + ", or it records none",
    "dtype": NO_CARD + ", or it records none",
    "cpu": NO_CARD + ", or one written before the CPU was recorded",
    "design": "the scores record no design for this model",
    "scoring_signature": "no scoring signature for this model",
    "list_copies": "coverage was not scored for this model",
}
_METRIC = {
    "value": "not scored for this model (its scoring family is not in the scoring signature)",
    "delta_vs_original": "no value for this model in `ordered` or in `original`",
    "interval": "no bootstrap interval for this metric (notebook 03 computed none, or the "
    "metric has no value)",
    "delta_test": "no paired test for this metric (the model lacks `ordered` or `original`, or "
    "notebook 03 computed none)",
    "n_of": "the metric has no value: it averages over nothing",
    "higher_is_better": "the metric is not declared in the process that wrote this file",
    "metric_unit": "the metric is not declared in the process that wrote this file",
    "family": "the metric is not declared in the process that wrote this file",
    "signature_key": "no scoring signature (or no key of this family) for this model",
    "median": "no per-answer values of this metric to take a median of",
    "median_delta_vs_original": "no median of this metric in `ordered` or in `original`",
    "mean_median_disagree": "no median of this metric to compare its mean with",
    "label": "the metric is not declared in the process that wrote this file",
}
_TEST = {
    "low": SMALL,
    "high": SMALL,
    "p_value": SMALL,
    "p_holm": SMALL,
    "level": "the interval's settings were not recorded",
    "unit": "the interval's unit was not recorded",
    "n": "the number of units was not recorded",
    "n_sets": "the number of concept sets was not recorded",
    "p_method": "the test's method was not recorded",
    "holm_family": "a paired test saved before Holm's families",
}


def _mark(obj: dict, known: dict, given: dict | None = None) -> None:
    """`obj` with `missing_reason` {key: why} for each of its null values (`given` first)."""
    nulls = [k for k, v in obj.items() if v is None]
    if not nulls:
        return
    reasons = dict(obj.get("missing_reason") or {})
    for key in nulls:
        reasons.setdefault(key, (given or {}).get(key) or known.get(key, "not computed"))
    obj["missing_reason"] = reasons


def _compared(block: dict) -> dict:
    """Why a metric's key is null in a block beside Table 1's (results_comparisons.py): its
    conditions named, a whole table's absence (the block's own reasons) said as the block says it."""
    c, b = block.get("condition"), block.get("base")
    whole = block.get("missing_reason") or {}
    test = "no paired test of `{}` minus `{}` for this metric (the model lacks one of them, or the "
    test += "metric has no value in either)"
    return {
        **_METRIC,
        "value": f"not scored for this model in `{c}` (its scoring family is not in the scoring "
        "signature)",
        "n": f"the scores' summary holds no `{c}` rows of this model",
        f"delta_vs_{b}": f"no value for this model in `{c}` or in `{b}`",
        "delta_vs_original": f"no value for this model in `{c}` or in `original`",
        "interval": whole.get("bootstrap")
        or f"no bootstrap interval of `{c}` for this metric (the metric has no value)",
        "delta_test": whole.get("paired_test") or test.format(c, b),
        "delta_vs_original_test": whole.get("paired_test") or test.format(c, "original"),
        f"median_delta_vs_{b}": f"no median of this metric in `{c}` or in `{b}`",
        "median_delta_vs_original": f"no answer of this metric scored in both `{c}` and "
        "`original` for one prompt",
        "mean_median_disagree_vs_original": "no median Δ of this metric vs `original` to compare "
        "its mean Δ with",
    }


def _metrics(metrics: dict, known: dict) -> None:
    for m in metrics.values():
        for key in ("interval", "delta_test", "delta_vs_original_test"):
            if isinstance(m.get(key), dict):
                _mark(m[key], _TEST)
        if isinstance(m.get("signature_key"), dict):
            _mark(m["signature_key"], _SIGNATURE)
        if isinstance(m.get("paper"), dict):
            _mark(m["paper"], {}, {k: "the paper gives none" for k in m["paper"]})
        _mark(m, known)


def with_reasons(doc: dict) -> dict:
    """The results document with every null explained (in place; returned)."""
    _mark(doc, _TOP)
    if isinstance(doc.get("run"), dict):
        _mark(doc["run"], _RUN)
    for entry in doc.get("models", {}).values():
        _mark(entry, _MODEL)
        _metrics(entry.get("metrics", {}), _METRIC)
    for key in ("table4", "forced_order"):
        if isinstance(block := doc.get(key), dict):
            _mark(block, _BLOCK)
            known = _compared(block)
            for metrics in block.get("models", {}).values():
                _metrics(metrics, known)
    return doc
