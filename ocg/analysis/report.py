"""Where analyses write: tables (CSV + LaTeX) and figures (PNG + PDF) under outputs/reports/."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from ..io import atomic_path, write_json
from ..layout import ReportFolder
from ..provenance import provenance


def sources(scores: dict) -> dict:
    """What a table was computed from: each model's scoring signature (inputs hash, metric
    settings, package versions, git commit of the scoring run)."""
    return {"scored_models": {m: sig.to_json() for m, sig in scores.get("signatures", {}).items()}}


def save_table(long: pd.DataFrame, name: str, out_dir=None, latex: str | None = None,
               meta: dict | None = None) -> list[Path]:
    """tables/<name>.csv (tidy, full precision), tables/<name>.tex when given, and
    tables/<name>.provenance.json (this run's provenance plus `meta`, e.g. `sources(scores)`)."""
    report = ReportFolder.at(out_dir)
    written = [write_json(report.table(name, "provenance.json"), {"table": name, **provenance(), **(meta or {})})]
    with atomic_path(report.table(name)) as tmp:
        long.to_csv(tmp, index=False)
    written.append(report.table(name))
    if latex is not None:
        with atomic_path(report.table(name, "tex")) as tmp:
            tmp.write_text(latex)
        written.append(report.table(name, "tex"))
    return written


def save_figure(fig, name: str, out_dir=None) -> list[Path]:
    report = ReportFolder.at(out_dir)
    written = []
    for ext in ("png", "pdf"):
        with atomic_path(report.figure(name, ext)) as tmp:
            fig.savefig(tmp, format=ext, dpi=150, bbox_inches="tight")
        written.append(report.figure(name, ext))
    return written
