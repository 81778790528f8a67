"""The LLM judge beside ocg's deterministic checks, answer by answer: for each check, the cell of
its 2x2 table a judged answer falls in (docs/METHODS.md, "LLM judge").

- coverage: the judge's order lists every concept (it read them all) against ocg's `all_present`;
- order: the judge's `judge_in_order` against ocg's `in_order`.

Each judged answer (`judge_reason` empty) falls in one cell per check: `both` (the judge and ocg
say yes), `judge_only`, `ocg_only` or `neither`; an unjudged answer in none. The summary sums
these per (model, condition, template) as `n_judge_<check>_<cell>` (summary.py), `ocg compare`
over the shared answers (analysis/versus.py), so every view reads one classification;
analysis/agreement.py turns a table into the share, Cohen's kappa and their intervals."""

from __future__ import annotations

import pandas as pd

# check -> ocg's own column it is set against
CHECKS = {"coverage": "all_present", "order": "in_order"}
# (judge says yes, ocg says yes) of each cell, in the order tables give them
CELLS = {
    "both": (True, True),
    "judge_only": (True, False),
    "ocg_only": (False, True),
    "neither": (False, False),
}


def cell_column(check: str, cell: str) -> str:
    """The summary's count of one cell: `n_judge_order_both`..."""
    return f"n_judge_{check}_{cell}"


def disagreement_column(check: str) -> str:
    """The summary's count of the judged answers whose verdict differs from ocg's (the two
    off-diagonal cells)."""
    return f"n_judge_{check}_disagreements"


def judged_beside_checks(answers: pd.DataFrame) -> bool:
    """Whether `answers` hold both the judge's verdicts and ocg's checks to set them against."""
    return "judge_reason" in answers and set(CHECKS.values()) <= set(answers.columns)


def judge_all_present(answers: pd.DataFrame) -> pd.Series:
    """Whether the judge read every concept in the answer (its order holds them all); False where
    unjudged."""
    return pd.Series(
        [
            order is not None and {str(c).lower() for c in concepts} <= set(order)
            for order, concepts in zip(answers["judge_order"], answers["concepts"])
        ],
        index=answers.index,
        dtype=bool,
    )


def _verdicts(answers: pd.DataFrame, check: str) -> tuple[pd.Series, pd.Series]:
    """(the judge says yes, ocg says yes) per answer, for one check."""
    if check == "coverage":
        judge = judge_all_present(answers)
    else:
        judge = answers["judge_in_order"].eq(1.0)
    return judge, answers[CHECKS[check]].astype(bool)


def cell_flags(answers: pd.DataFrame) -> pd.DataFrame:
    """Per answer, one bool column per check and cell (`cell_column`): True in the one cell a
    judged answer falls in, False everywhere for an unjudged one. Needs `judged_beside_checks`."""
    judged = answers["judge_reason"].isna()
    out = {}
    for check in CHECKS:
        judge, ocg = _verdicts(answers, check)
        for cell, (judge_yes, ocg_yes) in CELLS.items():
            out[cell_column(check, cell)] = judged & (judge == judge_yes) & (ocg == ocg_yes)
    return pd.DataFrame(out, index=answers.index)


def cell_counts(answers: pd.DataFrame) -> dict[str, dict[str, int]]:
    """check -> cell -> judged answers in it, over all of `answers`."""
    flags = cell_flags(answers)
    return {
        check: {cell: int(flags[cell_column(check, cell)].sum()) for cell in CELLS}
        for check in CHECKS
    }
