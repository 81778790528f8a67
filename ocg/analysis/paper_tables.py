"""The paper's tables from score tables (ocg.scoring), as tidy long DataFrames.

Long format, one row per (row key, metric), with the same columns as the paper's published
CSVs in ocg/data/paper/, so a reproduction and the paper join on their keys.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..core.errors import OcgInputError
from ..metrics.registry import CONDITION_LABELS, in_table, metrics, names
from ..metrics.sufficient_statistics import pooled_column, ratios, sufficient_statistics


def _template_average(
    summary: pd.DataFrame, condition: str, template_ids=None, over="mean"
) -> pd.DataFrame:
    """Per model: the metrics of `condition` over templates by `over` (the paper's mean, or any
    pandas aggregation: "median", "min", a function); a pooled metric (Ordered Rate) as a ratio of
    its statistics summed over the templates, whatever `over` is (metrics/registry.py)."""
    s = summary[summary["condition"] == condition]
    if template_ids is not None:
        s = s[s["template_id"].isin(list(template_ids))]
    rows = []
    for model, g in s.groupby("model", sort=True):
        row = {"model": model}
        for m in metrics():
            num, den = pooled_column(m.numerator), pooled_column(m.denominator)
            if m.pooled and num in g and den in g:
                total = g[den].sum()
                row[m.name] = m.scale * g[num].sum() / total if total else np.nan
            elif m.name in g:
                row[m.name] = g[m.name].dropna().agg(over) if g[m.name].notna().any() else np.nan
        rows.append(row)
    return pd.DataFrame(rows).set_index("model") if rows else pd.DataFrame()


def _check_templates(
    summary: pd.DataFrame, conditions: tuple[str, ...], template_ids
) -> list | None:
    """`template_ids` as a list, or an error naming the templates a model has when it asks for one
    that model lacks (for a condition it ran): a subset taken quietly, or an empty table, would
    read as a result, and models loaded together may not share their templates."""
    if template_ids is None:
        return None
    asked = (
        None if isinstance(template_ids, (str, bytes, int)) else list(template_ids)
    )  # a generator read once
    if not asked:
        raise OcgInputError(
            "template_ids", f"got {template_ids!r}; expected a non-empty list of template ids"
        )
    for condition in conditions:
        rows = summary[summary["condition"] == condition]
        has = {
            model: sorted(int(t) for t in g["template_id"].unique())
            for model, g in rows.groupby("model")
        }
        for model, its in has.items():
            missing = sorted({t for t in asked if t not in its}, key=str)
            if missing:
                whose = (
                    "" if len({tuple(v) for v in has.values()}) == 1 else f" for model {model!r}"
                )
                raise OcgInputError(
                    "template_ids",
                    f"template(s) {missing} not in this run's `{condition}` "
                    f"answers; it has templates {its}{whose}",
                )
    return asked


def _reported(table: str, values: pd.DataFrame) -> pd.DataFrame:
    """The columns of `values` that the paper's `table` reports."""
    return (
        values[[m.name for m in in_table(table) if m.name in values]]
        if len(values.columns)
        else values
    )


def _with_delta(value: pd.DataFrame, base: pd.DataFrame, delta_name: str) -> pd.DataFrame:
    rows = []
    for model in value.index:
        for metric in value.columns:
            v = value.at[model, metric]
            b = base.at[model, metric] if model in base.index and metric in base.columns else np.nan
            rows.append({"model": model, "metric": metric, "value": v, delta_name: v - b})
    return pd.DataFrame(rows, columns=["model", "metric", "value", delta_name])


def summary_medians(
    summary: pd.DataFrame, condition: str, metric: str = "perplexity"
) -> dict[str, float]:
    """Per model: the median of `metric` (perplexity, SLOR) for `condition`, per template then over
    templates (the summary's `<metric>_median`; empty for scores made before it)."""
    if f"{metric}_median" not in summary or "condition" not in summary:
        return {}
    rows = summary[summary["condition"] == condition]
    return rows.groupby("model")[f"{metric}_median"].mean().dropna().to_dict()


def table1(summary: pd.DataFrame, over="mean", template_ids=None) -> pd.DataFrame:
    """Zero-shot `ordered`, template-averaged, with the difference from `original`. `over` and
    `template_ids` change the aggregation and the templates (docs/user-guide.md, "Notebooks in JupyterLab");
    a template the run lacks is refused."""
    template_ids = _check_templates(summary, ("ordered", "original"), template_ids)
    return _with_delta(
        _reported("table1", _template_average(summary, "ordered", template_ids, over)),
        _template_average(summary, "original", template_ids, over),
        "delta_vs_original_commongen",
    )


def table4(summary: pd.DataFrame, over="mean", template_ids=None) -> pd.DataFrame:
    """One-shot priming vs zero-shot `ordered` (difference = one-shot minus zero-shot); a template
    the run lacks is refused."""
    template_ids = _check_templates(summary, ("ordered_one_shot", "ordered"), template_ids)
    return _with_delta(
        _reported("table4", _template_average(summary, "ordered_one_shot", template_ids, over)),
        _template_average(summary, "ordered", template_ids, over),
        "delta_vs_zero_shot_ordered",
    )


FORCED, ASKED, UNORDERED = "ordered_constrained", "ordered", "original"


def forced_order(summary: pd.DataFrame, over="mean", template_ids=None) -> pd.DataFrame:
    """Table 4's pattern for the order forced by a grammar (docs/METHODS.md, "Forcing the order"):
    `ordered_constrained`, template-averaged, with its difference from `ordered` (the same prompts,
    decoded freely) and from `original`; empty where no model has both."""
    has = set(summary["condition"]) if "condition" in summary else set()
    if not {FORCED, ASKED} <= has:
        return pd.DataFrame(
            columns=["model", "metric", "value", "delta_vs_ordered", "delta_vs_original"]
        )
    template_ids = _check_templates(summary, (FORCED, ASKED), template_ids)
    value = _reported("table4", _template_average(summary, FORCED, template_ids, over))
    out = _with_delta(
        value, _template_average(summary, ASKED, template_ids, over), "delta_vs_ordered"
    )
    base = _with_delta(
        value, _template_average(summary, UNORDERED, template_ids, over), "delta_vs_original"
    )
    return out.assign(delta_vs_original=base["delta_vs_original"].to_numpy())


def reasoning_pairs(scored_models, models_file=None) -> dict[str, str]:
    """{reasoning model: its base model} for the scored models whose entry names a scored base."""
    from ..config.model_registry import MODELS_FILE, load_models

    scored = set(scored_models)
    return {
        m.name: m.base_model
        for m in load_models(models_file or MODELS_FILE).values()
        if m.base_model and m.name in scored and m.base_model in scored
    }


def answer_sources(answers: pd.DataFrame, models) -> pd.DataFrame:
    """Per model and condition: answers by where they came from and whether extraction failed."""
    a = answers[answers["model"].isin(list(models))]
    if a.empty:
        return pd.DataFrame()
    source = a["answer_source"] if "answer_source" in a else pd.Series("raw", index=a.index)
    kind = source.where(a["answer_status"].isin(["ok", "empty"]), a["answer_status"])
    return a.assign(source=kind).pivot_table(
        index=["model", "condition"],
        columns="source",
        values="instance_id",
        aggfunc="count",
        fill_value=0,
    )


def table7(summary: pd.DataFrame, pairs: dict[str, str]) -> pd.DataFrame:
    """Reasoning models beside their base models: template 0, the metrics Table 7 reports
    (coverage's) vs `original`.

    `pairs` maps a reasoning model to its base model (params/models.yaml `base_model`).
    """
    value = _template_average(summary, "ordered", [0])
    base = _template_average(summary, "original", [0])
    rows = []
    for reasoning, base_model in pairs.items():
        for model, role in ((base_model, "base"), (reasoning, "reasoning")):
            if model not in value.index:
                continue
            for metric in [m.name for m in in_table("table7")]:
                v = value.at[model, metric]
                b = base.at[model, metric] if model in base.index else np.nan
                rows.append(
                    {
                        "model": model,
                        "role": role,
                        "pair": reasoning,
                        "metric": metric,
                        "value": v,
                        "delta_vs_original_commongen": v - b,
                    }
                )
    return pd.DataFrame(
        rows, columns=["model", "role", "pair", "metric", "value", "delta_vs_original_commongen"]
    )


def _mean_sd(per_model: pd.DataFrame, keys: list[str], table: str) -> pd.DataFrame:
    """Mean and SD (ddof=1, as over the paper's 36 models) of per-model values."""
    long = per_model.melt(
        id_vars=["model"] + keys,
        value_vars=[m.name for m in in_table(table) if m.name in per_model],
        var_name="metric",
        value_name="value",
    )
    out = (
        long.groupby(keys + ["metric"], sort=False)["value"]
        .agg(mean_over_llms="mean", sd_over_llms="std", n_models="count")
        .reset_index()
    )
    return out


def table2(answers: pd.DataFrame, condition: str = "ordered") -> pd.DataFrame:
    """Per POS pattern: mean +- SD over models of w/o, w/, Ordered Rate and Diverse Rate.

    Each a share of the answers of a (model, pattern): its ratio of statistics summed over those
    answers. Each answer carries its group's Diverse Rate, which is why patterns with the same
    noun/verb counts show identical Diverse Rates (docs/METHODS.md, "Table 2"). A metric whose
    family was not scored is kept, empty, with its reason in `missing_reason` (as a missing
    pBLEURT is).
    """
    reported = in_table("table2")
    a = answers[answers["condition"] == condition]
    missing = {
        m.name: f"the {m.family} family was not scored" for m in reported if m.numerator not in a
    }
    stats = sufficient_statistics(
        a, a, ["model", "pos_pattern"]
    )  # group values too: summed over answers
    per_model = ratios(stats, reported).reindex(columns=[m.name for m in reported]).reset_index()
    out = _mean_sd(per_model, ["pos_pattern"], "table2")
    out["missing_reason"] = out["metric"].map(missing)
    order = [m.name for m in reported]
    return out.sort_values(
        ["pos_pattern", "metric"], key=lambda c: c.map(order.index) if c.name == "metric" else c
    ).reset_index(drop=True)


def table3(summary: pd.DataFrame) -> pd.DataFrame:
    """Per template and condition: mean +- SD over models of the four Table 2 metrics."""
    s = summary[summary["condition"].isin(CONDITION_LABELS)].copy()
    s["condition"] = s["condition"].map(CONDITION_LABELS)
    per_model = s[
        ["model", "template_id", "condition"] + [m.name for m in in_table("table3") if m.name in s]
    ]
    out = _mean_sd(per_model, ["template_id", "condition"], "table3")
    return out.sort_values(
        ["template_id", "condition"],
        key=lambda c: (
            c.map({"without_phrase": 0, "with_phrase": 1}) if c.name == "condition" else c
        ),
    ).reset_index(drop=True)


SHORT = {
    "value": "value",
    "mean_over_llms": "mean",
    "sd_over_llms": "SD",
    "delta_vs_original_commongen": "Δ vs original",
    "delta_vs_zero_shot_ordered": "Δ vs zero-shot",
    "delta_vs_ordered": "Δ vs ordered",
    "delta_vs_original": "Δ vs original",
}


def wide(long: pd.DataFrame, index, value: str = "value", sub: str | None = None) -> pd.DataFrame:
    """Display form: one row per key (in first-appearance order), one column per metric (and
    its delta or SD beside it). All-NaN metrics (e.g. a missing pBLEURT) are kept."""
    index = [index] if isinstance(index, str) else list(index)
    order = [m for m in names() if m in set(long["metric"])]
    rows = (
        pd.MultiIndex.from_frame(long[index].drop_duplicates())
        if len(index) > 1
        else pd.Index(long[index[0]].drop_duplicates(), name=index[0])
    )
    table = long.pivot(index=index, columns="metric", values=value).reindex(rows)[order]
    if sub:
        subs = long.pivot(index=index, columns="metric", values=sub).reindex(rows)[order]
        table = pd.concat(
            {SHORT.get(value, value): table, SHORT.get(sub, sub): subs}, axis=1
        ).swaplevel(axis=1)[order]
    return table
