"""Which notebook runs with which parameters: one plan for `ocg report` and both sweep executors.

A run file (params/runs/) and a sweep file (params/sweeps/) name the same things: models, the
models file, conditions, concept sets, templates, metrics and scoring settings. Every analysis
gets exactly the run's values for the parameters its parameters cell declares (read from the
notebook, ocg/jobs/notebook_parameters.py), so a sweep with its own models file reaches the analyses
too. The notebooks' names are spelled in ocg/core/notebook_names.py.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..config.checked_run import CheckedRun
from ..config.models_file import REFERENCE_CONDITION
from ..config.requests import GenerateRequest, ScoringRequest, StepRequest
from ..core.notebook_names import ANALYSES, BUILD_DATA, GENERATE, SCORE
from ..data.templates import DEFAULT_CONDITIONS
from .notebook_parameters import check_parameters, declared
from .notebook_runner import find_notebook


@dataclass(frozen=True)
class Dirs:
    """Where one run's notebooks read and write."""

    generations: Path
    scores: Path
    reports: Path
    dataset: Path | None = None
    # where the analyses read scores: the report's own pinned sets (ocg/scoring/pinned.py); None: `scores`
    analysis_scores: Path | None = None


def _analysis_values(run: CheckedRun, dirs: Dirs, models: list[str]) -> dict:
    """What a run offers every analysis; each takes those its parameters cell declares."""
    file = run.file
    values = {
        "scores_dir": str(dirs.analysis_scores or dirs.scores),
        "models": list(models),
        "allow_incomplete": file.allow_incomplete,
        "models_file": file.models_file,
        "reports_dir": str(dirs.reports),
    }
    if file.table7_pairs:
        values.update(pairs=dict(file.table7_pairs), pairs_note=file.table7_note)
    return values


def notebook_params(
    notebook: str, run: CheckedRun, dirs: Dirs, models: list[str]
) -> dict | StepRequest:
    """What `notebook` gets for these models under this run or sweep: generation and scoring a
    request (GenerateRequest, ScoringRequest: the checked entry and scoring settings, passed to
    the notebook as a JSON file by ocg/jobs/notebook_runner.py), the others plain values
    (papermill writes them into the notebook as literals)."""
    file = run.file
    if (
        notebook == BUILD_DATA
    ):  # the default conditions, and any other the run asks (ordered_constrained)
        extra = [c for c in file.conditions if c not in DEFAULT_CONDITIONS]
        return {
            "n_concepts": file.n_concepts,
            **({"conditions": [*DEFAULT_CONDITIONS, *extra]} if extra else {}),
        }
    if notebook == GENERATE:
        (model,) = models
        entry = run.entries[model]
        return GenerateRequest(
            model=entry,
            # a reference answers only the condition without an order (docs/METHODS.md)
            conditions=[REFERENCE_CONDITION] if entry.reference else list(file.conditions),
            subset_k=file.subset_k,
            permutations=file.permutations or None,
            template_ids=None if file.template_ids is None else list(file.template_ids),
            generations_dir=str(dirs.generations),
            dataset=str(dirs.dataset) if dirs.dataset else None,
            samples=file.samples,
            sampling=file.sampling,
            batch_check=file.batch_check,
        )
    if notebook == SCORE:
        return ScoringRequest(
            scoring=run.scoring,
            metrics=list(run.scoring.metrics if file.metrics is None else file.metrics),
            generations_dir=str(dirs.generations),
            models=list(models),
            scores_dir=str(dirs.scores),
        )
    if notebook not in ANALYSES:
        raise ValueError(f"no plan for notebook {notebook!r}")
    wanted = declared(find_notebook(notebook))
    return {k: v for k, v in _analysis_values(run, dirs, models).items() if k in wanted}


def model_steps(run: CheckedRun, dirs: Dirs, model: str) -> list[tuple[str, dict | StepRequest]]:
    """(notebook, parameters) of one model's sweep task, in order."""
    return [(nb, notebook_params(nb, run, dirs, [model])) for nb in run.file.notebooks]


def analysis_steps(
    run: CheckedRun, dirs: Dirs, models: list[str]
) -> list[tuple[str, dict | StepRequest, str]]:
    """(notebook, parameters, name of the executed copy) of the analyses over `models`."""
    return [(nb, notebook_params(nb, run, dirs, models), nb) for nb in run.file.analysis]


def report_steps(run: CheckedRun, dirs: Dirs) -> list[tuple[str, dict | StepRequest, str]]:
    """`ocg report`'s steps in order: 00, 01 per model, 02 over all models, the analyses."""
    models = list(run.file.models)
    plan = [(BUILD_DATA, notebook_params(BUILD_DATA, run, dirs, []), BUILD_DATA)]
    if GENERATE in run.file.notebooks:
        plan += [
            (GENERATE, notebook_params(GENERATE, run, dirs, [m]), f"{GENERATE}-{m}") for m in models
        ]
    if SCORE in run.file.notebooks:
        plan.append((SCORE, notebook_params(SCORE, run, dirs, models), SCORE))
    return plan + analysis_steps(run, dirs, models)


def check_plan(run: CheckedRun, plan: list[tuple[str, dict | StepRequest, str]]) -> list[str]:
    """Refuse, before any work, a plan a notebook would refuse after the ones before it had run:
    every step's parameters declared by its notebook and of their type, every request (01's,
    02's) as the notebook will read it back from its JSON file. Writes nothing; returns the
    steps' names. An error names the run file and the step (`ocg report RUN --check`)."""
    from ..config.requests import request_json
    from ..core.errors import OcgInputError

    for notebook, params, name in plan:
        try:
            if isinstance(params, (GenerateRequest, ScoringRequest)):
                type(params).model_validate_json(request_json(params))  # what 01/02 read back
            else:
                check_parameters(find_notebook(notebook), params, "parameter ")
        except OcgInputError as exc:
            raise OcgInputError(str(run.path), f"step {name}: {exc}") from exc
        except (ValueError, TypeError) as exc:  # pydantic's ValidationError, json's TypeError
            line = " ".join(str(exc).split())[:300]
            raise OcgInputError(str(run.path), f"step {name}: its request: {line}") from exc
    return [name for _, _, name in plan]
