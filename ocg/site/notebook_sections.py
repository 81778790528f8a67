"""Two landing-page sections read from single notebooks' tables: where order breaks (notebook 10's
positions) and ordered pass@k (notebook 11, where a run drew several samples per prompt)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from ..core.errors import OcgInputError
from ..core.files import read_table
from ..core.layout import ReportFolder
from ..core.notebook_names import POSITIONS, SAMPLES
from .explain import Unreadable, notebook_link, table_address
from .methods_page import methods_link
from .render import Link


@dataclass(frozen=True)
class PassAtK:
    """Ordered pass@k (notebook 11), or why its table cannot be shown."""

    unreadable: Unreadable | None = None
    samples: str = ""  # the numbers of samples per instance the table rests on
    notebook: Link | None = None
    method: Link | None = None
    csv: str = ""
    table: pd.DataFrame | None = None


def pass_at_k(report_dir: Path) -> PassAtK | None:
    """Ordered pass@k (notebook 11), where the run drew more than one sample per prompt."""
    path = ReportFolder(report_dir).table("pass_at_k")
    try:
        long = read_table(path, comment="#") if path.exists() else pd.DataFrame()
        shown = (
            long.pivot(index=["model", "condition"], columns="k", values="pass_at_k")
            if len(long)
            else None
        )
    except (KeyError, ValueError, OcgInputError) as exc:
        return PassAtK(Unreadable.of(path, exc))
    if shown is None:
        return None
    shown.columns = [f"k = {k}" for k in shown.columns]
    return PassAtK(
        samples=", ".join(map(str, sorted(long["n_samples"].unique()))),
        notebook=notebook_link(report_dir, SAMPLES),
        method=methods_link(report_dir, "Repeated samples and pass@k"),
        csv=table_address(path, report_dir),
        table=shown,
    )


@dataclass(frozen=True)
class PositionView:
    """One of notebook 10's tables: what it shows, its CSV and the table, or why it cannot be shown."""

    unreadable: Unreadable | None = None
    what: str = ""
    csv: str = ""
    table: pd.DataFrame | None = None


@dataclass(frozen=True)
class Positions:
    views: list[PositionView]
    notebook: Link
    method: Link


def positions_section(report_dir: Path) -> Positions | None:
    """Notebook 10 (where order breaks): by asked place, and which pairs of places swap."""
    from ..analysis.positions import position_wide, swaps_wide

    report, views = ReportFolder(report_dir), []
    for name, show, what in (
        (
            "positions_by_place",
            lambda t: position_wide(t, ["present_pct", "in_place_pct"]),
            "% of answers with the concept asked at each place (present), and with it at that place among the concepts (in place)",
        ),
        (
            "positions_out_of_order",
            swaps_wide,
            "column i–j: among answers with the concepts asked i-th and j-th, % that write the j-th first",
        ),
    ):
        path = report.table(name)
        try:
            long = read_table(path) if path.exists() else pd.DataFrame()
            if long.empty:
                continue
            views.append(
                PositionView(what=what, csv=table_address(path, report_dir), table=show(long))
            )
        except (KeyError, ValueError, OcgInputError) as exc:
            views.append(PositionView(Unreadable.of(path, exc)))
    if not views:
        return None
    return Positions(
        views, notebook_link(report_dir, POSITIONS), methods_link(report_dir, "Where order breaks")
    )
