"""The functions ordered_commongen.yaml names: the dataset (ocg's instances of the selection given
by `--metadata`), the per-answer checks (ocg's) and the pooled rates (ocg's ratios of sums)."""

from __future__ import annotations

import json

# absolute: lm-eval loads this file by its path, outside any package
from ocg.harness.asked import Selection, messages_of, messages_sha256, select
from ocg.harness.verdicts import CHECKS, RATES, pooled_rates, verdicts

SELECTION_KEYS = ("n_concepts", "conditions", "templates", "subset", "permutations")


def docs(**metadata) -> list[dict]:
    """One document per instance: its system and user turns, concepts and prompt hash; the
    selection it came from (JSON) rides along so `ocg import` can rebuild it."""
    selection = Selection.given(**{k: metadata[k] for k in SELECTION_KEYS if k in metadata})
    out = []
    for row in select(selection, single_turn=True).to_dict("records"):
        messages = messages_of(row)
        turns = {m["role"]: m["content"] for m in messages}
        out.append(
            {
                "instance_id": row["instance_id"],
                "system": turns.get("system", ""),
                "user": turns["user"],
                "concepts": list(row["concepts"]),
                "pos_pattern": row["pos_pattern"],
                "condition": row["condition"],
                "prompt_sha256": messages_sha256(messages),
                "ocg_selection": json.dumps(selection.as_params()),
            }
        )
    return out


def load(**metadata) -> dict:
    """lm-eval's `custom_dataset`: {"test": the documents} (other metadata keys, such as the
    task's version or the model's arguments, are not ocg's and are left alone)."""
    import datasets

    return {"test": datasets.Dataset.from_list(docs(**metadata))}


def process_results(doc: dict, results: list[str]) -> dict:
    """The answer's checks, under each metric's name (each metric pools them: a ratio of sums)."""
    row = verdicts([results[0]], [doc["concepts"]], [doc.get("pos_pattern")]).iloc[0]
    checks = {check: int(row[check]) for check in CHECKS}
    return {name: checks for name in RATES}


def coverage_wo_order(items: list[dict]) -> float:
    return pooled_rates(items)["coverage_wo_order"]


def coverage_w_order(items: list[dict]) -> float:
    return pooled_rates(items)["coverage_w_order"]


def ordered_rate(items: list[dict]) -> float:
    return pooled_rates(items)["ordered_rate"]


def copies_list_rate(items: list[dict]) -> float:
    return pooled_rates(items)["copies_list_rate"]
