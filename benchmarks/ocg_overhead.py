"""Where `ocg generate` spends time outside `model.generate`, shown on the CPU with a tiny random model;
writes benchmarks/results/ocg_overhead.json.

    python benchmarks/ocg_overhead.py            # about a minute on an idle 2-core machine
    python benchmarks/ocg_overhead.py --smoke [--out FILE]   # seconds: 2 texts, 6 prompts, 1 set

1. Host syncs per decoding step (torch.profiler: aten::_local_scalar_dense, each a wait for the
   device on a GPU), ocg's backend against bare model.generate on the same batch: equal means ocg's
   stopping, logits processors and progress code add none.
2. Host work per batch in a real `ocg generate` run (every function ocg calls between generate
   calls, timed): its share of the run, and per batch.
3. The changes made for it, old and new side by side in this one run: a record's row fetched by
   DataFrame.iloc (old) or from itertuples (new); the transformers-version probe uncached (old) or
   cached (new).
4. Padded shapes: distinct padded prompt lengths over the plan of 1,152 prompts (8 concept sets x
   24 orders x 6 templates, batch 32) unpadded and padded to multiples of 8 (pad_multiple, CUDA's
   default), 16, 32 and 64, and the share of padding tokens each adds. A GPU pays a first-call cost per new shape (3.8x on
   the H200: README); the CPU does not, so pad_multiple is 1 there and the CPU's answers are unchanged.
"""

from __future__ import annotations

import argparse
import functools
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(
    0, str(Path(__file__).resolve().parent)
)  # paper_shapes.py beside it (it adds the project's code)

import paper_shapes  # noqa: E402
from recording import add_smoke_options, provenance, smoke_out  # noqa: E402

OUT = Path(__file__).resolve().parent / "results" / "ocg_overhead.json"
TOKENS = 8


def syncs(fn) -> int:
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU]) as prof:
        fn()
    return sum(e.count for e in prof.key_averages() if e.key == "aten::_local_scalar_dense")


def host_syncs(backend, texts: list[str]) -> dict:
    import torch

    model, tok = backend.model, backend.tokenizer
    enc = tok(texts, return_tensors="pt", padding=True, add_special_tokens=False)

    def bare():
        with torch.inference_mode():
            model.generate(
                **enc,
                max_new_tokens=TOKENS,
                min_new_tokens=TOKENS,
                do_sample=False,
                pad_token_id=tok.pad_token_id,
            )

    backend.generate(texts)
    return {
        "steps": TOKENS,
        "ocg_per_step": syncs(lambda: backend.generate(texts)) / TOKENS,
        "bare_per_step": syncs(bare) / TOKENS,
    }


def spans_of_a_run(spec, out: Path, permutations: int | None = None) -> dict:
    """One `ocg generate` run (one concept set; `permutations` of its orders, None: all), seconds
    inside model.generate and outside it."""
    import transformers

    from ocg.core.layout import ModelGenerations
    from ocg.generation import generate

    spent: dict[str, float] = {"generate": 0.0, "calls": 0}
    original = transformers.GenerationMixin.generate

    @functools.wraps(original)
    def timed(*a, **k):
        t0 = time.perf_counter()
        try:
            return original(*a, **k)
        finally:
            spent["generate"] += time.perf_counter() - t0
            spent["calls"] += 1

    transformers.GenerationMixin.generate = timed  # type: ignore[method-assign]  # timed for one run
    try:
        model_dir = generate(
            spec,
            conditions=["ordered"],
            subset_k=1,
            permutations=permutations,
            out_dir=out,
            progress=False,
        )
    finally:
        transformers.GenerationMixin.generate = original  # type: ignore[method-assign]  # restored
    card = json.loads(ModelGenerations(model_dir).run_card.read_text())
    run, load = card["runs"][-1], card["backend"]["load_seconds"]
    outside = run["seconds"] - load - spent["generate"]
    return {
        "answers": run["written"],
        "batches": spent["calls"],
        "batch_size": card["settings"]["batch_size"],
        "run_seconds_less_load": round(run["seconds"] - load, 3),
        "in_model_generate_s": round(spent["generate"], 3),
        "outside_per_batch_ms": round(1000 * outside / max(spent["calls"], 1), 2),
        "outside_share": round(outside / (run["seconds"] - load), 4),
    }


def best_of(fn, reps: int = 5) -> float:
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def side_by_side(subset_k: int = 2, reps: int = 5) -> dict:
    from ocg.generation.backends.transformers_loading import merges_model_defaults
    from ocg.generation.selection import select_instances

    rows = select_instances(None, ["ordered"], subset_k=subset_k)
    fields = ("instance_id", "template_id", "set_id", "perm_index", "concepts", "pos_pattern")

    def old():
        for p in range(len(rows)):
            row = rows.iloc[p]
            [getattr(row, f) for f in fields]

    def new():
        table = list(rows.itertuples(index=False))
        for p in range(len(rows)):
            [getattr(table[p], f) for f in fields]

    o, n = best_of(old, reps), best_of(new, reps)
    probe_old = (
        best_of(lambda: [merges_model_defaults.__wrapped__() for _ in range(100)], reps) / 100
    )
    probe_new = best_of(lambda: [merges_model_defaults() for _ in range(100)], reps) / 100
    return {
        "record_rows": {
            "rows": len(rows),
            "iloc_ms_per_row": round(1000 * o / len(rows), 4),
            "itertuples_ms_per_row": round(1000 * n / len(rows), 4),
            "ratio_old_to_new": round(o / n, 1),
        },
        "version_probe": {
            "uncached_ms": round(1000 * probe_old, 4),
            "cached_ms": round(1000 * probe_new, 5),
            "ratio_old_to_new": round(probe_old / probe_new, 1),
        },
    }


def padded_shapes(backend, subset_k: int = 8) -> dict:
    from ocg.generation.invariance import plan_batches
    from ocg.generation.selection import select_instances

    rows = select_instances(None, ["ordered"], subset_k=subset_k)
    import json as _json

    texts = [backend.render(_json.loads(m)) for m in rows["messages"]]
    lengths = backend.prompt_lengths(texts)
    plan = plan_batches(list(rows["instance_id"]), lengths, 32)
    out: dict[str, int | dict] = {"prompts": len(texts), "batches": len(plan)}
    for multiple in (1, 8, 16, 32, 64):
        padded = [-(-max(lengths[p] for p in batch) // multiple) * multiple for batch in plan]
        pad = sum(w * len(b) - sum(lengths[p] for p in b) for w, b in zip(padded, plan))
        out[f"multiple_{multiple}"] = {
            "distinct_padded_lengths": len(set(padded)),
            "padding_share": round(pad / sum(w * len(b) for w, b in zip(padded, plan)), 4),
        }
    return out


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=OUT)
    smoke = (
        "2 texts for the syncs, a run of 6 prompts, one concept set side by side (1 repeat) "
        "and for the padded shapes"
    )
    add_smoke_options(parser, smoke, results=False)
    args = parser.parse_args(argv)
    out = smoke_out(args, OUT, OUT.name)
    texts_n, permutations, subset_k, reps = (2, 1, 1, 1) if args.smoke else (8, None, None, 5)

    import torch

    from ocg.config.models_file import TransformersEntry
    from ocg.generation.backends.transformers_backend import TransformersBackend

    with tempfile.TemporaryDirectory(prefix="ocg-overhead-") as tmp:
        folder = paper_shapes.build("tiny", Path(tmp) / "model", dtype="float32")
        spec = TransformersEntry(
            name="tiny",
            id=str(folder),
            quantization="none",
            dtype="float32",
            max_new_tokens=TOKENS,
            batch_size=32,
            batch_check=0,
            generation_overrides={"min_new_tokens": TOKENS},
        )
        backend = TransformersBackend(spec, device="cpu")  # type: ignore[arg-type]  # a variant of ModelEntry
        texts = [
            backend.render([{"role": "user", "content": f"Write a sentence with dog, ball {i}."}])
            for i in range(texts_n)
        ]
        backend.generate(texts[:1])
        result = {
            "model": "tiny random Llama (paper_shapes.py), float32, CPU",
            "torch_threads": torch.get_num_threads(),
            "host_syncs": host_syncs(backend, texts),
            "per_batch": spans_of_a_run(spec.model_copy(), Path(tmp) / "out", permutations),
            "side_by_side": side_by_side(subset_k or 2, reps),
            "padded_shapes": padded_shapes(backend, subset_k or 8),
            **({"smoke": smoke} if args.smoke else {}),
            **provenance(),
        }
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps(result, indent=1))
    return result


if __name__ == "__main__":
    main()
