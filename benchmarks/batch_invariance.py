"""Does batching change greedy answers? bf16 vs float32, side by side in one run.

    .venv/bin/python benchmarks/batch_invariance.py [--model smollm2-135m-instruct] [--prompts 32]

The same prompts are generated at the entry's batch size and at batch size 1, for each dtype;
printed: answers that differ, and generated tokens at each batch size (docs/METHODS.md,
"Decoding"). Same greedy settings, one process.
"""

from __future__ import annotations

import argparse
import dataclasses
import json

from ocg.generation import plan_batches, select_instances
from ocg.generation.hf_backend import TransformersBackend
from ocg.models import get_model


def answers(backend: TransformersBackend, rendered: list[str], batch_size: int) -> tuple[list[str], int]:
    backend.max_working = batch_size
    ids = [f"{i:04d}" for i in range(len(rendered))]
    out: dict[int, dict] = {}
    for batch in plan_batches(ids, backend.prompt_lengths(rendered), batch_size):
        out.update(zip(batch, backend.generate([rendered[p] for p in batch])))
    return [out[i]["raw"] for i in range(len(rendered))], sum(r["completion_tokens"] for r in out.values())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="smollm2-135m-instruct")
    parser.add_argument("--prompts", type=int, default=32)
    parser.add_argument("--batch-size", type=int, default=None, help="default: the model entry's")
    args = parser.parse_args()

    base = get_model(args.model)
    batch = args.batch_size or base.batch_size
    rows = select_instances(conditions=["ordered"], subset_k=2).sample(n=args.prompts, random_state=0)
    print(f"model {base.name} ({base.quantization}), {args.prompts} prompts, batch {batch} vs 1, "
          f"max_new_tokens={base.max_new_tokens}")
    for dtype in ("bfloat16", "float32"):
        backend = TransformersBackend(dataclasses.replace(base, dtype=dtype), batch_size=batch)
        rendered = [backend.render(json.loads(m)) for m in rows["messages"]]
        batched, tok_b = answers(backend, rendered, batch)
        single, tok_1 = answers(backend, rendered, 1)
        differ = sum(a != b for a, b in zip(batched, single))
        print(f"  {dtype:>8}: {differ:>3} of {len(rendered)} answers differ ({100 * differ / len(rendered):5.1f}%); "
              f"tokens batch {batch}: {tok_b}, batch 1: {tok_1}")


if __name__ == "__main__":
    main()
