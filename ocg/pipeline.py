"""The main job: the numbered notebooks run in order with papermill, as a run file says.

00 builds the data, 01 generates with each model, 02 scores, 03-09 analyse. Every executed
notebook and its HTML land in outputs/reports/<run name>/, with tables/, figures/ and an
index.html linking them. A failing notebook stops the run; its partial executed copy (with
the error shown) is kept, and the failing notebook, cell and error are printed.
"""

from __future__ import annotations

import sys
from pathlib import Path


from .errors import OcgInputError
from .io import read_yaml
from .notebooks import run_notebook
from .paths import PARAMS_DIR, outputs_dir

DEMO_RUN = PARAMS_DIR / "runs" / "demo.yaml"
RUN_KEYS = {"name": str, "n_concepts": int, "subset_k": (int, type(None)), "conditions": list,
            "models": list, "table7_pairs": (dict, type(None)), "table7_note": str}
OPTIONAL = {"table7_pairs": None, "table7_note": ""}
ANALYSES = ["03_main_results", "04_pos_patterns", "05_templates", "06_priming",
            "07_reasoning_models", "08_concept_difficulty", "09_cases"]


def load_run(path: str | Path = DEMO_RUN) -> dict:
    path = Path(path)
    raw = read_yaml(path)
    if not isinstance(raw, dict):
        raise OcgInputError(str(path), "expected a mapping")
    extra = sorted(set(raw) - set(RUN_KEYS))
    if extra:
        raise OcgInputError(f"{path}: {extra[0]}", f"unknown key; known: {sorted(RUN_KEYS)}")
    run = {**OPTIONAL, **raw}
    for key, kind in RUN_KEYS.items():
        if key not in run:
            raise OcgInputError(f"{path}: {key}", "missing")
        if not isinstance(run[key], kind):
            raise OcgInputError(f"{path}: {key}", f"got {run[key]!r}")
    from .models import get_model
    for model in run["models"]:
        get_model(model)  # an unknown name fails before any work
    return run


def steps(run: dict, report_dir: Path) -> list[tuple[str, dict, str]]:
    """(notebook, parameters, name of the executed copy) in order."""
    out = outputs_dir()
    dataset = out / "data" / f"n{run['n_concepts']}"
    plan = [("00_build_data", {"n_concepts": run["n_concepts"]}, "00_build_data")]
    for model in run["models"]:
        plan.append(("01_generate", {"model": model, "conditions": run["conditions"],
                                     "subset_k": run["subset_k"], "dataset": str(dataset)},
                     f"01_generate-{model}"))
    plan.append(("02_score", {"models": run["models"]}, "02_score"))
    common = {"models": run["models"], "out_dir": str(report_dir)}
    for nb in ANALYSES:
        params = dict(common)
        if nb == "07_reasoning_models" and run["table7_pairs"]:
            params.update(pairs=run["table7_pairs"], pairs_note=run["table7_note"])
        plan.append((nb, params, nb))
    return plan


class StepFailed(RuntimeError):
    """A notebook of the pipeline failed; the message names notebook, cell, error and copy."""


def run_step(notebook: str, params: dict, report_dir: Path, name: str) -> Path:
    import papermill

    try:
        return run_notebook(notebook, params, out_dir=report_dir, out_name=name, progress=True)
    except papermill.PapermillExecutionError as exc:
        partial = report_dir / f"{name}.ipynb"
        raise StepFailed(f"notebook {notebook} failed in cell {exc.exec_count} (cell index "
                         f"{exc.cell_index}): {exc.ename}: {exc.evalue}\n"
                         f"     partial executed copy, error shown: {partial}\n"
                         f"     rendered: {partial.with_suffix('.html')}") from exc


def run_pipeline(run_file: str | Path | None = None) -> int:
    from .analysis.report import write_index

    run = load_run(run_file or DEMO_RUN)
    report_dir = outputs_dir() / "reports" / run["name"]
    report_dir.mkdir(parents=True, exist_ok=True)
    pages = []
    plan = steps(run, report_dir)
    for i, (notebook, params, name) in enumerate(plan, start=1):
        print(f"[{i}/{len(plan)}] {name}", flush=True)
        try:
            executed = run_step(notebook, params, report_dir, name)
        except StepFailed as exc:
            print(f"\nocg: {exc}", file=sys.stderr)
            return 1
        pages.append((name, executed.with_suffix(".html").name))
    index = write_index(report_dir, f"ocg report: {run['name']}", pages, notes=[
        f"models: {', '.join(run['models'])}; conditions: {', '.join(run['conditions'])}; "
        f"concept sets: {run['subset_k'] or 'all'} of {run['n_concepts']} concepts"])
    print(f"\nreport: {index}")
    return 0
