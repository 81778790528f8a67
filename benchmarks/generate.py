"""Tokens/s of the embedded model's generation paths, each beside the path of c20dad0 (before the speed work), in one run.

    .venv/bin/python benchmarks/generate.py [--model smollm2-135m-instruct] [--prompts N]
        [--conditions ordered,...] [--variants batch48,...] [--previous-stack .venv-tf4/bin/python]
        [--rounds R] [--threads T] [--save FILE]
    .venv/bin/python benchmarks/generate.py --smoke [--results DIR] [--save FILE]   # seconds

The prompts are the demo's (params/runs/demo.yaml: 432 per model; `--conditions` keeps some of its
conditions, `--prompts` a seeded sample), each condition planned into batches as `ocg generate`
plans it (sorted by token length, ties by instance id). `today` is the path of c20dad0, before the speed work (the
entry at batch 16, dynamic KV cache, not compiled, sdpa attention); every other variant changes
one or two things of it: the batch size, the KV cache (`cache_implementation: static`),
torch.compile of the decoding step (transformers' CompileConfig, on a static cache), the
attention implementation (the entry's `attention: eager` instead of sdpa, at several batch
sizes), batch 1, or the entry as configured now (`entry`). Variants run round-
robin, `--rounds` times (medians printed), so load that comes and goes hits all alike. Useful tokens
= generated tokens up to and including the end-of-turn token. Printed per variant: tokens/s and its
ratio to today's, the generation time of the prompts and its ratio, and how many answers differ from
today's (a cache or compile variant at batch 16 runs the same batches: any difference is its
arithmetic, not batching). CPU seconds of the process are printed beside wall seconds: on a loaded
machine, with `--threads 1`, they are the steadier measure (two threads there spin on each other).

The path of c20dad0 also ran on transformers 4.57; the default stack is now transformers 5.
`--previous-stack PYTHON` (.venv-tf4's, `make install-tf4`) runs today's variant there too, in a
subprocess each round on the same prompts (`today@4.57.6`), and every ratio is then to it; `today`
is then today's settings on this stack."""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from recording import add_smoke_options, record, use_results

from ocg.config.model_registry import get_model
from ocg.generation import plan_batches, select_instances
from ocg.generation.backends.transformers_backend import TransformersBackend
from ocg.jobs.pipeline import load_run

# name: (batch size or None for the entry's, generation overrides, compile the decoding step,
# attention implementation or None for the entry's). today's path pins sdpa (what `auto` resolved
# to before entries could set it), so it stays the same whatever the entry now says.
VARIANTS = {
    "today": (16, {}, False, "sdpa"),
    "batch1": (1, {}, False, "sdpa"),
    "batch32": (32, {}, False, "sdpa"),
    "batch48": (48, {}, False, "sdpa"),
    "batch72": (72, {}, False, "sdpa"),
    "batch144": (144, {}, False, "sdpa"),
    "static16": (16, {"cache_implementation": "static"}, False, "sdpa"),
    "static48": (48, {"cache_implementation": "static"}, False, "sdpa"),
    "compiled16": (16, {"cache_implementation": "static"}, True, "sdpa"),
    "eager16": (16, {}, False, "eager"),
    "eager48": (48, {}, False, "eager"),
    "eager72": (72, {}, False, "eager"),
    "eager96": (96, {}, False, "eager"),
    "eager144": (144, {}, False, "eager"),
    "entry": (None, {}, False, None),
}


def demo_prompts(
    backend: TransformersBackend, n: int | None, conditions: list[str] | None
) -> tuple[list[str], list[tuple[str, str]]]:
    """Instance ids and (condition, rendered prompt) of the demo's instances (of `conditions`, if
    given), or a seeded sample of n of them."""
    run = load_run().file
    rows = select_instances(
        conditions=conditions or list(run.conditions),
        subset_k=run.subset_k,
        template_ids=run.template_ids,
    )
    if n:
        rows = rows.sample(n=min(n, len(rows)), random_state=0).sort_index()
    return list(rows["instance_id"]), [
        (c, backend.render(json.loads(m))) for c, m in zip(rows["condition"], rows["messages"])
    ]


def make_backend(base, name: str) -> TransformersBackend:
    batch, overrides, compiled, attention = VARIANTS[name]
    spec = base.model_copy(
        update=dict(
            batch_size=batch or base.batch_size,
            attention=attention or base.attention,
            generation_overrides={**base.generation_overrides, **overrides},
        )
    )
    backend = TransformersBackend(spec)
    backend.generate(
        ["<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n"]
    )  # loads the weights
    if compiled:
        from transformers import CompileConfig

        config = CompileConfig()
        config._compile_all_devices = True  # type: ignore[assignment]  # transformers compiles on CUDA only unless asked (a private switch, typed None)
        generation_config = backend.generation_config
        if generation_config is None:  # set when the weights loaded
            raise AttributeError("the backend's generation config is not set")
        generation_config.compile_config = config
    return backend


def measure(
    backend: TransformersBackend, ids: list[str], prompts: list[tuple[str, str]]
) -> tuple[list[str], int, float, float]:
    """Answers in prompt order, useful tokens, seconds and CPU seconds of this process; each
    condition planned on its own, by instance id as `ocg generate` plans it (today's batches are
    the demo's)."""
    answers: dict[int, str] = {}
    tokens = 0
    t0, cpu0 = time.perf_counter(), time.process_time()
    for cond in dict.fromkeys(c for c, _ in prompts):
        where = [i for i, (c, _) in enumerate(prompts) if c == cond]
        texts = [prompts[i][1] for i in where]
        for batch in plan_batches(
            [ids[i] for i in where], backend.prompt_lengths(texts), backend.batch_size
        ):
            out = backend.generate([texts[p] for p in batch])
            answers.update((where[p], r["raw"]) for p, r in zip(batch, out))
            tokens += sum(r["completion_tokens"] for r in out)
    return (
        [answers[i] for i in range(len(prompts))],
        tokens,
        time.perf_counter() - t0,
        time.process_time() - cpu0,
    )


def previous_stack(python: str, args: argparse.Namespace) -> tuple[str, list, int, float, float]:
    """Today's variant measured by `python` (the previous stack, e.g. .venv-tf4's transformers 4.57)
    on the same prompts: its transformers version and what `measure` returns there."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "today.json"
        cmd = [python, __file__, "--model", args.model, "--emit-today", str(out)]
        for flag in ("prompts", "conditions", "threads"):
            if getattr(args, flag):
                cmd += [f"--{flag}", str(getattr(args, flag))]
        cmd += ["--smoke"] * args.smoke
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        got = json.loads(out.read_text())
    return got["transformers"], got["answers"], got["tokens"], got["seconds"], got["cpu"]


def parse(argv: list[str] | None = None) -> tuple[argparse.Namespace, list[str]]:
    """The arguments (a smoke run's set), and the variants to run, today's first."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="smollm2-135m-instruct")
    parser.add_argument(
        "--prompts", type=int, default=None, help="a seeded sample of the demo's (default: all)"
    )
    parser.add_argument("--conditions", default=None, help="comma-separated (default: the demo's)")
    parser.add_argument(
        "--variants",
        default="today,batch48,batch144,static16,static48,entry",
        help=f"comma-separated, from {','.join(VARIANTS)}; today's is always run",
    )
    parser.add_argument(
        "--previous-stack",
        default=None,
        metavar="PYTHON",
        help="also run today's variant in this python (e.g. .venv-tf4/bin/python: the stack "
        "of c20dad0) each round; every ratio is then to it",
    )
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument(
        "--threads", type=int, default=None, help="torch.set_num_threads (default: torch's)"
    )
    parser.add_argument(
        "--save", default=None, help="write each variant's answers here (JSON, by instance id)"
    )
    parser.add_argument(
        "--emit-today", default=None, help=argparse.SUPPRESS
    )  # previous_stack's worker
    add_smoke_options(
        parser, "2 ordered prompts, variants today and batch1, 4 new tokens, one round"
    )
    args = parser.parse_args(argv)
    use_results(args)
    if args.smoke:
        args.prompts, args.conditions, args.variants, args.rounds = 2, "ordered", "batch1", 1
    names = ["today"] + [v for v in args.variants.split(",") if v and v != "today"]
    if args.emit_today:
        names = ["today"]
    unknown = sorted(set(names) - set(VARIANTS))
    if unknown:
        parser.error(f"unknown variant(s) {unknown}; known: {sorted(VARIANTS)}")
    return args, names


def main() -> None:
    args, names = parse()

    import torch
    import transformers

    if args.threads:
        torch.set_num_threads(args.threads)
    base = get_model(args.model)
    if args.smoke:
        base = base.model_copy(update=dict(max_new_tokens=4))
    backends = {name: make_backend(base, name) for name in names}
    ids, prompts = demo_prompts(
        backends["today"], args.prompts, args.conditions.split(",") if args.conditions else None
    )
    if args.emit_today:
        answers, tokens, seconds, cpu = measure(backends["today"], ids, prompts)
        Path(args.emit_today).write_text(
            json.dumps(
                {
                    "transformers": transformers.__version__,
                    "answers": answers,
                    "tokens": tokens,
                    "seconds": seconds,
                    "cpu": cpu,
                }
            )
        )
        return
    batch_of: dict[str, int | None] = {name: backends[name].batch_size for name in names}
    runs: dict[str, list] = {name: [] for name in names}
    baseline = "today"
    for r in range(args.rounds):
        if args.previous_stack:
            version, *measured = previous_stack(args.previous_stack, args)
            baseline = f"today@{version}"
            runs.setdefault(baseline, []).append(tuple(measured))
            batch_of[baseline] = VARIANTS["today"][0]
            print(
                f"  round {r + 1} {baseline}: {measured[2]:.1f} s, {measured[3]:.1f} CPU s",
                flush=True,
            )
        for name in names:
            runs[name].append(measure(backends[name], ids, prompts))
            print(
                f"  round {r + 1} {name}: {runs[name][-1][2]:.1f} s, {runs[name][-1][3]:.1f} CPU s",
                flush=True,
            )

    print(
        f"model {base.name} ({base.quantization}, {base.dtype}), {len(prompts)} of the demo's prompts, "
        f"max_new_tokens={base.max_new_tokens}, torch threads {torch.get_num_threads()}, "
        f"transformers {transformers.__version__}, {args.rounds} round(s), median; ratios to {baseline}"
    )
    base_answers, base_tokens = runs[baseline][0][:2]
    ref = [statistics.median(run[k] for run in runs[baseline]) for k in (2, 3)]
    figures: dict[str, Any] = {
        "model": base.name,
        "prompts": len(prompts),
        "baseline": baseline,
        "variants": {},
    }
    for name in runs:
        answers, tokens = runs[name][0][:2]
        seconds, cpu = (statistics.median(run[k] for run in runs[name]) for k in (2, 3))
        differ = sum(a != b for a, b in zip(answers, base_answers))
        print(
            f"  {name:>14} (batch {batch_of[name]:>3}): {tokens:>6} tokens, {tokens / seconds:7.1f} tokens/s "
            f"= {ref[0] / seconds * tokens / base_tokens:5.2f}x; {seconds:7.1f} s = "
            f"{ref[0] / seconds:5.2f}x faster; CPU {cpu:7.1f} s = {ref[1] / cpu:5.2f}x less; "
            f"{differ} of {len(answers)} answers differ from {baseline}'s"
        )
        figures["variants"][name] = {
            "batch": batch_of[name],
            "tokens": tokens,
            "seconds": round(seconds, 2),
            "cpu_s": round(cpu, 2),
            "tokens_per_s": round(tokens / seconds, 1),
            "speedup": round(ref[0] / seconds * tokens / base_tokens, 2),
            "differ_from_baseline": differ,
        }
    record("generate", figures, {k: v for k, v in vars(args).items() if k != "emit_today"})
    if args.save:
        with open(args.save, "w") as fh:
            json.dump({name: dict(zip(ids, runs[name][0][0])) for name in names}, fh, indent=1)


if __name__ == "__main__":
    main()
