"""The `ocg` command line: the same functions the notebooks call."""

from __future__ import annotations

import argparse
import errno
import sys
from pathlib import Path

from .errors import OcgInputError, shown
from .frames import DEFAULT_N_CONCEPTS, N_CONCEPTS_TEXT


def _build_data(args) -> int:
    from .data import DEFAULT_CONDITIONS, build_dataset, load_dataset

    path = build_dataset(
        n_concepts=args.n,
        subset_k=args.subset_k,
        conditions=args.conditions or DEFAULT_CONDITIONS,
        out_dir=args.out,
    )
    _, manifest = load_dataset(path)
    counts = ", ".join(f"{c}={n:,}" for c, n in manifest["counts_per_condition"].items())
    print(f"{path}: {manifest['n_sets']} sets; {counts}; ids sha256 {manifest['ids_sha256']}")
    return 0


def _run_notebook(args) -> int:
    """One notebook; `-p NAME=VALUE` only for names it declares, each value of its type (read as
    YAML). A failing cell is reported as `ocg report` reports one: notebook, cell, error."""
    import yaml

    from .io import parse_yaml
    from .layout import outputs
    from .notebook_parameters import check_parameters, declared
    from .notebook_runner import find_notebook
    from .pipeline import StepFailed, run_step

    source = find_notebook(args.notebook)
    params = {}
    for item in args.param or []:
        name, eq, text = item.partition("=")
        if not eq:
            raise OcgInputError(
                f"-p {name}", "expected NAME=VALUE (an empty value is written NAME=null)"
            )
        try:
            params[name] = parse_yaml(text)
        except yaml.YAMLError as exc:
            raise OcgInputError(
                f"-p {name}", f"value {shown(text)} is not YAML ({exc.problem})"
            ) from None
    check_parameters(source, params, "-p ")
    out_dir = args.out or outputs().notebooks
    if "reports_dir" in declared(source) and "reports_dir" not in params:
        params["reports_dir"] = str(
            Path(out_dir).resolve()
        )  # beside the executed copy (the kernel runs elsewhere)
    try:
        executed = run_step(str(source), params, out_dir, source.stem)
    except StepFailed as exc:
        print(f"ocg: {exc}", file=sys.stderr)
        return 1
    print(executed)
    return 0


def _generate(args) -> int:
    from .data import GENERATE_CONDITIONS
    from .generation import generate
    from .generation.completeness import card_samples, describe_tally
    from .layout import ModelGenerations
    from .records import RunCard

    if args.top_p is not None and args.temperature is None:  # greedy decoding has no nucleus
        raise OcgInputError(
            "--top-p",
            f"got {args.top_p:g} without --temperature; nucleus sampling needs "
            "sampled decoding: add --temperature T, or leave --top-p out",
        )
    conditions = args.conditions or GENERATE_CONDITIONS
    model_dir = generate(
        args.model,
        conditions=conditions,
        subset_k=args.subset_k,
        template_ids=args.templates,
        dataset=args.dataset,
        out_dir=args.out,
        batch_size=args.batch_size,
        models_file=args.models_file,
        permutations=args.permutations,
        samples=args.samples,
        sampling=None
        if args.temperature is None
        else {"temperature": args.temperature, "top_p": 1.0 if args.top_p is None else args.top_p},
    )
    card = RunCard.read(ModelGenerations(model_dir).run_card)
    print(
        f"{model_dir}: {describe_tally({c: card.records[c] for c in conditions}, card_samples(card), args.samples)}"
    )
    return 0


def _score(args) -> int:
    import os

    if args.device == "cpu":  # before anything initialises CUDA
        os.environ["CUDA_VISIBLE_DEVICES"] = ""
    from .generation.completeness import describe
    from .layout import ModelScores
    from .records import Signature
    from .scoring import score_all

    overrides = (
        {"perplexity_fallback": args.perplexity_fallback} if args.perplexity_fallback else {}
    )
    for path in score_all(
        args.generations,
        models=args.models,
        metrics=args.metrics,
        redo=args.redo,
        out_dir=args.out,
        **overrides,
        **({"config_file": args.scoring_file} if args.scoring_file else {}),
    ):
        print(f"{path}: {describe(Signature.read(ModelScores(path).signature).completeness)}")
    return 0


def _sweep(args) -> int:
    from .sweep import Driving, run_sweep

    return run_sweep(
        args.file,
        Driving(args.executor, wait=args.wait, dry_run=args.dry_run),
        status=args.status,
        task=args.task,
        analysis=args.analysis,
    )


def _prefetch(args) -> int:
    from .sweep.prefetch import prefetch

    try:
        return prefetch(args.file, list_only=args.list)
    except RuntimeError as exc:  # the hub's answer (offline, unknown or gated repository)
        print(f"ocg: error: {exc}", file=sys.stderr)
        return 1


def _repair(args) -> int:
    from .generation.repair import repair

    return repair(Path(args.path))


def _compare_reports(args) -> int:
    from .analysis.compare import compare_reports

    problems = compare_reports(args.a, args.b, args.tolerance)
    for line in problems:
        print(line)
    print(
        f"{'identical' if not problems else f'{len(problems)} difference(s)'}: tables of {args.a} and {args.b}"
    )
    return 1 if problems else 0


def _models(args) -> int:
    from .models import load_models

    row = (
        "{:32s} {:12s} {:12s} {:8s} {:>10} {:>5} {}"  # what each entry runs as, defaults filled in
    )
    print(row.format("name", "backend", "quantization", "dtype", "max_tokens", "batch", "id"))
    for spec in load_models(args.models_file).values():
        print(
            row.format(
                spec.name,
                spec.backend,
                spec.quantization,
                spec.dtype,
                spec.max_new_tokens,
                spec.batch_size,
                spec.id,
            )
        )
    return 0


def _report(args) -> int:
    """The main job: every notebook (ocg/plan.py), as a run file says (default: the demo)."""
    from .pipeline import run_report

    return run_report(args.run_file)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="ocg", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("build-data", help="build the instance table (as notebook 00 does)")
    p.add_argument(
        "--n",
        type=int,
        default=DEFAULT_N_CONCEPTS,
        help=f"concepts per set: {N_CONCEPTS_TEXT} (the paper: {DEFAULT_N_CONCEPTS})",
    )
    p.add_argument(
        "--subset-k",
        type=int,
        default=None,
        help="deterministic subset of k concept sets covering N/V compositions",
    )
    p.add_argument(
        "--conditions", nargs="+", default=None, help="default: ocg.data.DEFAULT_CONDITIONS"
    )
    p.add_argument("--out", type=Path, default=None, help="output directory")
    p.set_defaults(func=_build_data)

    from .models import MODELS_FILE

    MODELS_FILE_HELP = (
        "a models file (default params/models.yaml); relative: to the working directory, as "
        'every path given on the command line (README, "Where relative paths point")'
    )
    p = sub.add_parser("generate", help="generate answers with one model (as notebook 01 does)")
    p.add_argument("model", help="an entry of params/models.yaml")
    p.add_argument(
        "--conditions", nargs="+", default=None, help="default: ocg.data.GENERATE_CONDITIONS"
    )
    p.add_argument("--subset-k", type=int, default=None)
    p.add_argument(
        "--permutations",
        type=int,
        default=None,
        help="a seeded sample of m permutations per concept set (default all)",
    )
    p.add_argument(
        "--templates", type=int, nargs="+", default=None, help="template ids (default all)"
    )
    p.add_argument("--dataset", type=Path, default=None, help="a built dataset directory")
    p.add_argument("--batch-size", type=int, default=None)
    p.add_argument("--out", type=Path, default=None, help="default outputs/generations")
    p.add_argument("--models-file", type=Path, default=MODELS_FILE, help=MODELS_FILE_HELP)
    p.add_argument(
        "--samples", type=int, default=1, help="answers per instance (more than one: --temperature)"
    )
    p.add_argument(
        "--temperature",
        type=float,
        default=None,
        help="sample at this temperature (default greedy)",
    )
    p.add_argument(
        "--top-p",
        type=float,
        default=None,
        help="nucleus sampling's p, with --temperature (default 1)",
    )
    p.set_defaults(func=_generate)

    p = sub.add_parser("score", help="score generations (as notebook 02 does)")
    p.add_argument("--generations", type=Path, default=None, help="default outputs/generations")
    p.add_argument("--models", nargs="+", default=None, help="default: every model there")
    p.add_argument("--metrics", nargs="+", default=None, help="default: params/scoring.yaml")
    p.add_argument("--redo", action="store_true", help="recompute even if up to date")
    p.add_argument(
        "--scoring-file",
        type=Path,
        default=None,
        help="scoring settings (matching rule, models...); default params/scoring.yaml",
    )
    p.add_argument("--out", type=Path, default=None, help="default outputs/scores")
    p.add_argument(
        "--perplexity-fallback",
        default=None,
        metavar="MODEL",
        help="perplexity model where GPT2-XL cannot be loaded, e.g. embedded:smollm2-135m-instruct "
        "(as the demo's run file chooses: models scored alike share a table)",
    )
    p.add_argument(
        "--device",
        choices=["auto", "cpu"],
        default="auto",
        help="auto: BLEURT and perplexity on a GPU when there is one",
    )
    p.set_defaults(func=_score)

    from .notebook_names import ALL_SPAN, ANALYSES_SPAN, BUILD_DATA, MODEL_NOTEBOOKS, span

    p = sub.add_parser(
        "sweep",
        help=f"many models: notebooks {span(MODEL_NOTEBOOKS)} per model, then "
        f"{ANALYSES_SPAN} (local or Slurm)",
    )
    p.add_argument("file", type=Path, help="a sweep file, e.g. params/sweeps/paper.yaml")
    p.add_argument("--executor", choices=["local", "slurm"], default="local")
    p.add_argument("--wait", action="store_true", help="slurm: follow the jobs to the end")
    p.add_argument(
        "--status",
        action="store_true",
        help="per model: done / running / partial / failed / missing",
    )
    p.add_argument(
        "--dry-run",
        action="store_true",
        help="slurm: print every sbatch line, write the scripts and "
        "slurm/manifest.dry-run.json, submit nothing",
    )
    p.add_argument(
        "--task", default=None, help=argparse.SUPPRESS
    )  # one model's task (both executors)
    p.add_argument("--analysis", action="store_true", help=argparse.SUPPRESS)
    p.set_defaults(func=_sweep)

    p = sub.add_parser(
        "prefetch", help="download the hub files a run or sweep file needs (on a login node)"
    )
    p.add_argument("file", type=Path, help="a sweep or run file, e.g. params/sweeps/paper.yaml")
    p.add_argument(
        "--list", action="store_true", help="print repositories, files and sizes; download nothing"
    )
    p.set_defaults(func=_prefetch)

    p = sub.add_parser(
        "repair", help="rewrite a generations directory keeping the first record of each id"
    )
    p.add_argument("path", help="a model's generations directory, or one .jsonl file")
    p.set_defaults(func=_repair)

    p = sub.add_parser("compare-reports", help="do two report folders hold the same tables?")
    p.add_argument("a", type=Path)
    p.add_argument("b", type=Path)
    p.add_argument("--tolerance", type=float, default=1e-9)
    p.set_defaults(func=_compare_reports)

    p = sub.add_parser("models", help="list the entries of params/models.yaml")
    p.add_argument("--models-file", type=Path, default=MODELS_FILE, help=MODELS_FILE_HELP)
    p.set_defaults(func=_models)

    p = sub.add_parser("run-notebook", help="execute a numbered notebook with papermill")
    p.add_argument("notebook", help=f"e.g. {BUILD_DATA}")
    p.add_argument("-p", "--param", action="append", help="KEY=VALUE (VALUE read as YAML)")
    p.add_argument("--out", type=Path, default=None, help="directory for the executed copy")
    p.set_defaults(func=_run_notebook)

    for name, text in (
        ("demo", "the main job on the embedded default model (params/runs/demo.yaml)"),
        ("report", f"run notebooks {ALL_SPAN} as a run file says and write an index.html"),
    ):
        p = sub.add_parser(name, help=text)
        p.add_argument(
            "run_file", nargs="?", type=Path, default=None, help="default params/runs/demo.yaml"
        )
        p.set_defaults(func=_report)
    return parser


# What a failing file operation means for the user, by errno (anything else: the system's words).
_OS_HINTS = {
    errno.ENOSPC: "no space left on the device; free some and rerun (finished work is kept and resumed)",
    errno.EROFS: "read-only file system; point --out or OCG_OUTPUTS at a writable directory",
    errno.EACCES: "permission denied; point --out or OCG_OUTPUTS at a writable directory",
    errno.ENOTDIR: "a file stands where a directory is needed; check --out and OCG_OUTPUTS",
    errno.EEXIST: "a file stands where a directory is needed; check --out and OCG_OUTPUTS",
}


def _os_error(exc: OSError) -> tuple[str, int]:
    """The message and exit status for a failed file operation: the path and what it means."""
    problem = _OS_HINTS.get(exc.errno) or exc.strerror or str(exc)
    message = problem if exc.filename is None else f"{exc.filename}: {problem}"
    return message, 2 if exc.errno in (errno.ENOTDIR, errno.EEXIST) else 1


def main(argv: list[str] | None = None) -> int:
    """Run a command. Bad input exits 2, a fault (disk, server, network) 1, Ctrl-C 130, SIGTERM 143: each with
    one `ocg: error:` line, never a traceback (docs/METHODS.md, "What ocg refuses")."""
    args = build_parser().parse_args(argv)
    from .errors import raise_on_sigterm, stopped_line
    from .generation.api_backend import ApiError
    from .generation.constrained import NotForced
    from .generation.server import ServerError
    from .paths import settle_folder_variables
    from .sweep.slurm import SbatchError

    try:
        raise_on_sigterm()  # each layer marks what it was doing on the way out, as on Ctrl-C
        settle_folder_variables()  # before any kernel, task or job inherits them
        return args.func(args)
    except OcgInputError as exc:
        print(f"ocg: error: {exc}", file=sys.stderr)
        return 2
    except (
        ApiError,
        ServerError,
        NotForced,
        SbatchError,
    ) as exc:  # the server's (or sbatch's) own words are the whole story
        print(f"ocg: error: {exc}", file=sys.stderr)
        return 1
    except OSError as exc:
        message, code = _os_error(exc)
        print(f"ocg: error: {message}", file=sys.stderr)
        return code
    except (
        KeyboardInterrupt
    ) as exc:  # Ctrl-C: 130; SIGTERM (Terminated): 143, as a shell reports them
        line, code = stopped_line(exc, args.command)
        print(line, file=sys.stderr)
        return code


if __name__ == "__main__":
    sys.exit(main())
