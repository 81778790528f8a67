"""The subcommands' handlers: each takes the parsed arguments, calls what the notebooks call and
returns the exit status."""

from __future__ import annotations

import contextlib
import sys
from pathlib import Path

from ..core.errors import OcgInputError, shown


def build_data_command(args) -> int:
    from ..data import DEFAULT_CONDITIONS, build_dataset, load_dataset
    from ..data.build import DataInputs

    path = build_dataset(
        n_concepts=args.n,
        subset_k=args.subset_k,
        conditions=args.conditions or DEFAULT_CONDITIONS,
        out_dir=args.out,
        inputs=DataInputs(concept_sets=args.concept_sets, templates=args.templates),
    )
    _, manifest = load_dataset(path)
    counts = ", ".join(f"{c}={n:,}" for c, n in manifest["counts_per_condition"].items())
    print(f"{path}: {manifest['n_sets']} sets; {counts}; ids sha256 {manifest['ids_sha256']}")
    return 0


def run_notebook_command(args) -> int:
    """One notebook; `-p NAME=VALUE` only for names it declares, each value of its type (read as
    YAML). A failing cell is reported as `ocg report` reports one: notebook, cell, error."""
    import yaml

    from ..core.files import parse_yaml
    from ..core.layout import outputs
    from ..jobs.notebook_parameters import check_parameters, declared
    from ..jobs.notebook_runner import find_notebook
    from ..jobs.pipeline import StepFailed, run_step

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
                f"-p {name}", f"value {shown(text)} is not YAML ({getattr(exc, 'problem', exc)})"
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


def generate_command(args) -> int:
    from ..core.layout import ModelGenerations
    from ..generation.answer_store.completeness import card_samples, describe_tally
    from ..generation.run_generation import generate_request, run_generation
    from ..records import RunCard

    if args.top_p is not None and args.temperature is None:  # greedy decoding has no nucleus
        raise OcgInputError(
            "--top-p",
            f"got {args.top_p:g} without --temperature; nucleus sampling needs "
            "sampled decoding: add --temperature T, or leave --top-p out",
        )
    request = generate_request(
        args.model,
        conditions=args.conditions,  # None: the entry's default (a reference: original only)
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
    model_dir = run_generation(request)
    card = RunCard.read(ModelGenerations(model_dir).run_card)
    records = card.records or {}  # condition: its Tally
    print(
        f"{model_dir}: {describe_tally({c: records[c] for c in request.conditions}, card_samples(card), args.samples)}"
    )
    return 0


def score_command(args) -> int:
    import os

    if args.device == "cpu":  # before anything initialises CUDA
        os.environ["CUDA_VISIBLE_DEVICES"] = ""
    from ..config.requests import ScoringRequest
    from ..core.layout import ModelScores
    from ..generation.answer_store.completeness import describe
    from ..records import Signature
    from ..scoring import SCORING_FILE, check_metrics, load_scoring_config, score_all

    scoring = load_scoring_config(
        args.scoring_file or SCORING_FILE,
        {"perplexity_fallback": args.perplexity_fallback} if args.perplexity_fallback else None,
    )
    request = ScoringRequest(
        scoring=scoring,
        metrics=check_metrics(list(args.metrics or scoring.metrics), "--metrics"),
        generations_dir=None if args.generations is None else str(args.generations),
        models=args.models,
        scores_dir=None if args.out is None else str(args.out),
        redo=args.redo,
    )
    for path in score_all(request):
        print(f"{path}: {describe(Signature.read(ModelScores(path).signature).completeness)}")
    return 0


def sweep_command(args) -> int:
    from ..sweep import Driving, run_sweep

    if args.check:
        from ..sweep import check_sweep

        return check_sweep(args.file)
    return run_sweep(
        args.file,
        Driving(args.executor, wait=args.wait, dry_run=args.dry_run),
        status=args.status,
        task=args.task,
        analysis=args.analysis,
    )


def prefetch_command(args) -> int:
    from ..sweep.prefetch import prefetch

    try:
        return prefetch(args.file, list_only=args.list)
    except RuntimeError as exc:  # the hub's answer (offline, unknown or gated repository)
        print(f"ocg: error: {exc}", file=sys.stderr)
        return 1


def repair_command(args) -> int:
    from ..generation.answer_store.repair import repair

    return repair(Path(args.path))


def compare_reports_command(args) -> int:
    from ..analysis.compare import compare_reports

    problems = compare_reports(args.a, args.b, args.tolerance)
    for line in problems:
        print(line)
    print(
        f"{'identical' if not problems else f'{len(problems)} difference(s)'}: tables of {args.a} and {args.b}"
    )
    if problems:
        from ..analysis.report_differences import explain

        why = explain(args.a, args.b)
        print("Why they may differ (A: the first report, B: the second):")
        for line in why or [
            "nothing the score sets' signatures or the reports' commits record differs "
            "(the answers, their order, or the machine's arithmetic?)"
        ]:
            print(f"  {line}")
    return 1 if problems else 0


def _report_of(given: Path) -> Path:
    """A report folder as given, or the one a run file's report is written to."""
    if not given.is_file():
        return given
    from ..core.layout import Outputs, outputs
    from ..jobs.pipeline import load_run

    run = load_run(given)
    root = Outputs(Path(run.file.outputs)) if run.file.outputs else outputs()
    return root.report(run.file.name).folder


def compare_command(args) -> int:
    from ..analysis.versus import compare_models, pick_model
    from ..core.layout import ComparisonFolder, outputs
    from ..core.lock import exclusive
    from ..site.comparison_page import reference_note, write_comparison

    folder_a, folder_b = _report_of(args.run_a), _report_of(args.run_b)
    model_a = pick_model(folder_a, args.model_a, "--model-a")
    model_b = pick_model(folder_b, args.model_b, "--model-b")
    folder = ComparisonFolder.of(
        outputs().comparisons, folder_a.name, model_a, folder_b.name, model_b
    ).folder
    try:
        with exclusive(folder, doing="is writing this comparison"):  # a second one: refused
            c = compare_models(folder_a, folder_b, model_a=model_a, model_b=model_b)
            page, _ = write_comparison(c, folder)
    except BaseException:
        if {p.name for p in folder.iterdir()} <= {".lock"}:  # refused before writing: no trace
            (folder / ".lock").unlink(missing_ok=True)
            folder.rmdir()
            with contextlib.suppress(OSError):  # the comparisons folder, if this made it
                folder.parent.rmdir()
        raise
    print(
        f"{c.a.model} ({c.a.name}, {c.a.n:,} instances) vs {c.b.model} ({c.b.name}, "
        f"{c.b.n:,} instances): {c.shared:,} shared; {len(c.tests)} paired tests, "
        f"{c.n_differ:,} answers whose order verdicts differ\n{page}"
    )
    if (note := reference_note(c)) is not None:
        print(f"note: {note}")
    return 0


def convert_command(args) -> int:
    """`ocg convert`: every embedded model converted now (make install runs it), each folder named;
    an error is one line, as any command's."""
    from ..weights.embedded import convert_all

    convert_all(again=args.again)
    return 0


def verify_command(args) -> int:
    """`ocg verify`: one summary line and 0, one line per broken invariant and 1, or 2 (with one
    line) for a folder that is no finished report."""
    from ..site.verify import NotAReport, verify

    try:
        verdict = verify(_report_of(args.report), comparisons=args.comparisons)
    except NotAReport as exc:
        print(f"ocg verify: {exc}", file=sys.stderr)
        return 2
    for line in verdict.lines():
        print(line)
    return 0 if verdict.ok else 1


def import_command(args) -> int:
    """`ocg import`: a harness's log into the store (ocg/harness/importing.py)."""
    from ..core.names import check_name
    from ..harness.importing import import_log

    check_name("--name", args.name)
    done = import_log(args.log, args.name)
    print(f"{done.model_dir}: {done.answers:,} answers imported from {args.log}")
    print(f"report: ocg report {done.run_file}")
    return 0


def lm_eval_path_command(args) -> int:
    from ..harness.lm_eval_task import TASK_FOLDER

    print(TASK_FOLDER)
    return 0


def models_command(args) -> int:
    from ..config.model_registry import load_models

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


def report_command(args) -> int:
    """The main job: every notebook (ocg/jobs/plan.py), as a run file says (default: the demo)."""
    from ..jobs.pipeline import plan_check, run_report

    return plan_check(args.run_file) if args.check else run_report(args.run_file)
