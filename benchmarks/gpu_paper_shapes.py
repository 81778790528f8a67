"""`ocg generate` against bare `model.generate` on random-weight models of the paper's shapes.

The one command a session with an H100/H200 runs (estimated at 5-9 minutes there, not yet measured;
no shape, quantization or variant starts past --budget-s, 420 s, and what was skipped is recorded):

    python benchmarks/gpu_paper_shapes.py --smollm2-files smollm2-files --variants all

where smollm2-files is SmolLM2's config and tokenizer (4 MB), written beforehand on a machine with the
embedded model by `python benchmarks/paper_shapes.py export smollm2-files` (without --smollm2-files, the
converted embedded model is used). Where the session also has SmolLM2's weights (a converted folder,
as gpu_check.py's --model-dir), add `--smollm2-dir DIR`: its real answers over the same number of
prompts at batch 32 and at `batch_size: auto` come first, with the share that differ (a row of its own). It needs torch, transformers and ocg's own imports (numpy, pandas,
pyarrow, requests, tqdm, pyyaml), bitsandbytes for the NF4 rows.

On the CPU, in well under a minute (tests/benchmarks/test_gpu_paper_shapes.py):

    python benchmarks/gpu_paper_shapes.py --tiny --prompts 24 --max-new-tokens 4 --out /tmp/gpu.json
    python benchmarks/gpu_paper_shapes.py --smoke [--out FILE]   # seconds: --tiny, 6 prompts, 2 tokens

For each shape (paper_shapes.py: Llama-3.2-1B's and Llama-3.1-8B's layers with SmolLM2's tokenizer and
chat template, random weights, built on the device and saved to a temp folder) and each quantization
(bf16; 4-bit NF4 where bitsandbytes and CUDA are there): `ocg generate` through ocg's own code path (a
models entry `id: <folder>`, condition `ordered`, >= 1,152 prompts = 8 concept sets x 24 orders x 6
templates, every answer forced to the budget with `min_new_tokens`), then bare `model.generate` on the
same rendered prompts in the same batches (same batch size; first pass, then a second over shapes
seen), then the --variants: `padded` (bare generate, prompts padded to a multiple of 8), `static`
(a static KV cache; transformers compiles the forward on CUDA), `generate_batch` (transformers'
continuous batching; on the first shape's bf16 row only, so the 8B rows fit the budget). Prints answers/s and tokens/s, ratio_to_bare = bare answers/s (second pass) /
ocg answers/s (ocg's generation time: the run card's seconds less the weights' load) and the projected
GPU-hours of the paper's sweeps (params/sweeps/paper*.yaml: their transformers models, all conditions
asked, 128 new tokens, as if every model had this shape); appends one run per row to --out
(benchmarks/results/gpu.json). Random answers are noise: what differs between paths is counted, not read.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import math
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the script runs where ocg may not import at its start
    from ocg.config.models_file import Quantization

sys.path.insert(
    0, str(Path(__file__).resolve().parent)
)  # paper_shapes.py beside it (it adds the project's code)

import paper_shapes  # noqa: E402
from paper_variants import VARIANTS, bare_answers, time_variant  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results" / "gpu.json"
PAPER_TOKENS = 128


def selection(prompts: int) -> dict:
    """ocg's selection of at least `prompts` ordered instances: whole concept sets (144 each), or
    fewer orders of one set."""
    if prompts >= 144:
        return {"subset_k": math.ceil(prompts / 144)}
    return {"subset_k": 1, "permutations": math.ceil(prompts / 6)}


def paper_prompts() -> int:
    """Prompts the paper's sweeps ask of their transformers models (API models use no GPU); a
    (model, condition) two sweeps share (paper-table4 reuses paper's `ordered`) counts once."""
    from ocg.config.model_registry import load_models
    from ocg.sweep.config import load_sweep

    models = load_models()
    prompts: dict[tuple[str, str], int] = {}
    for path in sorted((ROOT / "params" / "sweeps").glob("paper*.yaml")):
        sweep = load_sweep(path)  # `extends:` followed, defaults filled
        per_condition = (
            (sweep.file.subset_k or 192)
            * (sweep.file.permutations or 24)
            * len(sweep.file.template_ids or range(6))
        )
        for model in sweep.file.models:
            if models[model].backend == "transformers":
                for condition in sweep.file.conditions:
                    key = (model, condition)
                    prompts[key] = max(prompts.get(key, 0), per_condition)
    return sum(prompts.values())


def ocg_pass(
    folder: Path, name: str, args, quantization: Quantization, out: Path
) -> tuple[dict, list[dict]]:
    """One `ocg generate` run; its figures and records (in plan order)."""
    from ocg.config.models_file import TransformersEntry
    from ocg.core.layout import ModelGenerations
    from ocg.generation import GenerationStore, generate

    spec = TransformersEntry(
        name=name,
        id=str(folder),
        quantization=quantization,
        dtype=args.dtype,
        max_new_tokens=args.max_new_tokens,
        batch_size=args.batch,
        batch_check=0,
        generation_overrides={"min_new_tokens": args.max_new_tokens},
    )
    t0 = time.perf_counter()
    model_dir = generate(
        spec, conditions=["ordered"], out_dir=out, progress=False, **selection(args.prompts)
    )
    wall = time.perf_counter() - t0
    card = json.loads(ModelGenerations(model_dir).run_card.read_text())
    run = card["runs"][-1]
    seconds = run["seconds"] - card["backend"]["load_seconds"]
    records = sorted(
        GenerationStore(ModelGenerations(model_dir).store("ordered")).records(),
        key=lambda r: (r["batch_index"],),
    )
    return {
        "ocg_answers_per_s": round(run["written"] / seconds, 2),
        "ocg_tokens_per_s": round(run["new_tokens"] / seconds, 1),
        "ocg_seconds": round(seconds, 2),
        "ocg_wall_s": round(wall, 1),
        "load_seconds": card["backend"]["load_seconds"],
        "batch": card["settings"]["batch_size"],
        "working_batch": card["backend"]["working_batch_size"],
        "batch_size_auto": card["backend"].get("batch_size_auto"),
        "pad_multiple": card["backend"]["pad_multiple"],
        "prompts": run["written"],
        "device": card["backend"]["device"],
    }, records


def measure(shape: str, folder: Path, quantization: Quantization, args, work: Path) -> dict:
    from ocg.config.models_file import TransformersEntry
    from ocg.generation.backends.transformers_backend import TransformersBackend

    row, records = ocg_pass(
        folder, f"{shape}-{quantization}", args, quantization, work / f"ocg-{quantization}"
    )
    free_device()
    batches: dict[int, list[str]] = {}
    for r in records:
        batches.setdefault(r["batch_index"], []).append(r["prompt"])
    ocg_raw = [r["raw"] for r in records]
    backend = TransformersBackend(
        TransformersEntry(  # type: ignore[arg-type]  # an entry of the union ModelEntry names
            name="bare",
            id=str(folder),
            quantization=quantization,
            dtype=args.dtype,
            max_new_tokens=args.max_new_tokens,
        ),
        device=args.device,
    )
    backend._load_model()  # the same weights, loaded as ocg loads them
    plan = [batches[k] for k in sorted(batches)]
    passes = [bare_answers(backend, plan, args.max_new_tokens) for _ in range(2)]
    n, tokens = len(records), len(records) * args.max_new_tokens
    bare = n / passes[1]["seconds"]
    row.update(
        bare_first_answers_per_s=round(n / passes[0]["seconds"], 2),
        bare_answers_per_s=round(bare, 2),
        bare_tokens_per_s=round(tokens / passes[1]["seconds"], 1),
        ratio_to_bare=round(bare / row["ocg_answers_per_s"], 3),
        bare_differ_from_ocg=sum(a != b for a, b in zip(passes[1]["texts"], ocg_raw)),
    )
    row["variants"] = {}
    for v in args.variants if quantization == "none" and shape == args.shapes[0] else []:
        over = time.perf_counter() - args.started > args.budget_s
        row["variants"][v] = (
            {"skipped": "past --budget-s"}
            if over
            else time_variant(v, backend, plan, args.max_new_tokens, ocg_raw)
        )
    hours = paper_prompts() / (row["ocg_answers_per_s"] * args.max_new_tokens / PAPER_TOKENS) / 3600
    row["projected_gpu_hours_paper_sweeps"] = round(hours, 1)
    del backend
    free_device()
    return row


def free_device() -> None:
    """Drop the weights of the run before (ocg's batch_size auto reads the free memory)."""
    import gc

    import torch

    gc.collect()
    if torch.cuda.is_available():
        torch.cuda.empty_cache()


def smollm2_batch_32_vs_auto(args) -> dict:
    """SmolLM2's real answers at batch 32 and at `batch_size: auto` on this device, through ocg's backend
    (docs/METHODS.md, "What a larger batch changes"): the share that differ, and answers/s at each."""
    from ocg.config.model_registry import get_model
    from ocg.generation.backends.batch_auto import resolve_batch_size
    from ocg.generation.backends.transformers_backend import (
        TransformersBackend,
        TransformersPrompts,
    )
    from ocg.generation.invariance import answers, differing, sample_messages

    spec = get_model("smollm2-135m-instruct").model_copy(
        update={
            "id": str(Path(args.smollm2_dir).resolve()),
            "dtype": args.dtype,
            "quantization": "none",
            "batch_size": "auto",
        }
    )
    prompts = TransformersPrompts(spec)  # `auto` is a number before the backend is built
    rendered = [prompts.render(m) for m in sample_messages(args.prompts, seed=0)]
    with (
        tempfile.TemporaryDirectory() as tmp
    ):  # no run card there: the estimate, not a resumed size
        batch = resolve_batch_size(
            spec, prompts, dict(enumerate(rendered)), Path(tmp) / "card", device=args.device
        )
    backend = TransformersBackend(spec, batch, prompts=prompts, device=args.device)
    auto = backend.batch_size
    fixed, _, fixed_s = answers(backend, rendered, 32)
    chosen, tokens, auto_s = answers(backend, rendered, auto)
    n, differ = len(rendered), differing(fixed, chosen)
    free_device()
    model = backend.model
    if model is None:  # loaded by the first batch
        raise AttributeError("the backend's model is not loaded")
    return {
        "shape": "smollm2-135m-instruct (real weights)",
        "measure": "batch 32 vs auto",
        "dtype": args.dtype,
        "prompts": n,
        "auto_batch": auto,
        "differ": differ,
        "share_differ": round(differ / n, 4),
        "batch_32_answers_per_s": round(n / fixed_s, 2),
        "auto_answers_per_s": round(n / auto_s, 2),
        "auto_tokens": tokens,
        "device": str(model.device),
    }


def machine() -> dict:
    import torch
    import transformers
    from recording import provenance

    return {
        **provenance(),
        "gpu": torch.cuda.get_device_name(0) if torch.cuda.is_available() else None,
        "torch": torch.__version__,
        "transformers": transformers.__version__,
    }


def append(path: Path, runs: list[dict]) -> None:
    old = json.loads(path.read_text()) if path.exists() else []
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(old + runs, indent=1) + "\n")


def parse(argv):
    import torch

    p = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        epilog=__doc__.split("\n\n", 1)[1],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "--shapes", default="llama3.2-1b,llama3.1-8b", help=f"of {sorted(paper_shapes.SHAPES)}"
    )
    p.add_argument(
        "--tiny", action="store_true", help="the tiny shape on the CPU (a test of this script)"
    )
    p.add_argument("--prompts", type=int, default=1152)
    p.add_argument("--max-new-tokens", type=int, default=32)
    p.add_argument(
        "--batch", default="auto", help="ocg's batch size: auto (the entry default) or a number"
    )
    p.add_argument("--dtype", default="bfloat16")
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    p.add_argument("--no-4bit", action="store_true")
    p.add_argument("--variants", default="", help=f"comma-separated, of {list(VARIANTS)}, or all")
    p.add_argument(
        "--budget-s",
        type=float,
        default=420,
        help="no shape, quantization or variant starts past this many seconds",
    )
    p.add_argument(
        "--smollm2-files", help="SmolLM2's config and tokenizer files (paper_shapes.py export)"
    )
    p.add_argument(
        "--smollm2-dir",
        help="a converted SmolLM2 folder with its weights (gpu_check.py's --model-dir): "
        "its answers at batch 32 and at auto are compared, first",
    )
    p.add_argument("--out", type=Path, default=RESULTS)
    from recording import add_smoke_options, smoke_out

    add_smoke_options(
        p,
        "--tiny --prompts 6 --max-new-tokens 2 --variants padded,static (generate_batch "
        "allocates its paged cache for half a minute on a CPU: the slow test runs it)",
        results=False,
    )
    args = p.parse_args(argv)
    args.out = smoke_out(args, RESULTS, RESULTS.name)
    if args.smoke:
        args.tiny, args.prompts, args.max_new_tokens, args.variants = True, 6, 2, "padded,static"
    if args.tiny:
        args.shapes, args.device = "tiny", "cpu"
    args.shapes = args.shapes.split(",")
    args.batch = args.batch if args.batch == "auto" else int(args.batch)
    args.variants = (
        list(VARIANTS) if args.variants == "all" else [v for v in args.variants.split(",") if v]
    )
    if unknown := [v for v in args.variants if v not in VARIANTS] + [
        s for s in args.shapes if s not in paper_shapes.SHAPES
    ]:
        p.error(f"unknown variant or shape {unknown}")
    return args


def main(argv: list[str] | None = None) -> list[dict]:
    args = parse(argv)
    t0, runs = time.perf_counter(), []
    args.started = t0
    if args.smollm2_files:
        os.environ["SMOLLM2_FILES"] = str(Path(args.smollm2_files).resolve())
    if args.smollm2_dir:
        runs.append({**smollm2_batch_32_vs_auto(args), **machine()})
        print(json.dumps(runs[-1]), flush=True)
    four_bit = (
        args.device == "cuda" and not args.no_4bit and importlib.util.find_spec("bitsandbytes")
    )
    quants: list[Quantization] = ["none", "4bit"] if four_bit else ["none"]
    for shape in args.shapes:
        if time.perf_counter() - t0 > args.budget_s:
            runs.append({"shape": shape, "skipped": "past --budget-s", **machine()})
            continue
        with tempfile.TemporaryDirectory(prefix=f"ocg-{shape}-") as tmp:
            folder = paper_shapes.build(
                shape, Path(tmp) / "model", device=args.device, dtype=args.dtype
            )
            for quant in quants:
                if runs and time.perf_counter() - t0 > args.budget_s:
                    runs.append(
                        {
                            "shape": shape,
                            "quantization": quant,
                            "skipped": "past --budget-s",
                            **machine(),
                        }
                    )
                    continue
                row = {
                    "shape": shape,
                    "parameters": paper_shapes.parameters(shape),
                    "dtype": args.dtype,
                    "quantization": quant,
                    "max_new_tokens": args.max_new_tokens,
                    **measure(shape, folder, quant, args, Path(tmp)),
                    **machine(),
                }
                runs.append(row)
                print(
                    json.dumps({k: v for k, v in row.items() if k not in ("batch_size_auto",)}),
                    flush=True,
                )
    append(args.out, runs)
    print(f"\n{len(runs)} run(s) appended to {args.out}; {time.perf_counter() - t0:.0f} s")
    return runs


if __name__ == "__main__":
    main()
