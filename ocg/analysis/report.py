"""Where analyses write: tables (CSV + LaTeX) and figures (PNG + PDF) under outputs/reports/."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from .. import paths
from ..io import atomic_path, write_json
from ..provenance import provenance


def reports_dir(out_dir: str | Path | None = None) -> Path:
    return Path(out_dir) if out_dir else paths.reports_dir()


def sources(scores: dict) -> dict:
    """What a table was computed from: each model's scoring signature (inputs hash, metric
    settings, package versions, git commit of the scoring run)."""
    return {"scored_models": scores.get("signatures", {})}


def save_table(long: pd.DataFrame, name: str, out_dir=None, latex: str | None = None,
               meta: dict | None = None) -> list[Path]:
    """tables/<name>.csv (tidy, full precision), tables/<name>.tex when given, and
    tables/<name>.provenance.json (this run's provenance plus `meta`, e.g. `sources(scores)`)."""
    folder = reports_dir(out_dir) / "tables"
    written = [write_json(folder / f"{name}.provenance.json", {"table": name, **provenance(), **(meta or {})})]
    with atomic_path(folder / f"{name}.csv") as tmp:
        long.to_csv(tmp, index=False)
    written.append(folder / f"{name}.csv")
    if latex is not None:
        with atomic_path(folder / f"{name}.tex") as tmp:
            tmp.write_text(latex)
        written.append(folder / f"{name}.tex")
    return written


def save_figure(fig, name: str, out_dir=None) -> list[Path]:
    folder = reports_dir(out_dir) / "figures"
    written = []
    for ext in ("png", "pdf"):
        with atomic_path(folder / f"{name}.{ext}") as tmp:
            fig.savefig(tmp, format=ext, dpi=150, bbox_inches="tight")
        written.append(folder / f"{name}.{ext}")
    return written
