"""Analyses: the paper's tables and figures from score tables, beside the published numbers."""

from . import (
    cases,
    difficulty,
    figures,
    latex,
    notebook,
    paper,
    report,
    samples,
    tables,
    uncertainty,
)

__all__ = [
    "cases",
    "difficulty",
    "figures",
    "latex",
    "notebook",
    "paper",
    "report",
    "samples",
    "tables",
    "uncertainty",
]
