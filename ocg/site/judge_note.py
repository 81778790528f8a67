"""The LLM judge's counts under Table 1: how many answers it judged and, for the rest, how many
for each reason (a failed request, a reply that is no verdict, an answer that carries a verdict,
...); how its verdicts agree with ocg's deterministic checks (coverage and order, a share and a
count of the judged answers); and a few unjudged answers with the judge's reply and the reason,
the first thing to read when fixing a judge prompt. Without this line a judge that judged nothing
shows only "–" in its columns, with no reason under the table (docs/METHODS.md, "LLM judge")."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from ..weights.embedded import EMBEDDED_PREFIX


@dataclass(frozen=True)
class Agreement:
    """On how many of the judged answers the judge's verdict is ocg's."""

    check: str  # "coverage" or "order"
    agree: int
    judged: int

    @property
    def share(self) -> str:
        return f"{100.0 * self.agree / self.judged:.0f}%"


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

    @property
    def unjudged(self) -> int:
        return self.total - self.judged

    @property
    def smoke_test(self) -> bool:
        """An embedded model as judge (135M parameters): the path is tested, nothing measured."""
        return self.judge_id.startswith(EMBEDDED_PREFIX)


def _sum(rows: pd.DataFrame, column: str) -> int | None:
    return int(rows[column].sum()) if column in rows else None


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
        agreements = []
        for check in ("coverage", "order"):
            differ = _sum(rows, f"n_judge_{check}_disagreements")
            if differ is not None and judged:
                agreements.append(Agreement(check, judged - differ, judged))
        counts.append(
            JudgeCount(
                model=str(model),
                judge=str(block.get("judge")),
                judge_id=str(block.get("key", {}).get("id", "")),
                total=total,
                judged=judged,
                reasons=[(str(r), int(n)) for r, n in reasons],
                agreements=agreements,
                disagreements=_sum(rows, "n_judge_order_disagreements") if judged else None,
                examples=[
                    Unjudged(str(e["answer"]), e.get("reply"), str(e["reason"]))
                    for e in block.get("unjudged_examples", [])
                ],
            )
        )
    return counts
