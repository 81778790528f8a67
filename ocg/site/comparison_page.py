"""`ocg compare`'s page and JSON: two models side by side (ocg/analysis/versus.py), written to
outputs/comparisons/<A>-vs-<B>/ as index.html (templates/comparison.html) and comparison.json."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd

from ..analysis.uncertainty import MIN_SETS, units
from ..analysis.versus import MAX_LISTED, Comparison, Side
from ..core.files import atomic_path, write_json
from ..core.layout import ComparisonFolder
from ..metrics.registry import label
from ..results.designs import describe_design
from .render import render


def _number(value) -> float | None:
    """A JSON number, or null for a missing one (JSON has no NaN)."""
    return None if value is None or (isinstance(value, float) and math.isnan(value)) else value


def _side(side: Side) -> dict:
    return {
        "report": side.name,
        "folder": str(side.folder),
        "model": side.model,
        "models_in_report": side.models,
        "instances": side.n,
        "design": side.design,
    }


def comparison_json(c: Comparison) -> dict:
    """Everything the page shows, machine-readable (docs/DATA.md, "ocg compare")."""
    tests = [
        {k: _number(v) if isinstance(v, float) else v for k, v in row.items()}
        for row in c.tests.to_dict(orient="records")
    ]
    return {
        "a": _side(c.a),
        "b": _side(c.b),
        "shared": {
            "instances": c.shared,
            "concept_sets": c.shared_sets,
            "conditions": c.conditions,
        },
        "difference": "A minus B",
        **c.resampling.settings(
            paired_test="two-sided sign flip of concept sets, Holm per condition"
        ),
        "tests": tests,
        "verdicts_differ": {
            "n": c.n_differ,
            "of": c.n_verdicts,
            "listed": len(c.differ),
            "answers": c.differ.to_dict(orient="records"),
        },
        "scoring_differences": c.scoring,
    }


def _table(tests: pd.DataFrame) -> pd.DataFrame:
    """The tests as a reader reads them: labels, A, B, A - B with its interval, p and n."""
    if tests.empty:
        return tests
    return pd.DataFrame(
        {
            "condition": tests["condition"],
            "metric": tests["metric"].map(label),
            "A": tests["value_a"],
            "B": tests["value_b"],
            "A − B": tests["difference"],
            "95% interval": [
                f"[{lo:.2f}, {hi:.2f}]" for lo, hi in zip(tests.ci_low, tests.ci_high)
            ],
            "p": [f"{p:.4g}" for p in tests["p_value"]],
            "p (Holm)": [f"{p:.4g}" for p in tests["p_holm"]],
            "n": [units(int(n), u) for n, u in zip(tests["n"], tests["unit"])],
            "test": tests["p_method"]
            + tests["small_sample"].map({True: "; small sample", False: ""}),
        }
    ).set_index("condition")


def write_comparison(c: Comparison, folder: str | Path) -> tuple[Path, Path]:
    """index.html and comparison.json of a comparison, in `folder` (made if missing)."""
    where = ComparisonFolder(Path(folder))
    where.folder.mkdir(parents=True, exist_ok=True)
    data = write_json(where.data, comparison_json(c))
    page = render(
        "comparison.html",
        c=c,
        design_a=describe_design(c.a.design),
        design_b=describe_design(c.b.design),
        tests=_table(c.tests),
        differ=c.differ.set_index(c.differ.columns[0]) if len(c.differ) else None,
        max_listed=MAX_LISTED,
        min_sets=MIN_SETS,
        data=where.data.name,
    )
    with atomic_path(where.index) as tmp:
        tmp.write_text(page, encoding="utf-8")
    return where.index, data
