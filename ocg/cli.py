"""The `ocg` command line: the same functions the notebooks call."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .errors import OcgInputError


def _build_data(args) -> int:
    from .data import build_dataset, load_dataset

    path = build_dataset(n_concepts=args.n, subset_k=args.subset_k, conditions=args.conditions,
                         out_dir=args.out)
    _, manifest = load_dataset(path)
    counts = ", ".join(f"{c}={n:,}" for c, n in manifest["counts_per_condition"].items())
    print(f"{path}: {manifest['n_sets']} sets; {counts}; ids sha256 {manifest['ids_sha256']}")
    return 0


def _run_notebook(args) -> int:
    from .notebooks import run_notebook

    params = {}
    for item in args.param or []:
        key, _, value = item.partition("=")
        import yaml
        params[key] = yaml.safe_load(value)
    print(run_notebook(args.notebook, params, out_dir=args.out))
    return 0


def _demo(args) -> int:
    """The main job: for now, the full dataset built by notebook 00 under papermill."""
    from .notebooks import run_notebook
    from .paths import outputs_dir

    print("ocg demo: building the Ordered CommonGen dataset (notebooks/00_build_data.ipynb)")
    executed = run_notebook("00_build_data", {"n_concepts": 4})
    print(f"executed notebook: {executed}\n              html: {executed.with_suffix('.html')}")
    print(f"dataset:           {outputs_dir() / 'data' / 'n4'}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="ocg", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("build-data", help="build the instance table (as notebook 00 does)")
    p.add_argument("--n", type=int, default=4, help="concepts per set: 4 (paper) or 5")
    p.add_argument("--subset-k", type=int, default=None,
                   help="deterministic subset of k concept sets covering N/V compositions")
    p.add_argument("--conditions", nargs="+", default=["original", "ordered", "ordered_one_shot"])
    p.add_argument("--out", type=Path, default=None, help="output directory")
    p.set_defaults(func=_build_data)

    p = sub.add_parser("run-notebook", help="execute a numbered notebook with papermill")
    p.add_argument("notebook", help="e.g. 00_build_data")
    p.add_argument("-p", "--param", action="append", help="KEY=VALUE (VALUE read as YAML)")
    p.add_argument("--out", type=Path, default=None, help="directory for the executed copy")
    p.set_defaults(func=_run_notebook)

    p = sub.add_parser("demo", help="the main job on the embedded default model")
    p.set_defaults(func=_demo)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except OcgInputError as exc:
        print(f"ocg: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
