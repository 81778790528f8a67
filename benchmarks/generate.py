"""Tokens/s of a model at batch 1 vs its configured batch size, side by side in one run.

    .venv/bin/python benchmarks/generate.py [--model smollm2-135m-instruct] [--prompts 32]

Useful tokens = generated tokens up to and including the end-of-turn token (padding after a
finished answer is not counted). Same prompts, same greedy settings, one process.
Target on the 2-core CPU machine: batched >= 4x batch 1.
"""

from __future__ import annotations

import argparse
import json
import time

from ocg.generation import plan_batches, select_instances
from ocg.generation.hf_backend import TransformersBackend
from ocg.models import get_model


def measure(backend: TransformersBackend, rendered: list[str], batch_size: int) -> dict:
    backend.max_working = batch_size
    lengths = backend.prompt_lengths(rendered)
    ids = [str(i) for i in range(len(rendered))]
    t0 = time.perf_counter()
    tokens = 0
    for batch in plan_batches(ids, lengths, batch_size):
        tokens += sum(r["completion_tokens"] for r in backend.generate([rendered[p] for p in batch]))
    seconds = time.perf_counter() - t0
    return {"batch_size": batch_size, "prompts": len(rendered), "tokens": tokens,
            "seconds": round(seconds, 2), "tokens_per_s": round(tokens / seconds, 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="smollm2-135m-instruct")
    parser.add_argument("--prompts", type=int, default=32)
    parser.add_argument("--batch-size", type=int, default=None, help="default: the model entry's")
    args = parser.parse_args()

    spec = get_model(args.model)
    batch = args.batch_size or spec.batch_size
    backend = TransformersBackend(spec, batch_size=batch)
    rows = select_instances(conditions=["ordered"], subset_k=2)
    rows = rows.sample(n=args.prompts, random_state=0)
    rendered = [backend.render(json.loads(m)) for m in rows["messages"]]
    backend.generate(rendered[:2])  # warm-up (first call allocates)

    one = measure(backend, rendered, 1)
    many = measure(backend, rendered, batch)
    print(f"model {spec.name} ({spec.quantization}, {spec.dtype}) on {backend.card()['device']}, "
          f"max_new_tokens={spec.max_new_tokens}")
    for r in (one, many):
        print(f"  batch {r['batch_size']:>3}: {r['tokens']:>5} tokens in {r['seconds']:>7.2f} s "
              f"= {r['tokens_per_s']:>7.1f} tokens/s")
    print(f"ratio batched/batch-1: {many['tokens_per_s'] / one['tokens_per_s']:.2f}x")


if __name__ == "__main__":
    main()
