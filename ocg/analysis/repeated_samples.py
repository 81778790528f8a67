"""Repeated samples (notebook 11; docs/METHODS.md, "Repeated samples and pass@k"): ordered pass@k
per model, condition and template, the spread of Table 1's metrics across samples, and the
concept lists composed by some sample of some model (Figures 3-4 over samples: difficulty.py).

A sample "passes" when it composes the list in the asked order (`in_order`). Everything here
reads the answers and groups `load_scores` returns; a greedy run (no `sample` column) is one
sample per instance.
"""

from __future__ import annotations

import pandas as pd

from ..core.frames import SAMPLE, SUMMARY_KEYS, samples_or_zero
from ..metrics.pass_at_k import pass_at_k
from ..metrics.registry import in_table
from ..scoring.run import summarise
from .paper_tables import _template_average


def with_samples(answers: pd.DataFrame) -> pd.DataFrame:
    """`answers` with a whole `sample` on every row: 0 where a model's run had none (greedy)."""
    return answers.assign(**{SAMPLE: samples_or_zero(answers)})


def samples_per_instance(answers: pd.DataFrame) -> pd.Series:
    """Per model: the fewest samples any of its instances has (1 for a greedy run)."""
    per = with_samples(answers).groupby(["model", "instance_id"])[SAMPLE].nunique()
    return per.groupby(level="model").min()


def pass_counts(answers: pd.DataFrame) -> pd.DataFrame:
    """Per (model, condition, template, instance): n samples and c composed in order."""
    a = answers.assign(in_order=answers["in_order"].astype(bool))
    return (
        a.groupby([*SUMMARY_KEYS, "instance_id"], sort=True)["in_order"]
        .agg(n="size", c="sum")
        .reset_index()
    )


def pass_at_k_table(answers: pd.DataFrame, over_templates: bool = False) -> pd.DataFrame:
    """Per model, condition and template (or over all templates): the mean over instances of
    pass@k, in percent, for k = 1 .. the fewest samples an instance of that row has."""
    counts = pass_counts(answers)
    keys = ["model", "condition"] if over_templates else SUMMARY_KEYS
    rows = []
    for key, g in counts.groupby(keys, sort=True):
        for k in range(1, int(g["n"].min()) + 1):
            values = [pass_at_k(int(n), int(c), k) for n, c in zip(g["n"], g["c"])]
            rows.append(
                {
                    **dict(zip(keys, key)),
                    "k": k,
                    "pass_at_k": 100.0 * sum(values) / len(values),
                    "n_instances": len(g),
                    "n_samples": int(g["n"].min()),
                }
            )
    return pd.DataFrame(rows, columns=[*keys, "k", "pass_at_k", "n_instances", "n_samples"])


def sample_spread(answers: pd.DataFrame, groups: pd.DataFrame) -> pd.DataFrame:
    """Per model, condition and Table 1 metric: its template average in each sample, then the
    mean and SD (ddof=1) across samples: how much a rerun with fresh samples moves the number
    (not a spread across concept sets: see the bootstrap for that)."""
    answers, groups = with_samples(answers), with_samples(groups)
    per_sample = []
    for s in sorted(answers[SAMPLE].unique()):
        summary = summarise(answers[answers[SAMPLE] == s], groups[groups[SAMPLE] == s])
        for condition in sorted(summary["condition"].unique()):
            avg = _template_average(summary, condition)
            for model in avg.index:
                per_sample += [
                    {
                        "model": model,
                        "condition": condition,
                        SAMPLE: s,
                        "metric": m.name,
                        "value": avg.at[model, m.name],
                    }
                    for m in in_table("table1")
                    if m.name in avg
                ]
    long = pd.DataFrame(per_sample)
    out = long.groupby(["model", "condition", "metric"], sort=False)["value"].agg(
        mean_over_samples="mean", sd_over_samples="std", n_samples="count"
    )
    return out.reset_index()
