"""Sections of the landing page that show a notebook's saved tables: the sensitivity view
(notebook 03) and the forced order (notebook 12)."""

from __future__ import annotations

import html
from pathlib import Path

import pandas as pd

from ..layout import ReportFolder
from .explain import methods_link


def _esc(x) -> str:
    return html.escape(str(x))


def sensitivity(report_dir: Path, table_html) -> str:
    """Table 1 under each matching rule, order reading and perplexity average, and without the
    list copies (notebook 03)."""
    from .sensitivity import largest_shifts, wide
    path = ReportFolder(report_dir).table("table1_sensitivity")
    if not path.exists():
        return "<p class='muted'>The sensitivity view was not computed in this report (notebook 03).</p>"
    long = pd.read_csv(path)
    shifts = largest_shifts(long)
    tables = (("coverage", "", wide(long, "coverage")),
              ("list copies", "<p>Without the answers that copy the concept list, on both sides of the Δ: "
               "excluded (the answers left, <code>ordered</code> / <code>original</code>, beside), or counted as "
               "failures (over all answers, Table 1's denominator: w/ order is then the share of all answers in "
               "order and not a copy); pooled over templates, so Ordered Rate = w/ order / w/o order in each "
               "row.</p>", wide(long, "copies")),
              ("perplexity", "", wide(long, "perplexity")))
    return ("<p>Table 1's numbers recomputed under each concept-matching rule (CommonGen's lemma rule among "
            "them), both readings of the order check, without the answers that copy the concept list, and "
            "under three averages of perplexity, beside the default ("
            + methods_link(report_dir, "Analyses") + ", Sensitivity); the order reading does not touch "
            "w/o order (–).</p>"
            + ("<p><b>Largest shifts:</b></p><ul>" + "".join(f"<li>{_esc(t)}</li>" for t in shifts) + "</ul>"
               if shifts else "<p>No choice moves these numbers.</p>")
            + "".join(lead + f"<div class='scroll'>{table_html(t)}</div>" if not t.empty
                      else f"<p class='muted'>No {part} here (not scored).</p>" for part, lead, t in tables))
