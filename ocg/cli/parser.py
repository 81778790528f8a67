"""The `ocg` command line's arguments: one subparser per command, each naming its handler."""

from __future__ import annotations

import argparse
from pathlib import Path

from ..core.frames import DEFAULT_N_CONCEPTS, N_CONCEPTS_TEXT
from ..core.paths import CONCEPT_SETS_FILE, TEMPLATES_FILE
from . import commands

DESCRIPTION = "The `ocg` command line: the same functions the notebooks call."


def _flag(p: argparse.ArgumentParser, name: str, help: str) -> None:
    """An option that is off unless given (`name`: "--redo")."""
    p.add_argument(name, action="store_true", help=help)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="ocg", description=DESCRIPTION)
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
    p.add_argument(
        "--concept-sets",
        metavar="FILE",
        default=CONCEPT_SETS_FILE,
        help="the concept sets to build from (JSON lines; default: the paper's, %(default)s)",
    )
    p.add_argument(
        "--templates",
        metavar="FILE",
        default=TEMPLATES_FILE,
        help="the prompt templates to build from (default: %(default)s)",
    )
    p.set_defaults(func=commands.build_data_command)

    from ..config.model_registry import MODELS_FILE

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
    p.set_defaults(func=commands.generate_command)

    p = sub.add_parser("score", help="score generations (as notebook 02 does)")
    p.add_argument("--generations", type=Path, default=None, help="default outputs/generations")
    p.add_argument("--models", nargs="+", default=None, help="default: every model there")
    p.add_argument("--metrics", nargs="+", default=None, help="default: params/scoring.yaml")
    _flag(p, "--redo", "recompute even if up to date")
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
    p.set_defaults(func=commands.score_command)

    from ..core.notebook_names import ALL_SPAN, ANALYSES_SPAN, BUILD_DATA, MODEL_NOTEBOOKS, span

    p = sub.add_parser(
        "sweep",
        help=f"many models: notebooks {span(MODEL_NOTEBOOKS)} per model, then "
        f"{ANALYSES_SPAN} (local or Slurm)",
    )
    p.add_argument("file", type=Path, help="a sweep file, e.g. params/sweeps/paper.yaml")
    p.add_argument("--executor", choices=["local", "slurm"], default="local")
    _flag(p, "--wait", "slurm: follow the jobs to the end")
    _flag(p, "--status", "per model: done / running / partial / failed / missing")
    _flag(
        p,
        "--dry-run",
        "slurm: print every sbatch line, write the scripts and "
        "slurm/manifest.dry-run.json, submit nothing",
    )
    _flag(
        p,
        "--check",
        "load the sweep file and check the plan of every model's task and of the analyses; "
        "print the steps, write nothing",
    )
    p.add_argument(
        "--task", default=None, help=argparse.SUPPRESS
    )  # one model's task (both executors)
    _flag(p, "--analysis", argparse.SUPPRESS)
    p.set_defaults(func=commands.sweep_command)

    p = sub.add_parser(
        "prefetch", help="download the hub files a run or sweep file needs (on a login node)"
    )
    p.add_argument("file", type=Path, help="a sweep or run file, e.g. params/sweeps/paper.yaml")
    _flag(p, "--list", "print repositories, files and sizes; download nothing")
    p.set_defaults(func=commands.prefetch_command)

    p = sub.add_parser(
        "repair", help="rewrite a generations directory keeping the first record of each id"
    )
    p.add_argument("path", help="a model's generations directory, or one .jsonl file")
    p.set_defaults(func=commands.repair_command)

    p = sub.add_parser("compare-reports", help="do two report folders hold the same tables?")
    p.add_argument("a", type=Path)
    p.add_argument("b", type=Path)
    p.add_argument("--tolerance", type=float, default=1e-9)
    p.set_defaults(func=commands.compare_reports_command)

    p = sub.add_parser(
        "compare",
        help="one model against another on the instances both answered: paired tests, a page "
        "and JSON in outputs/comparisons/<A>~<model A>~vs~<B>~<model B>/",
    )
    for side in ("a", "b"):
        p.add_argument(
            f"run_{side}",
            type=Path,
            metavar=f"RUN_{side.upper()}",
            help="a report folder (outputs/reports/<name>) or the run file that made it",
        )
    for side in ("a", "b"):
        p.add_argument(
            f"--model-{side}",
            default=None,
            help=f"the model of RUN_{side.upper()} (needed where its report holds several)",
        )
    p.set_defaults(func=commands.compare_command)

    p = sub.add_parser(
        "verify",
        help="check a finished report against itself: page, CSVs, LaTeX and results.json agree, "
        "exact p attainable, Holm within families, no reference entry in a model count, every "
        "null explained (exit 0, 1: broken, 2: no finished report)",
    )
    p.add_argument(
        "report", type=Path, help="a report folder (outputs/reports/<name>) or its run file"
    )
    p.add_argument(
        "--comparisons",
        type=Path,
        default=None,
        help="a comparison.json, or a folder of comparison folders (ocg compare writes them), to "
        "check too",
    )
    p.set_defaults(func=commands.verify_command)

    p = sub.add_parser(
        "import",
        help="read an inspect eval log or lm-eval samples (JSONL) into ocg's answer store; "
        "`ocg report` on the run file it prints builds the report (docs/harnesses.md)",
    )
    p.add_argument(
        "log", type=Path, help="an inspect log (.eval, .json) or lm-eval samples (.jsonl)"
    )
    p.add_argument("--name", required=True, help="the model's name in ocg's stores and report")
    p.set_defaults(func=commands.import_command)

    p = sub.add_parser(
        "lm-eval-path", help="print the folder of ocg's lm-eval task (for lm_eval --include_path)"
    )
    p.set_defaults(func=commands.lm_eval_path_command)

    p = sub.add_parser(
        "convert",
        help="convert the embedded models to transformers folders now (make install runs it)",
    )
    _flag(
        p,
        "--again",
        "convert anew and replace a folder already converted (one changed since, or "
        "one an earlier ocg converted without recording its files)",
    )
    p.set_defaults(func=commands.convert_command)

    p = sub.add_parser("models", help="list the entries of params/models.yaml")
    p.add_argument("--models-file", type=Path, default=MODELS_FILE, help=MODELS_FILE_HELP)
    p.set_defaults(func=commands.models_command)

    p = sub.add_parser("run-notebook", help="execute a numbered notebook with papermill")
    p.add_argument("notebook", help=f"e.g. {BUILD_DATA}")
    p.add_argument("-p", "--param", action="append", help="KEY=VALUE (VALUE read as YAML)")
    p.add_argument("--out", type=Path, default=None, help="directory for the executed copy")
    p.set_defaults(func=commands.run_notebook_command)

    for name, text in (
        ("demo", "the main job on the embedded default model (params/runs/demo.yaml)"),
        ("report", f"run notebooks {ALL_SPAN} as a run file says and write an index.html"),
    ):
        p = sub.add_parser(name, help=text)
        p.add_argument(
            "run_file", nargs="?", type=Path, default=None, help="default params/runs/demo.yaml"
        )
        _flag(
            p,
            "--check",
            "load the run file and check its plan (every notebook's parameters and requests) "
            "as a report does before any work; print the steps, write nothing",
        )
        p.set_defaults(func=commands.report_command)
    return parser
