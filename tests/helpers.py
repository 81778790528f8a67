"""Shared test helpers: synthetic generation records in the store's format."""

from ocg.data.instances import instance_id
from ocg.generation import GenerationStore


def write_generations(root, model, rows, condition="ordered"):
    """rows: dicts with set_id, template_id, perm_index, concepts, answer (+ optional fields)."""
    store = GenerationStore(root / model / f"{condition}.jsonl")
    records = []
    for r in rows:
        pos = r.get("pos_pattern", "N" * len(r["concepts"]))
        records.append({
            "instance_id": instance_id(condition, r["template_id"], r["set_id"], r["perm_index"]),
            "model": model, "condition": condition, "template_id": r["template_id"],
            "set_id": r["set_id"], "perm_index": r["perm_index"], "concepts": list(r["concepts"]),
            "pos_pattern": pos, "answer": r["answer"],
            "answer_status": "ok" if isinstance(r["answer"], str) and r["answer"].strip() else
                             ("empty" if isinstance(r["answer"], str) else "unclosed_think"),
            "raw": r["answer"] or "", "finish_reason": r.get("finish_reason", "stop"),
            **({"sample": r["sample"]} if "sample" in r else {}),
        })
    store.append(records)
    return root / model
