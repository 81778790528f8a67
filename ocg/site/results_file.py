"""results.json: a report's numbers in one machine-readable file (docs/DATA.md, “results.json”).

As lm-evaluation-harness's results JSON: per model and metric of Table 1 the value, its
difference from `original`, its bootstrap interval with the unit resampled and n, the paired
test of the difference, the metric's direction and unit (metrics/registry.py) and the scoring
signature's key; the run's design and each model's; versions and the git commit; Table 4 and
the forced order beside it (results_comparisons.py). Built from the report's own tables (so it
equals Table 1's CSV), in the staging folder with the rest of the report (ocg/jobs/staging.py).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from ..analysis.skew import MEDIAN_METRICS
from ..config.checked_run import CheckedRun
from ..core.files import write_json
from ..core.layout import ReportFolder
from ..core.provenance import provenance
from ..metrics.registry import metric
from ..results.scores import Scores, signature_hash
from .judge_note import judge_counts, results_block
from .results_comparisons import comparisons
from .results_parts import (
    _by_key,
    _delta_test,
    _interval,
    _median,
    _settings,
    _table,
    null_count,
    value_reason,
)
from .results_reasons import with_reasons

# 2: missing_reason an object {key: why} for every null; holm_family
# 3: the `table4` and `forced_order` blocks (results_comparisons.py), each null with its reason
# where the report has no such table
# 4: each model's `judge` block: the judge's counts and its agreement with ocg's checks (share,
# Cohen's kappa, their intervals), null with its reason where no judge scored the model
SCHEMA_VERSION = 4


def _clean(x):
    """JSON as any parser reads it: NaN and infinities as null, numpy scalars as Python's."""
    if isinstance(x, dict):
        return {str(k): _clean(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_clean(v) for v in x]
    if hasattr(x, "item") and not isinstance(x, (str, bytes)):
        x = x.item()
    return None if isinstance(x, float) and not math.isfinite(x) else x


def _list_copies(rows: pd.DataFrame) -> dict | None:
    """Per condition: answers, in order, copies of the list among them, bare lists (listcopy.py)."""
    if not {"n_answers", "n_in_order", "n_copies_list", "n_bare_list"} <= set(rows):
        return None
    by = rows.groupby("condition")[
        ["n_answers", "n_in_order", "n_copies_list", "n_bare_list"]
    ].sum()
    return {
        c: {
            "answers": int(r.n_answers),
            "in_order": int(r.n_in_order),
            "copies_list": int(r.n_copies_list),
            "bare_list": int(r.n_bare_list),
        }
        for c, r in by.iterrows()
    }


def _model_entry(model: str, generations_root) -> dict:
    """The model's id, revision, quantization and dtype from its run card (null where none is
    here), and the CPU its answers were generated on (null: a card from before it was recorded)."""
    from ..core.errors import OcgInputError
    from ..core.layout import ModelGenerations
    from ..records import RunCard

    card = None
    if generations_root is not None:
        path = ModelGenerations.of(model, generations_root).run_card
        try:
            card = RunCard.read(path) if path.exists() else None
        except OcgInputError:
            card = None
    return {
        "model_id": card.model_id if card else None,
        "revision": card.revision if card else None,
        "quantization": card.settings.quantization if card else None,
        "dtype": card.settings.dtype if card else None,
        "cpu": card.provenance.cpu if card and card.provenance else None,
    }


@dataclass(frozen=True)
class _Tables:
    """What results.json reads from a report folder once, for every model: Table 1, its bootstrap
    intervals and paired tests by (model, metric), the summary, and the intervals' settings."""

    t1: pd.DataFrame
    cis: dict
    paired: dict
    summary: pd.DataFrame
    methods: dict  # the intervals' settings: bootstrap and paired_test, as their tables record


def _model_metrics(model: str, tables: _Tables, signature) -> dict:
    t1, cis, paired, summary, methods = (
        tables.t1,
        tables.cis,
        tables.paired,
        tables.summary,
        tables.methods,
    )
    out = {}
    s = (
        summary[(summary["model"] == model) & (summary["condition"] == "ordered")]
        if len(summary)
        else summary
    )
    for row in t1[t1["model"] == model].to_dict("records"):
        name, m = (
            row["metric"],
            metric(row["metric"]),
        )  # None: declared where this process never looked
        n, n_of = null_count(name, s, row["value"])
        test = paired.get((model, name))
        out[name] = {
            "label": m.label if m else name,
            "value": row["value"],
            "delta_vs_original": row.get("delta_vs_original_commongen"),
            "interval": _interval(cis.get((model, name)), methods["bootstrap"]),
            "delta_test": _delta_test(test, methods["paired_test"]),
            "n": n,
            "n_of": n_of,
            "higher_is_better": m.higher_is_better if m else None,
            "metric_unit": m.unit if m else None,
            "family": m.family if m else None,
            "signature_key": signature.metric_keys.get(m.family) if signature and m else None,
        }
        if pd.isna(row["value"]):  # why, in words: not scored, 0/0, the scorer's reason
            families = set(signature.metric_keys) if signature is not None else None
            out[name]["missing_reason"] = {"value": value_reason(name, s, "ordered", families)}
        if name in MEDIAN_METRICS and (
            "median" in row or f"{name}_median" in summary
        ):  # the median beside the mean, which a few answers can make
            out[name].update(_median(row, summary[summary["model"] == model], name))
        if pd.notna(row.get("paper_value", float("nan"))):
            out[name]["paper"] = {
                "value": row["paper_value"],
                "delta_vs_original": row.get("paper_delta"),
            }
    return out


def _judge(model: str, judges: dict, rows: pd.DataFrame) -> dict:
    """The model's `judge` block (judge_note.results_block: what the page's judge note shows),
    or null with the summary's reason (no judge named) or that none scored it."""
    if model in judges:
        return {"judge": results_block(judges[model])}
    why = "no judge scored this model's answers (the judge family is not in its scoring signature)"
    if "judge_missing_reason" in rows and rows["judge_missing_reason"].notna().any():
        why = str(rows["judge_missing_reason"].dropna().iloc[0])
    return {"judge": None, "missing_reason": {"judge": why}}


def _run_block(run: CheckedRun) -> dict:
    """The `run` of results.json: what the run (or sweep) file asked, its path absolute."""
    file = run.file
    return {
        "name": file.name,
        "file": str(run.path),
        "models": list(file.models),
        "conditions": list(file.conditions),
        "n_concepts": file.n_concepts,
        "subset_k": file.subset_k,
        "permutations": file.permutations,
        "template_ids": file.template_ids,
        "samples": file.samples,
        "sampling": file.sampling.model_dump() if file.sampling else None,
        "metrics": file.metrics,
        "scoring": dict(file.scoring),
    }


def results(report_dir: str | Path, run: CheckedRun, scores: Scores, generations_root=None) -> dict:
    """The results document of a report folder whose notebooks have run (its tables/); the run
    cards under `generations_root` give each model's id, revision, quantization and dtype."""
    report = ReportFolder(Path(report_dir))
    t1, summary = _table(report, "table1"), scores.summary
    cis, paired = (
        _by_key(_table(report, "table1_bootstrap_ci")),
        _by_key(_table(report, "table1_paired_test")),
    )
    signatures, designs = scores.signatures, scores.designs
    methods = {
        "bootstrap": _settings(report, "table1_bootstrap_ci"),
        "paired_test": _settings(report, "table1_paired_test"),
    }
    tables, models = _Tables(t1, cis, paired, summary, methods), {}
    judges = {j.model: j for j in judge_counts(summary, signatures)} if len(summary) else {}
    for model in [] if t1 is None else list(dict.fromkeys(t1["model"])):
        sig = signatures.get(model)
        s = summary[summary["model"] == model] if len(summary) else summary
        models[model] = {
            **_model_entry(model, generations_root),
            "design": designs.get(model),
            "n_samples": int(s["n_samples"].max()) if "n_samples" in s and len(s) else 1,
            "scoring_signature": signature_hash(sig) if sig else None,
            "list_copies": _list_copies(s) if len(s) else None,
            "metrics": _model_metrics(model, tables, sig),
            **_judge(model, judges, s),
        }
    doc = {
        "schema_version": SCHEMA_VERSION,
        "report": run.file.name,
        "table": "table1: zero-shot `ordered`, mean over the run's templates, difference from `original`",
        "run": _run_block(run),
        **methods,
        "models": models,
        **comparisons(report, list(run.file.conditions), summary),
        "provenance": provenance(),
    }
    if t1 is None:
        doc["note"] = "Table 1 was not computed in this report (notebook 03 did not run)"
    return with_reasons(_clean(doc))


def write_results(
    report_dir: str | Path, run: CheckedRun, scores: Scores, generations_root=None
) -> Path:
    """results.json in `report_dir` (a staging folder while the report is built), written atomically."""
    return write_json(
        ReportFolder(Path(report_dir)).results, results(report_dir, run, scores, generations_root)
    )
