"""Where analyses write: tables (CSV + LaTeX) and figures (PNG + PDF) under outputs/reports/."""

from __future__ import annotations

import html
from pathlib import Path

import pandas as pd

from ..io import atomic_path, write_json
from ..paths import outputs_dir
from ..provenance import provenance


def reports_dir(out_dir: str | Path | None = None) -> Path:
    return Path(out_dir) if out_dir else outputs_dir() / "reports"


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


def write_index(out_dir: str | Path, title: str, pages: list[tuple[str, str]], notes: list[str] = ()) -> Path:
    """index.html linking the rendered notebooks (relative links), tables and figures."""
    out_dir = Path(out_dir)
    items = "\n".join(f'  <li><a href="{html.escape(href)}">{html.escape(label)}</a></li>'
                      for label, href in pages)
    files = sorted(p.relative_to(out_dir).as_posix() for sub in ("tables", "figures")
                   for p in (out_dir / sub).glob("*") if p.is_file())
    file_items = "\n".join(f'  <li><a href="{html.escape(f)}">{html.escape(f)}</a></li>' for f in files)
    note_items = "".join(f"<p>{html.escape(n)}</p>\n" for n in notes)
    body = (f"<!doctype html>\n<html><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
            "<style>body{font-family:sans-serif;max-width:52em;margin:2em auto}</style></head><body>\n"
            f"<h1>{html.escape(title)}</h1>\n{note_items}<h2>Notebooks</h2>\n<ol>\n{items}\n</ol>\n"
            f"<h2>Tables and figures</h2>\n<ul>\n{file_items}\n</ul>\n</body></html>\n")
    path = out_dir / "index.html"
    with atomic_path(path) as tmp:
        tmp.write_text(body, encoding="utf-8")
    return path
