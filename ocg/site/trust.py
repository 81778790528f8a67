"""The line above Table 1 that says how far to trust the page: how many concept sets and answers
Table 1 stands on (with the small-sample mark under MIN_SETS sets), what fell back (a metric
computed by another model than the paper's, a metric missing) and the share of answers the token
budget cut (`truncated`: finish_reason length). Computed here; templates/sections.html shows it."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from ..analysis.references import without_references
from ..analysis.uncertainty import MIN_SETS
from ..results.scores import Scores
from .explain import missing_reasons

# The conditions Table 1 reads: each value under `ordered`, its Δ from `original`.
TABLE1_CONDITIONS = ("ordered", "original")


@dataclass(frozen=True)
class TrustLine:
    """Table 1's footing in figures."""

    sets: str  # '2' or '2-6' (models ran different numbers of concept sets)
    small_sample: bool  # under MIN_SETS concept sets for some model
    min_sets: int
    answers: int  # scored answers of Table 1's conditions, every compared model
    conditions: list[str]
    truncated: int  # of `answers`, cut at max_new_tokens
    truncated_pct: float
    fallbacks: list[str]  # what fell back or is missing, one phrase each
    replayed: int = 0  # reference entries' replayed sentences in those conditions, not counted


def _fallbacks(summary: pd.DataFrame, signatures: dict) -> list[str]:
    reasons = missing_reasons(summary, signatures)
    return [
        f"perplexity of {', '.join(p.models)} from {p.used} (not {p.requested})"
        for p in reasons.perplexity_from
    ] + [f"{m.label} missing for {', '.join(m.models)}" for m in reasons.missing]


def trust_line(scores: Scores) -> TrustLine | None:
    """The figures from what the landing page loaded (`load_scores`: summary, designs,
    signatures); None when no model was scored in Table 1's conditions. A reference entry's rows
    (its replayed sentences: never cut at max_new_tokens) are no model's answers: left out of the
    counts and counted apart (`replayed`)."""
    summary = scores.summary
    if summary.empty or "condition" not in summary:
        return None
    every = summary[summary["condition"].isin(TABLE1_CONDITIONS)]
    shown = without_references(every, scores)
    if shown.empty:
        return None
    replayed = int(every["n_answers"].sum()) - int(shown["n_answers"].sum())
    compared = set(shown["model"]) if "model" in shown else set(scores.designs)
    counts = sorted({d["sets"] for m, d in scores.designs.items() if m in compared})
    answers = int(shown["n_answers"].sum())
    truncated = int(shown["n_truncated"].sum()) if "n_truncated" in shown else 0
    return TrustLine(
        sets=str(counts[0]) if len(counts) == 1 else f"{counts[0]}-{counts[-1]}",
        small_sample=bool(counts) and counts[0] < MIN_SETS,
        min_sets=MIN_SETS,
        answers=answers,
        conditions=[c for c in TABLE1_CONDITIONS if c in set(shown["condition"])],
        truncated=truncated,
        truncated_pct=100 * truncated / answers if answers else 0.0,
        fallbacks=_fallbacks(summary, scores.signatures),
        replayed=replayed,
    )
