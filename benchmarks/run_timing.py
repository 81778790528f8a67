"""How long each shipped run file takes, and how much of it its judge judged.

    .venv/bin/python benchmarks/run_timing.py [NAME ...]
    .venv/bin/python benchmarks/run_timing.py --smoke [--results DIR]   # a minute or two

Runs `ocg report params/runs/NAME.yaml` (default: every file of params/runs/) in this checkout,
each from an empty outputs folder of its own (OCG_OUTPUTS: a temporary folder; the embedded
model's conversion is shared through OCG_MODEL_CACHE as `make install` left it), and times it
whole and step by step (the `[k/N] name` lines). For a run whose scoring names a judge, it also
counts the answers its judge judged, from the score sets' signatures (`n_judged` of the answers).
It records what `ocg verify` (run by `ocg report` last) found: values checked, broken, not re-derived.
Appends the figures to `benchmarks/results/runs.json` (docs/gpus.md shows the latest).
`--smoke` (a test of this script) times one run file: params/runs/smoke.yaml narrowed as
demo_timing.py's smoke narrows it (4 answers of 4 new tokens, coverage, one analysis).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import tempfile
from pathlib import Path

from demo_timing import smoke_run, steps, timed
from recording import add_smoke_options, record, use_results

ROOT = Path(__file__).resolve().parents[1]
RUNS = ROOT / "params" / "runs"


def judged(outputs: Path) -> dict | None:
    """The judge's counts over every score set of the run: None where no judge was asked."""
    answers = judged_ = 0
    for signature in sorted(outputs.rglob("scores/*/signature.json")):
        block = json.loads(signature.read_text()).get("judge") or {}
        if "n_judged" not in block:
            continue
        judged_ += int(block["n_judged"])
        answers += int(block["n_judged"]) + sum(int(n) for n in block.get("unjudged", {}).values())
    if not answers:
        return None
    return {"answers": answers, "judged": judged_, "judged_share": round(judged_ / answers, 4)}


def verified(outputs: Path) -> dict | None:
    """The report's own verdict (reports/*/verify.json, written by `ocg report`'s last step)."""
    found = sorted(outputs.rglob("reports/*/verify.json"))  # a run file's `outputs:` nests
    if not found:
        return None
    verdict = json.loads(found[0].read_text())
    return {
        "ok": verdict["ok"],
        "checked": verdict["checked"],
        "broken": len(verdict["broken"]),
        "not_rederived": len(verdict.get("not_rederived", [])),
    }


def time_run(name: str, folder: Path, run_file: Path | None = None) -> dict:
    """`ocg report` on params/runs/NAME.yaml (or `run_file`), its outputs under folder/NAME."""
    outputs = folder / name
    env = dict(os.environ, OCG_OUTPUTS=str(outputs))
    env.setdefault("OCG_MODEL_CACHE", str(ROOT / "outputs" / "models"))
    log = folder / f"{name}.log"
    run_file = run_file or RUNS / f"{name}.yaml"
    command = [str(ROOT / ".venv" / "bin" / "ocg"), "report", str(run_file)]
    total, lines = timed(command, ROOT, log, env=env)
    figures = {"total_s": round(total, 1), "steps_s": steps(lines, total)}
    counts = judged(outputs)
    if counts:
        figures["judge"] = counts
    figures["verify"] = verified(outputs)
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help="run files of params/runs/ (default: every one)")
    add_smoke_options(parser, "params/runs/smoke.yaml narrowed to 4 answers of 4 tokens")
    args = parser.parse_args()
    use_results(args)
    if args.smoke and args.names:
        parser.error("--smoke times its own narrowed run file: give no NAME")
    names = ["smoke"] if args.smoke else args.names or sorted(p.stem for p in RUNS.glob("*.yaml"))
    unknown = [n for n in names if not (RUNS / f"{n}.yaml").is_file()]
    if unknown:
        raise SystemExit(f"no run file params/runs/{unknown[0]}.yaml")
    folder = Path(tempfile.mkdtemp(prefix="ocg-runs-"))
    figures = {}
    for name in names:
        run_file = smoke_run(ROOT, folder / "smoke-run") if args.smoke else None
        figures[name] = time_run(name, folder, run_file)
        print(name, figures[name])
    record("runs", figures, {"runs": names, **({"smoke": True} if args.smoke else {})})
    shutil.rmtree(folder)


if __name__ == "__main__":
    main()
