"""How many tests each tier holds and how long it takes, as `make test` runs it.

    .venv/bin/python benchmarks/test_tiers.py [--tiers fast,slow] [--workers 2]
    .venv/bin/python benchmarks/test_tiers.py --smoke [--results DIR]   # seconds: one small file

Counts the tests of each tier (`pytest --collect-only -m "not slow"`, then `-m slow`), then runs
the tiers `--tiers` names (default: none, the counts only) as the Makefile does: the fast tier in
`--workers` processes (pytest-xdist, `--dist loadgroup`), the slow one in one. For each tier run:
its wall time, pytest's outcome counts and its slowest tests (pytest's ten longest phases,
`--durations`). Appends the figures to `benchmarks/results/test_tiers.json` (docs/developing.md
shows the latest); the machine is shared, and the run records its load. `--smoke` (a test of this script) counts and runs the
fast tier of one small test file.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import time
from pathlib import Path

from recording import add_smoke_options, record, use_results

ROOT = Path(__file__).resolve().parents[1]
SMOKE_PATHS = ["tests/core/test_folder_variables.py", "tests/core/test_clock.py"]
MARKS = {"fast": "not slow", "slow": "slow"}
OUTCOMES = ("passed", "failed", "errors", "skipped", "xfailed", "xpassed", "deselected")
SLOWEST = re.compile(r"^\s*([\d.]+)s\s+(call|setup|teardown)\s+(\S+)", re.M)


def pytest(*args: str) -> tuple[float, str]:
    """pytest in a fresh process from the checkout's root: (wall seconds, its output)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}  # not a worker
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env=env,
    )
    return time.perf_counter() - start, done.stdout + done.stderr


def outcomes(summary: str) -> dict[str, int]:
    """pytest's last line (`1694 passed, 158 deselected in 700.1s`) as counts by outcome."""
    found = dict((word, int(n)) for n, word in re.findall(r"(\d+) (\w+)", summary))
    found["errors"] = found.pop("error", 0) + found.get("errors", 0)
    return {k: found.get(k, 0) for k in OUTCOMES}


def collected(mark: str, paths: list[str]) -> int:
    """How many tests the tier holds (`N/M tests collected` or `N tests collected`)."""
    _, out = pytest("--collect-only", "-q", "-m", mark, *paths)
    if re.search(r"^no tests collected", out, re.M):
        return 0
    counts = re.findall(r"(\d+)(?:/\d+)? tests? collected", out)
    if not counts:
        raise SystemExit(f"pytest --collect-only -m {mark!r} printed no count:\n{out[-2000:]}")
    return int(counts[-1])


def run_tier(tier: str, paths: list[str], workers: int) -> dict:
    """One tier as the Makefile runs it: wall time, outcome counts, the ten slowest tests."""
    parallel = ["-n", str(workers), "--dist", "loadgroup"] if tier == "fast" and workers else []
    wall, out = pytest(
        "-q", "-m", MARKS[tier], *parallel, "--durations=10", "--durations-min=0", *paths
    )
    lines = [line for line in out.splitlines() if line.strip()]
    slowest: dict[str, float] = {}
    for seconds, _, test in SLOWEST.findall(out):  # a test's setup, call and teardown summed
        slowest[test] = round(slowest.get(test, 0.0) + float(seconds), 2)
    return {
        "wall_s": round(wall, 1),
        "processes": workers if parallel else 1,
        **outcomes(lines[-1] if lines else ""),
        "slowest_s": slowest,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--tiers", default="", help="comma-separated tiers to run and time: fast, slow"
    )
    parser.add_argument("--workers", type=int, default=2, help="processes of the fast tier")
    add_smoke_options(parser, "one small test file, counted and its fast tier run")
    args = parser.parse_args()
    use_results(args)
    tiers = ["fast"] if args.smoke else [t for t in args.tiers.split(",") if t]
    unknown = [t for t in tiers if t not in MARKS]
    if unknown:
        parser.error(f"--tiers: unknown tier {unknown[0]!r}; expected fast or slow")
    paths = SMOKE_PATHS if args.smoke else []
    figures: dict = {"tests": {tier: collected(MARKS[tier], paths) for tier in MARKS}}
    for tier in tiers:
        figures[tier] = run_tier(tier, paths, args.workers)
        print(tier, figures[tier], flush=True)
    print("tests", figures["tests"])
    record("test_tiers", figures, vars(args))


if __name__ == "__main__":
    main()
