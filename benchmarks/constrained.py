"""Generation time of `ordered_constrained` relative to `ordered`, side by side in one run.

    .venv/bin/python benchmarks/constrained.py [--model smollm2-135m-instruct] [--prompts 32]
    .venv/bin/python benchmarks/constrained.py --smoke [--results DIR]   # seconds: 2 prompts

The same `ordered` prompts, decoded freely and under each instance's grammar (xgrammar, the
ordered_constrained condition; docs/METHODS.md, "Forcing the order"), batch by batch in turn (free,
then forced, for each batch of the plan), so load on a shared machine falls on both alike. The
forced time includes compiling each grammar (shown apart too). Prints seconds per prompt and per
generated token, and the ratios forced / free.
"""

from __future__ import annotations

import argparse
import json
import time

from recording import add_smoke_options, record, use_results

from ocg.config.model_registry import get_model
from ocg.generation import plan_batches, select_instances
from ocg.generation.backends.constrained import library_version
from ocg.generation.backends.transformers_backend import TransformersBackend
from ocg.generation.ordered_grammar import ordered_regex


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--model",
        default="smollm2-135m-instruct",
        help="a transformers entry; its batch size is used",
    )
    parser.add_argument(
        "--prompts",
        type=int,
        default=32,
        help="ordered prompts of 2 concept sets, drawn with seed 0",
    )
    add_smoke_options(parser, "2 prompts, 4 new tokens, free and forced")
    args = parser.parse_args()
    use_results(args)
    spec = get_model(args.model)
    if args.smoke:
        args.prompts = 2
        spec = spec.model_copy(update=dict(max_new_tokens=4))
    rows = select_instances(conditions=["ordered"], subset_k=2).sample(
        n=args.prompts, random_state=0
    )
    regexes = [ordered_regex(list(c), p) for c, p in zip(rows["concepts"], rows["pos_pattern"])]
    free_ids = [f"free-{i}" for i in range(len(rows))]
    forced_ids = [f"forced-{i}" for i in range(len(rows))]
    backend = TransformersBackend(spec, grammars=dict(zip(forced_ids, regexes)))
    batch = backend.batch_size
    rendered = [backend.render(json.loads(m)) for m in rows["messages"]]
    backend.generate(rendered[:2], instance_ids=free_ids[:2])  # warm-up (loads the model)
    backend.generate(rendered[:1], instance_ids=forced_ids[:1])  # and the grammar compiler
    t0 = time.perf_counter()
    for r in regexes:
        backend._grammar_compiler.compile(r)
    compile_s = time.perf_counter() - t0
    backend._grammar_compiler._compiled.clear()  # the forced runs below compile again, timed with them

    totals = {"free": [0.0, 0, 0], "forced": [0.0, 0, 0]}  # seconds, tokens, cut by the budget
    for positions in plan_batches(free_ids, backend.prompt_lengths(rendered), batch):
        for name, ids in (("free", free_ids), ("forced", forced_ids)):
            t = time.perf_counter()
            out = backend.generate(
                [rendered[p] for p in positions], instance_ids=[ids[p] for p in positions]
            )
            totals[name][0] += time.perf_counter() - t
            totals[name][1] += sum(r["completion_tokens"] for r in out)
            totals[name][2] += sum(r["finish_reason"] == "length" for r in out)
    print(
        f"model {spec.name} ({spec.quantization}, {spec.dtype}) on {backend.card().device}, batch {batch}, "
        f"max_new_tokens={spec.max_new_tokens}, xgrammar {library_version()}, {len(rendered)} prompts"
    )
    for name, (seconds, tokens, cut) in totals.items():
        print(
            f"  {name:>6}: {seconds:7.2f} s, {tokens:5d} tokens, {cut} cut by the budget: "
            f"{seconds / len(rendered):.3f} s/prompt, {1000 * seconds / tokens:.1f} ms/token"
        )
    print(f"  compiling the {len(regexes)} grammars alone: {compile_s:.2f} s")
    (fs, ft, _), (cs, ct, _) = totals["free"], totals["forced"]
    print(f"ratio forced/free: {cs / fs:.2f}x per prompt, {(cs / ct) / (fs / ft):.2f}x per token")
    record(
        "constrained",
        {
            "model": spec.name,
            "prompts": len(rendered),
            "batch": batch,
            "free_s": round(fs, 2),
            "forced_s": round(cs, 2),
            "free_tokens": ft,
            "forced_tokens": ct,
            "forced_over_free_per_prompt": round(cs / fs, 2),
            "forced_over_free_per_token": round((cs / ct) / (fs / ft), 2),
            "compile_s": round(compile_s, 2),
        },
        vars(args),
    )


if __name__ == "__main__":
    main()
