"""Analyses: the paper's tables and figures from score tables, beside the published numbers."""

from . import (
    cases,
    difficulty,
    figures,
    latex,
    notebook,
    paper,
    paper_tables,
    repeated_samples,
    report,
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
    "paper_tables",
    "repeated_samples",
    "uncertainty",
]
