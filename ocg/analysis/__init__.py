"""Analyses: the paper's tables and figures from score tables, beside the published numbers."""

from . import cases, difficulty, figures, latex, paper, report, tables, uncertainty
from .metrics import LABELS, LOWER_IS_BETTER, PAPER_METRICS

__all__ = ["LABELS", "LOWER_IS_BETTER", "PAPER_METRICS", "cases", "difficulty", "figures", "latex",
           "paper", "report", "tables", "uncertainty"]
