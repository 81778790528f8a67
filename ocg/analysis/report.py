"""Where analyses write: tables (CSV + LaTeX) and figures (PNG + PDF) in a report folder.

A notebook run by hand (JupyterLab, `reports_dir=None`) writes nothing: the folder shared by
every ad hoc run (outputs/reports/tables/) would be overwritten quietly. Pass `reports_dir` to
save; `ocg report`, sweeps and `ocg run-notebook --out` always do."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from ..core.files import atomic_path, write_json
from ..core.layout import ReportFolder
from ..core.provenance import provenance
from ..results.scores import Scores


def sources(scores: Scores) -> dict:
    """What a table was computed from: each model's scoring signature (inputs hash, metric
    settings, package versions, git commit of the scoring run)."""
    return {"scored_models": {m: sig.to_json() for m, sig in scores.signatures.items()}}


def save_table(
    long: pd.DataFrame, name: str, out_dir=None, latex: str | None = None, meta: dict | None = None
) -> list[Path]:
    """tables/<name>.csv (tidy, full precision), tables/<name>.tex when given, and
    tables/<name>.provenance.json (this run's provenance plus `meta`, e.g. `sources(scores)`)."""
    if out_dir is None:
        return _not_saved(name)
    report = ReportFolder.at(out_dir)
    written = [
        write_json(report.table_provenance(name), {"table": name, **provenance(), **(meta or {})})
    ]
    with atomic_path(report.table(name)) as tmp:
        long.to_csv(tmp, index=False)
    written.append(report.table(name))
    if latex is not None:
        with atomic_path(report.table(name, "tex")) as tmp:
            tmp.write_text(latex)
        written.append(report.table(name, "tex"))
    return written


def save_figure(fig, name: str, out_dir=None) -> list[Path]:
    if out_dir is None:
        return _not_saved(name)
    report = ReportFolder.at(out_dir)
    written = []
    for ext in ("png", "pdf"):
        with atomic_path(report.figure(name, ext)) as tmp:
            fig.savefig(tmp, format=ext, dpi=150, bbox_inches="tight")
        written.append(report.figure(name, ext))
    return written


def show_saved(*paths: Path) -> None:
    """Each saved file as the report names it (`tables/table1.csv`): the folder a report is built
    in is renamed when it is complete, so its absolute path would point nowhere."""
    for path in paths:
        print(f"saved {path.parent.name}/{path.name}")


def _not_saved(name: str) -> list[Path]:
    print(
        f"{name}: not saved (reports_dir is None: a notebook run by hand writes nothing; "
        "set reports_dir to a folder of your own to save it)"
    )
    return []
