"""The LLM judge's counts under Table 1: how many answers it judged and how many it left
unjudged (a reply without the rubric's JSON, an empty answer), and on how many its order verdict
differs from ocg's. Without this line a judge that judged nothing shows only "–" in its columns,
with no reason under the table (docs/METHODS.md, "LLM judge")."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd


@dataclass(frozen=True)
class JudgeCount:
    """One model's answers as a judge saw them; `disagreements` None where ocg's own order
    verdict was not scored beside the judge's."""

    model: str
    judge: str
    total: int
    unjudged: int
    disagreements: int | None

    @property
    def judged(self) -> int:
        return self.total - self.unjudged


def judge_counts(summary: pd.DataFrame, signatures: dict) -> list[JudgeCount]:
    """One note per model a judge scored: '<judge> judged n of N answers (u unjudged) ...'."""
    counts = []
    for model, sig in sorted(signatures.items()):
        block = sig.family("judge")
        if block.get("status") != "ok" or "unparsed" not in block:
            continue  # no judge named: its missing reason stands under Table 1 already
        rows = summary[summary["model"] == model]
        disagree = (
            "n_judge_order_disagreements" in rows
        )  # scored beside coverage: ocg's verdict too
        counts.append(
            JudgeCount(
                str(model),
                str(block["judge"]),
                int(rows["n_answers"].sum()),
                int(block["unparsed"]),
                int(rows["n_judge_order_disagreements"].sum()) if disagree else None,
            )
        )
    return counts
