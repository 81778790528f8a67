"""Do the demo's answers and verdicts hold on another CPU family's kernels? This CPU's own kernels
vs the AVX2 ones an AVX2-only CPU runs, side by side in one run.

    .venv/bin/python benchmarks/cpu_kernels.py [--templates 0] [--subset-k 2]
    .venv/bin/python benchmarks/cpu_kernels.py --smoke [--results DIR]   # a minute: 2 prompts, both kernels

Each of the demo's entries (params/runs/demo.yaml: full weights and 4-bit, float32, greedy)
answers the demo's `original` and `ordered` prompts of the templates given, once with the kernels
torch, MKL and oneDNN pick on this CPU and once capped at AVX2 (ATEN_CPU_CAPABILITY=avx2,
MKL_ENABLE_INSTRUCTIONS=AVX2, ONEDNN_MAX_CPU_ISA=AVX2: what they pick on an AVX2-only CPU), each
in a fresh process (the caps act at load). Printed and recorded per entry: answers that differ,
coverage w/ order of each condition and the verdict "does asking for order help?" (the sign of
ordered - original) under each. An emulation: the same CPU's cores, the other family's kernels
(its float sums in the other order), not a second machine.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from recording import add_smoke_options, record, use_results

DEMO_ENTRIES = ("smollm2-135m-instruct", "smollm2-135m-instruct-4bit")
CONDITIONS = ("original", "ordered")
AVX2_CAPS = {
    "ATEN_CPU_CAPABILITY": "avx2",
    "MKL_ENABLE_INSTRUCTIONS": "AVX2",
    "ONEDNN_MAX_CPU_ISA": "AVX2",
}
KERNELS = {"native": {}, "avx2": AVX2_CAPS}


def answer(
    entry: str, templates: list[int], subset_k: int, prompts: int | None, tokens: int | None
):
    """This process's greedy answers of `entry` to the demo's prompts, in instance order, with the
    CPU block its results would record."""
    from ocg.config.model_registry import get_model
    from ocg.core.provenance import cpu_kernels
    from ocg.generation import select_instances
    from ocg.generation.backends.transformers_backend import TransformersBackend
    from ocg.generation.invariance import answers

    spec = get_model(entry)
    if tokens:
        spec = spec.model_copy(update=dict(max_new_tokens=tokens))
    rows = select_instances(conditions=list(CONDITIONS), subset_k=subset_k, template_ids=templates)
    if prompts:  # a smoke run: as many of each condition
        rows = rows.sort_values("instance_id").groupby("condition").head(max(1, prompts // 2))
    backend = TransformersBackend(spec, spec.batch_size)
    rendered = [backend.render(json.loads(m)) for m in rows["messages"]]
    raw, tokens_out, seconds = answers(backend, rendered, spec.batch_size)
    return {
        "cpu": cpu_kernels(),
        "rows": [
            {"instance_id": i, "condition": c, "concepts": list(k), "pos_pattern": p, "answer": a}
            for i, c, k, p, a in zip(
                rows["instance_id"], rows["condition"], rows["concepts"], rows["pos_pattern"], raw
            )
        ],
        "seconds": round(seconds, 1),
    }


def coverage_w_order(rows: list[dict]) -> dict[str, float]:
    """Per condition, the share of answers holding every concept in the order given (ocg's check,
    as notebook 01 flags answers), in percent."""
    import pandas as pd

    from ocg.metrics.listcopy import flag_texts

    frame = pd.DataFrame(rows)
    flags = flag_texts(frame["answer"], frame["concepts"], frame["pos_pattern"])
    frame["in_order"] = flags["in_order"].astype(bool)
    return {c: round(100 * float(g.in_order.mean()), 2) for c, g in frame.groupby("condition")}


def _same_sign(a: float | None, b: float | None) -> bool | None:
    """Whether two Δs give the same verdict (helps, hurts, no change); None without both."""
    if a is None or b is None:
        return None
    return (a > 0) - (a < 0) == (b > 0) - (b < 0)


def _child(args: argparse.Namespace, kernels: str, out: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in AVX2_CAPS}
    env.update(KERNELS[kernels])
    cmd = [sys.executable, __file__, "--child", str(out), "--entry", args.entry_now]
    cmd += ["--templates", ",".join(map(str, args.templates)), "--subset-k", str(args.subset_k)]
    cmd += ["--prompts", str(args.prompts or 0), "--tokens", str(args.tokens or 0)]
    subprocess.run(cmd, env=env, check=True)
    return json.loads(out.read_text())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entries", default=",".join(DEMO_ENTRIES))
    parser.add_argument("--templates", default="0", help="template ids, comma-separated")
    parser.add_argument("--subset-k", type=int, default=2, help="concept sets (the demo's 2)")
    parser.add_argument("--prompts", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--tokens", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--entry", default=None, help=argparse.SUPPRESS)
    add_smoke_options(parser, "the first entry, one prompt of each condition, 4 new tokens")
    args = parser.parse_args()
    args.templates = [int(t) for t in str(args.templates).split(",")]
    if args.child:
        done = answer(args.entry, args.templates, args.subset_k, args.prompts, args.tokens)
        Path(args.child).write_text(json.dumps(done))
        return
    use_results(args)
    entries = args.entries.split(",")
    if args.smoke:
        entries, args.prompts, args.tokens = entries[:1], 2, 4
    figures: dict = {"templates": args.templates, "subset_k": args.subset_k, "entries": {}}
    with tempfile.TemporaryDirectory() as tmp:
        for entry in entries:
            args.entry_now = entry
            runs = {k: _child(args, k, Path(tmp) / f"{entry}-{k}.json") for k in KERNELS}
            native, avx2 = runs["native"]["rows"], runs["avx2"]["rows"]
            differ = [a["instance_id"] for a, b in zip(native, avx2) if a["answer"] != b["answer"]]
            cov = {k: coverage_w_order(r["rows"]) for k, r in runs.items()}
            verdict = {
                k: (
                    round(c["ordered"] - c["original"], 2)
                    if {"ordered", "original"} <= set(c)
                    else None
                )
                for k, c in cov.items()
            }
            figures["entries"][entry] = {
                "answers": len(native),
                "differ": len(differ),
                "differing_instances": differ[:20],
                "coverage_w_order": cov,
                "ordered_minus_original": verdict,
                "verdict_same_sign": _same_sign(verdict["native"], verdict["avx2"]),
                "kernels": {k: r["cpu"]["torch_kernels"] for k, r in runs.items()},
                "caps": {k: r["cpu"]["kernel_caps"] for k, r in runs.items()},
                "seconds": {k: r["seconds"] for k, r in runs.items()},
            }
            f = figures["entries"][entry]
            print(
                f"{entry}: {f['differ']} of {f['answers']} answers differ between kernels "
                f"{f['kernels']['native']} and {f['kernels']['avx2']}; w/ order ordered - original: "
                f"{verdict['native']} vs {verdict['avx2']}"
            )
    figures["vector_extensions"] = runs["native"]["cpu"]["vector_extensions"]
    record("cpu_kernels", figures, {k: v for k, v in vars(args).items() if k != "entry_now"})


if __name__ == "__main__":
    main()
