"""What differs in the embedded model's answers between the two stacks (docs/developing.md, "Two stacks").

    .venv/bin/python benchmarks/stacks.py [--other .venv-tf4/bin/python] [--conditions ordered]
        [--prompts N] [--variants entry,batch1]
    .venv/bin/python benchmarks/stacks.py --smoke [--other PYTHON] [--results DIR]   # seconds

Runs benchmarks/generate.py (the demo's prompts, planned as `ocg generate` plans them) once in this
python (the default stack, transformers 5) and once in `--other` (the second stack, 4.57), each
saving its answers, then prints (and records in benchmarks/results/stacks.json) per variant how many answers differ between the stacks, a few of
them, and each stack's share of answers covering all concepts in the given order (ocg's coverage,
the answer extracted as the embedded entry extracts it). `today` (batch 16) always runs; `batch1`
shows what is left without padded batches. Generation speed is not compared here: generate.py
prints it per stack.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pandas as pd
from recording import add_smoke_options, record, use_results

HERE = Path(__file__).resolve().parent


def run_stack(python: str, args: argparse.Namespace, out: Path) -> tuple[str, dict]:
    """The transformers version of `python` and the answers generate.py saved there, by variant."""
    version = subprocess.run(
        [python, "-c", "import transformers; print(transformers.__version__)"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    cmd = [python, str(HERE / "generate.py"), "--variants", args.variants, "--save", str(out)]
    for flag in ("conditions", "prompts"):
        if getattr(args, flag):
            cmd += [f"--{flag}", str(getattr(args, flag))]
    if args.smoke:  # and its figures to a temporary folder of its own, not ours
        cmd += ["--smoke", "--results", str(out.parent / "generate-results")]
    print(f"transformers {version}: {' '.join(cmd)}", flush=True)
    subprocess.run(cmd, check=True)
    return version, json.loads(out.read_text())


def ordered_coverage(answers: dict[str, str]) -> float:
    """Share of answers covering every concept in the given order (the demo's matching rule)."""
    from ocg.generation import select_instances
    from ocg.generation.extraction import extract_answer
    from ocg.metrics.coverage import load_nlp, score_coverage

    rows = select_instances(subset_k=None).set_index("instance_id").loc[list(answers)]
    texts = pd.Series([extract_answer(raw)[0] for raw in answers.values()], index=rows.index)
    scored = score_coverage(texts, rows["concepts"], load_nlp(), pos_patterns=rows["pos_pattern"])
    return float(scored["in_order"].mean())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--other", default=".venv-tf4/bin/python", help="the second stack's python")
    parser.add_argument("--conditions", default="ordered")
    parser.add_argument("--prompts", type=int, default=None)
    parser.add_argument("--variants", default="entry,batch1")
    add_smoke_options(
        parser,
        "generate.py --smoke in each stack (2 ordered prompts, variants today and batch1, 4 new "
        "tokens); --other the same python gives two equal stacks",
    )
    args = parser.parse_args()
    use_results(args)
    if args.smoke:
        args.prompts = 2
    with tempfile.TemporaryDirectory() as tmp:
        stacks = [
            run_stack(sys.executable, args, Path(tmp) / "default.json"),
            run_stack(args.other, args, Path(tmp) / "other.json"),
        ]
    (v_default, default), (v_other, other) = stacks
    print(f"\nanswers on transformers {v_default} (default) vs {v_other} (second stack)")
    figures: dict[str, Any] = {"default_stack": v_default, "second_stack": v_other}
    for variant in default:
        ids = list(default[variant])
        differ = [i for i in ids if default[variant][i] != other[variant][i]]
        cov = [ordered_coverage(s[variant]) for s in (default, other)]
        print(
            f"  {variant:>8}: {len(differ)} of {len(ids)} answers differ; ordered coverage "
            f"{cov[0]:.3f} ({v_default}) vs {cov[1]:.3f} ({v_other})"
        )
        figures[variant] = {
            "answers": len(ids),
            "differ": len(differ),
            "ordered_coverage_default": round(cov[0], 3),
            "ordered_coverage_second": round(cov[1], 3),
        }
        for i in differ[:2]:
            print(
                f"    {i}: {default[variant][i]!r:.90}\n    {' ' * len(i)}  {other[variant][i]!r:.90}"
            )
    record("stacks", figures, vars(args))


if __name__ == "__main__":
    main()
