"""Table 1's quality columns in a panel of their own, "Quality beside order": the metrics ocg adds
to the paper's eight (PoS-correct coverage, SLOR, non-words, Vendi, cosine, the judge). Table 1
keeps the paper's columns, so it reads at a laptop's width beside the paper; the panel says what
each added column measures and what it leans on (spaCy's tagger, the scoring LM, wordfreq, the
embedding model, a judge's opinion), so a reader sees whether keeping the order cost quality."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from ..metrics.registry import PAPER_METRICS, label
from .explain import LegendItem, MissingReasons
from .judge_note import JudgeCount
from .render import Link

NBSP = "\u00a0"
QUALITY_ID = "table1-quality"  # its <table id>: `ocg verify` reads it beside #table1 (verify.py)


def paper_labels() -> set[str]:
    """The column labels of the paper's eight metrics: the columns Table 1 keeps."""
    return {label(m) for m in PAPER_METRICS}


def split(table: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(the paper's columns, the rest) of a wide table whose columns are (label, sub)."""
    paper = paper_labels()
    keep = [c for c in table.columns if c[0] in paper]
    rest = [c for c in table.columns if c[0] not in paper]
    return table[keep], table[rest]


def split_missing(m: MissingReasons) -> tuple[MissingReasons, MissingReasons]:
    """Why a value is missing, (the paper's columns', the quality columns'); where perplexity came
    from stays with Table 1, which shows perplexity."""
    paper = paper_labels()
    return (
        MissingReasons([x for x in m.missing if x.label in paper], m.perplexity_from),
        MissingReasons([x for x in m.missing if x.label not in paper], []),
    )


def breakable(table: pd.DataFrame) -> pd.DataFrame:
    """Every text cell of a wide table as the page may wrap it: at its spaces ("1779.12 ‡ (median
    67.10)" over two or three lines in a narrow column), but never inside "median Δ" (a no-break
    space), so Table 1's columns take the width of their numbers, not of their notes; `ocg
    verify` reads the cell as before (any white space between its parts)."""

    def keep(v):
        return v.replace("median Δ", f"median{NBSP}Δ") if isinstance(v, str) else v

    out = table.copy()
    for column in out.columns:
        out[column] = [keep(v) for v in out[column]]
    return out


@dataclass(frozen=True)
class Quality:
    """The quality columns of Table 1 (each value with its Δ) and their caveats."""

    table: pd.DataFrame
    table_id: str
    pos_untagged: list  # sections.UntaggedConcept: concepts never given their part of speech
    self_scored: str  # SLOR scored by a compared model (analysis/skew.py)
    judges: list[JudgeCount]
    missing: MissingReasons
    legend: list[LegendItem]
    method: Link
