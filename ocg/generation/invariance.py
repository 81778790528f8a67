"""Batch planning and the batch-invariance measurement (do batched answers equal batch-1 ones?).

Used by generation runs (plan_batches), benchmarks/batch_invariance.py and benchmarks/gpu_check.py;
imports neither pandas nor anything beyond the backend it is given (gpu_check runs with torch and
transformers alone).
"""

from __future__ import annotations

import random
import time

from ..data.concepts import load_concept_sets
from ..data.instances import permutations
from ..data.templates import load_templates


def plan_batches(instance_ids: list[str], lengths: list[int], batch_size: int) -> list[list[int]]:
    """Row positions grouped into batches: longest prompts first, ties broken by id."""
    order = sorted(range(len(instance_ids)), key=lambda i: (-lengths[i], instance_ids[i]))
    return [order[i : i + batch_size] for i in range(0, len(order), batch_size)]


def answers(backend, rendered: list[str], batch_size: int) -> tuple[list[str], int, float]:
    """Greedy answers to rendered prompts at one batch size, in prompt order; generated tokens and
    seconds spent generating."""
    backend.work_at(batch_size)
    ids = [f"{i:04d}" for i in range(len(rendered))]
    out: dict[int, dict] = {}
    t0 = time.perf_counter()
    for batch in plan_batches(ids, backend.prompt_lengths(rendered), batch_size):
        out.update(zip(batch, backend.generate([rendered[p] for p in batch])))
    seconds = time.perf_counter() - t0
    return (
        [out[i]["raw"] for i in range(len(rendered))],
        sum(r["completion_tokens"] for r in out.values()),
        seconds,
    )


def differing(batched: list[str], single: list[str]) -> int:
    """Answers that batching changed."""
    return sum(a != b for a, b in zip(batched, single))


def sample_messages(n: int, seed: int = 0, condition: str = "ordered") -> list[list[dict]]:
    """Chat messages of n instances drawn at random from all (4-concept set, order, template) of a
    condition, without building the instance table (no pandas)."""
    config = load_templates()
    every = [
        (s, tid, order)
        for s in load_concept_sets(4)
        for _, order in permutations(s)
        for tid in sorted(config.templates)
    ]
    chosen = random.Random(seed).sample(every, min(n, len(every)))
    return [config.messages(tid, condition, [c.word for c in order]) for _, tid, order in chosen]
