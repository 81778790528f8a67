"""The LLM judge's counts under Table 1: how many answers it judged and, for the rest, how many
for each reason (a failed request, a reply that is no verdict, an answer that carries a verdict,
...); how its verdicts agree with ocg's deterministic checks (coverage and order: a share and a
count of the judged answers with the share's Wilson interval, and Cohen's kappa with its interval,
analysis/agreement.py); and a few unjudged answers with the judge's reply and the reason,
the first thing to read when fixing a judge prompt. Without this line a judge that judged nothing
shows only "–" in its columns, with no reason under the table (docs/METHODS.md, "LLM judge")."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from ..analysis.agreement import (
    METHOD_NOTE,
    Agreement,
    Cells,
    agreement,
    methods,
    records,
    share_only,
)
from ..scoring.judge_agreement import CELLS, CHECKS, cell_column, disagreement_column
from ..weights.embedded import EMBEDDED_PREFIX

# Why a score set's agreement has no kappa: its summary was written before the 2x2 counts.
NO_CELLS = (
    "this score set's summary predates the judge's 2x2 counts (n_judge_<check>_<cell>): score "
    "it again (ocg score) for kappa"
)


@dataclass(frozen=True)
class Unjudged:
    answer: str
    reply: str | None
    reason: str


@dataclass(frozen=True)
class JudgeCount:
    """One model's answers as a judge saw them; `agreements` empty where nothing was judged or
    ocg's own checks were not scored beside the judge's."""

    model: str
    judge: str
    judge_id: str
    total: int
    judged: int
    reasons: list[tuple[str, int]]  # (reason, answers), in metrics/judge.py's order
    agreements: list[Agreement]
    disagreements: int | None  # judged answers whose order verdict differs from ocg's
    examples: list[Unjudged]
    method: str = METHOD_NOTE  # how the agreement's intervals are computed, in words

    @property
    def unjudged(self) -> int:
        return self.total - self.judged

    @property
    def smoke_test(self) -> bool:
        """An embedded model as judge (135M parameters): the path is tested, nothing measured."""
        return self.judge_id.startswith(EMBEDDED_PREFIX)


def _sum(rows: pd.DataFrame, column: str) -> int | None:
    return int(rows[column].sum()) if column in rows else None


def agreements(rows: pd.DataFrame, judged: int) -> list[Agreement]:
    """Each check's agreement over `rows` (one model's summary rows): from the 2x2 counts, or the
    share alone from the disagreements of a summary written before them; none where ocg's checks
    were not scored beside the judge or nothing was judged."""
    out = []
    for check in CHECKS:
        columns = [cell_column(check, cell) for cell in CELLS]
        if set(columns) <= set(rows.columns) and judged:
            out.append(agreement(check, Cells(*(int(rows[c].sum()) for c in columns))))
        elif (differ := _sum(rows, disagreement_column(check))) is not None and judged:
            out.append(share_only(check, judged - differ, judged, NO_CELLS))
    return out


def judge_counts(summary: pd.DataFrame, signatures: dict) -> list[JudgeCount]:
    """One note per model a judge was asked for: judged, unjudged by reason, agreement."""
    counts = []
    for model, sig in sorted(signatures.items()):
        block = sig.family("judge")
        if "n_judged" not in block and "unparsed" not in block:
            continue  # no judge named: its missing reason stands under Table 1 already
        rows = summary[summary["model"] == model]
        total = int(rows["n_answers"].sum())
        if "n_judged" in block:
            judged, reasons = int(block["n_judged"]), list(block.get("unjudged", {}).items())
        else:  # scored before the reasons were kept
            judged, reasons = total - int(block["unparsed"]), [("unparsed", int(block["unparsed"]))]
        counts.append(
            JudgeCount(
                model=str(model),
                judge=str(block.get("judge")),
                judge_id=str(block.get("key", {}).get("id", "")),
                total=total,
                judged=judged,
                reasons=[(str(r), int(n)) for r, n in reasons],
                agreements=agreements(rows, judged),
                disagreements=_sum(rows, "n_judge_order_disagreements") if judged else None,
                examples=[
                    Unjudged(str(e["answer"]), e.get("reply"), str(e["reason"]))
                    for e in block.get("unjudged_examples", [])
                ],
            )
        )
    return counts


def results_block(count: JudgeCount) -> dict:
    """A model's `judge` block of results.json (docs/DATA.md): the judge, its counts, and each
    check's agreement as the page gives it (the same JudgeCount); a check not set beside the
    judge is null with its reason."""
    why = (
        "nothing judged"
        if not count.judged
        else "ocg's coverage (all_present, in_order) was not scored beside the judge"
    )
    checks = records(count.agreements, why)
    return {
        "judge": count.judge,
        "judge_id": count.judge_id,
        "answers": count.total,
        "judged": count.judged,
        "unjudged": dict(count.reasons),
        **checks,
        **methods(),
    }
