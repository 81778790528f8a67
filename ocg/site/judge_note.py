"""The LLM judge's counts under Table 1: how many answers it judged and how many it left
unjudged (a reply without the rubric's JSON, an empty answer), and on how many its order verdict
differs from ocg's. Without this line a judge that judged nothing shows only "–" in its columns,
with no reason under the table (docs/METHODS.md, "LLM judge")."""

from __future__ import annotations

import html

import pandas as pd


def judge_counts(summary: pd.DataFrame, signatures: dict) -> str:
    """One note per model a judge scored: '<judge> judged n of N answers (u unjudged) ...'."""
    lines = []
    for model, sig in sorted(signatures.items()):
        block = sig.family("judge")
        if block.get("status") != "ok" or "unparsed" not in block:
            continue  # no judge named: its missing reason stands under Table 1 already
        rows = summary[summary["model"] == model]
        total = int(rows["n_answers"].sum())
        unjudged = int(block["unparsed"])
        line = (
            f"<b>Judge</b> of {html.escape(str(model))} (<code>{html.escape(str(block['judge']))}"
            f"</code>): {total - unjudged} of {total} answers judged, {unjudged} unjudged (a "
            "reply without the rubric's JSON, or an empty answer: never guessed"
            + (", so Judge and Judge w/ order have no value" if unjudged == total else "")
            + ")"
        )
        if "n_judge_order_disagreements" in rows:  # scored beside coverage: ocg's verdict too
            line += (
                f"; its order verdict differs from ocg's on "
                f"{int(rows['n_judge_order_disagreements'].sum())} (the case browser's “the LLM "
                "judge's order verdict differs” filter lists them)"
            )
        lines.append(line + ".")
    return "".join(f"<p class='note'>{line}</p>" for line in lines)
