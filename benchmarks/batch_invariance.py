"""Does batching change greedy answers? bf16 vs float32, side by side in one run.

    .venv/bin/python benchmarks/batch_invariance.py [--model smollm2-135m-instruct] [--prompts 32]
    .venv/bin/python benchmarks/batch_invariance.py --smoke [--results DIR]   # seconds: 2 prompts


The same prompts are generated at the entry's batch size and at batch size 1, for each dtype;
printed: answers that differ, and generated tokens at each batch size (docs/METHODS.md,
"Decoding"). Same greedy settings, one process.
"""

from __future__ import annotations

import argparse
import json

from recording import add_smoke_options, record, use_results

from ocg.config.model_registry import get_model
from ocg.generation import select_instances
from ocg.generation.backends.transformers_backend import TransformersBackend
from ocg.generation.invariance import answers, differing


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="smollm2-135m-instruct")
    parser.add_argument("--prompts", type=int, default=32)
    parser.add_argument("--batch-size", type=int, default=None, help="default: the model entry's")
    add_smoke_options(parser, "2 prompts at batch 2 vs 1, 4 new tokens")
    args = parser.parse_args()
    use_results(args)
    base = get_model(args.model)
    if args.smoke:
        args.prompts, args.batch_size = 2, 2
        base = base.model_copy(update=dict(max_new_tokens=4))
    batch = args.batch_size or base.batch_size
    rows = select_instances(conditions=["ordered"], subset_k=2).sample(
        n=args.prompts, random_state=0
    )
    print(
        f"model {base.name} ({base.quantization}), {args.prompts} prompts, batch {batch} vs 1, "
        f"max_new_tokens={base.max_new_tokens}"
    )
    figures = {
        "model": base.name,
        "prompts": args.prompts,
        "batch": batch,
        "max_new_tokens": base.max_new_tokens,
    }
    for dtype in ("bfloat16", "float32"):
        backend = TransformersBackend(base.model_copy(update=dict(dtype=dtype)), batch)
        rendered = [backend.render(json.loads(m)) for m in rows["messages"]]
        batched, tok_b, _ = answers(backend, rendered, batch)
        single, tok_1, _ = answers(backend, rendered, 1)
        differ = differing(batched, single)
        print(
            f"  {dtype:>8}: {differ:>3} of {len(rendered)} answers differ ({100 * differ / len(rendered):5.1f}%); "
            f"tokens batch {batch}: {tok_b}, batch 1: {tok_1}"
        )
        figures[f"{dtype}_differ"] = differ
    record("batch_invariance", figures, vars(args))


if __name__ == "__main__":
    main()
