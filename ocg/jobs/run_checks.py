"""Run files (params/runs/) and sweep files (params/sweeps/): one schema, checked completely on load.

Both name what to run: models (entries of a models file), conditions, concept sets, templates,
metrics and scoring settings, the notebooks, and Table 7's pairs. A sweep adds where outputs go
and the resources of each model's task. The file is validated with its model
(ocg/config/run_file.py), then checked against what it names (the models, templates and scoring
files) before any work starts; an error names file and field. What comes back is a CheckedRun
(ocg/config/checked_run.py): the validated model with its paths resolved, and what it names.
"""

from __future__ import annotations

from pathlib import Path

from ..config.checked_run import CheckedRun
from ..config.file_model import at, validate
from ..config.local_paths import LOCAL_MODEL_SETTINGS, checked_path, local_model_field
from ..config.model_registry import MODELS_FILE, load_models
from ..config.models_file import REFERENCE_CONDITION, ModelEntry
from ..config.run_file import RunFile, Sampling
from ..config.scoring_file import ScoringFile
from ..core.errors import OcgInputError, shown
from ..core.frames import check_permutations, unknown_template
from ..core.paths import SHIPPED_DATA
from ..generation.backends.constrained import check_backends
from ..generation.sampling import check_sampling


def _judge_from(file: RunFile, src: str, models_file: Path | None) -> dict:
    """The run's scoring overrides; a judge named by `scoring.judge` is read from the run's own
    models file where it names one (passed on to scoring as `scoring.judge_models_file`);
    checked here, before anything runs: the entry, and its local model folder where it has one
    (judging.check_loadable)."""
    from ..scoring.judging import check_loadable

    scoring = file.scoring
    if not scoring.get("judge"):
        return scoring
    if models_file is not None and not scoring.get("judge_models_file"):
        scoring = {**scoring, "judge_models_file": str(models_file)}
    try:
        check_loadable(scoring["judge"], scoring.get("judge_models_file"))
    except OcgInputError as exc:
        raise OcgInputError(f"{src}: scoring.judge", exc.problem) from None
    return scoring


def _entries(file: RunFile, path: Path, models_file: Path) -> dict[str, ModelEntry]:
    """The entries of the run's models, each one in its models file."""
    specs = load_models(models_file)
    for i, model in enumerate(file.models):
        if model not in specs:
            raise OcgInputError(
                f"{path}: models[{i}]", f"{model!r} is not an entry of {models_file}"
            )
        if specs[model].reference and REFERENCE_CONDITION not in file.conditions:
            raise OcgInputError(
                f"{path}: models[{i}]",
                f"{model!r} is a reference, which answers only the {REFERENCE_CONDITION!r} "
                "condition; this run does not ask it (conditions)",
            )
        _check_replay_file(specs[model], models_file, file)
    return {model: specs[model] for model in file.models}


def _finished(model: str, file: RunFile) -> bool:
    """Whether the run's generations folder holds `model`'s finished answers (its run card
    complete): a replayed file is then not read again."""
    from ..core.layout import ModelGenerations, Outputs, outputs
    from ..records import RunCard, RunStatus

    root = Outputs(Path(file.outputs)) if file.outputs else outputs()
    card = ModelGenerations.of(model, root.generations).run_card
    try:
        return card.is_file() and RunCard.read(card).status == RunStatus.COMPLETE
    except (OcgInputError, OSError, ValueError):  # an unreadable card: the file is needed
        return False


def _check_replay_file(spec: ModelEntry, models_file: Path, run: RunFile) -> None:
    """A replay entry's file of answers there before any work (made absolute beside its models
    file when that was read), unless the model's answers are all stored (the file may have
    moved since; generation reads it only for answers still to make); `ocg-data:NAME` is ocg's own."""
    file = spec.replay.file if spec.backend == "replay" and spec.replay else None
    if file and not file.startswith(SHIPPED_DATA):
        if not Path(file).exists() and _finished(spec.name, run):
            return
        checked_path(f"{models_file}: models.{spec.name}.replay.file", file, None, folder=False)


def _check_templates(file: RunFile, src: str, entries: dict[str, ModelEntry]) -> None:
    """Conditions and template ids of params/templates.yaml, each model able to run each one."""
    from ..data import load_templates

    templates = load_templates()
    for i, cond in enumerate(file.conditions):
        if cond not in templates.conditions:
            raise OcgInputError(
                f"{src}: conditions[{i}]",
                f"unknown condition {cond!r}; known: {sorted(templates.conditions)}",
            )
    check_backends(src, file.conditions, file.models, entries, templates)
    for i, tid in enumerate(file.template_ids or []):
        if tid not in templates.templates:
            raise unknown_template(f"{src}: template_ids[{i}]", tid, templates.templates)


def _scoring(file: RunFile, src: str, models_file: Path | None) -> tuple[dict, ScoringFile]:
    """The run's scoring overrides (the judge's models file added) and the settings they give."""
    from ..scoring import check_metrics, load_scoring_config

    if file.metrics is not None:
        check_metrics(file.metrics, f"{src}: metrics")
    try:
        load_scoring_config(overrides=file.scoring)
    except OcgInputError as exc:
        # the key the error is about (`<scoring file>: perplexity_fallbak`), when the run set it
        key = exc.where.partition(": ")[2]
        if key.split(".")[0].split("[")[0] not in file.scoring:
            raise  # the scoring file's own mistake: its address stays
        raise OcgInputError(at(f"{src}: scoring", key), exc.problem) from None
    overrides = _judge_from(file, src, models_file)
    return overrides, load_scoring_config(overrides=overrides)


def _check_programs(entries: dict[str, ModelEntry], scoring: ScoringFile, src: str) -> None:
    """Every server command's programs found (the venv's own bin first, then PATH) before any
    work: a missing one would otherwise fail after the generation it follows."""
    from ..generation.servers.server import check_programs
    from ..scoring.judging import judge_spec

    for name, spec in entries.items():
        check_programs(spec, f"{src}: models.{name}")
    if scoring.judge:
        spec = judge_spec(scoring.judge, scoring.judge_models_file)
        check_programs(spec, f"{src}: scoring.judge ({scoring.judge})")


def _check_pairs(file: RunFile, src: str) -> None:
    for reasoning, base in (file.table7_pairs or {}).items():
        # a key with a tab or line break is shown quoted: the error stays one line
        where = f"{src}: table7_pairs.{reasoning if reasoning.isprintable() else shown(reasoning)}"
        for model in (reasoning, base):
            if model not in file.models:
                raise OcgInputError(where, f"{shown(model)} is not a model of this file")
        if reasoning == base:
            raise OcgInputError(
                where, "a model paired with itself: pair a reasoning model with its base model"
            )


def _check_subset(file: RunFile, src: str) -> None:
    """subset_k at most the sets there are (one more would be silently all of them)."""
    if not file.subset_k:
        return
    from ..data.concepts import load_concept_sets

    n = len(load_concept_sets(file.n_concepts))
    if file.subset_k > n:
        raise OcgInputError(
            f"{src}: subset_k",
            f"got {file.subset_k}; the {file.n_concepts}-concept data hold {n} sets: give at "
            f"most {n}, or null for all",
        )


def _outputs(file: RunFile, src: str) -> str | None:
    """The outputs folder made absolute (relative: under OCG_OUTPUTS when set, else the project
    root); None where the file names none."""
    if file.outputs is None:
        return None
    from ..core.paths import outputs_field

    folder = outputs_field(file.outputs)  # blank and "/" refused by the model (check_folder)
    if folder.resolve().parent == folder.resolve():  # /.., /tmp/..
        raise OcgInputError(
            f"{src}: outputs", f"got {file.outputs!r}: the file system's root; expected a folder"
        )
    return str(folder)


def _local_scoring(file: RunFile, src: str, base: Path) -> RunFile:
    """The run's `scoring:` block with its local paths resolved against the run file's folder
    and checked to exist (ocg/config/local_paths.py): a model named by a local folder, and
    `judge_models_file`."""
    scoring = dict(file.scoring)
    for key in LOCAL_MODEL_SETTINGS:
        if isinstance(scoring.get(key), str):
            scoring[key] = local_model_field(f"{src}: scoring.{key}", scoring[key], base)
    if isinstance(scoring.get("judge_models_file"), str):
        where = f"{src}: scoring.judge_models_file"
        scoring["judge_models_file"] = checked_path(
            where, scoring["judge_models_file"], base, folder=False
        )
    return file.model_copy(update={"scoring": scoring}) if scoring != file.scoring else file


def check_run(raw: object, path: Path, model: type[RunFile] = RunFile) -> CheckedRun:
    """The file validated as `model` (its defaults are the model's), models_file resolved; then
    what needs the other files (models, templates, scoring settings) and the other fields."""
    src = str(path)
    if not isinstance(raw, dict):
        raise OcgInputError(src, "expected a mapping of settings")
    file = validate(model, raw, f"{src}:")
    samples, sampling = check_sampling(
        f"{src}: ", file.samples, file.sampling.model_dump() if file.sampling else None
    )
    base = path.resolve().parent
    models_file = MODELS_FILE
    if file.models_file:
        models_file = Path(
            checked_path(f"{src}: models_file", file.models_file, base, folder=False)
        )
    file = _local_scoring(file, src, base)
    named = models_file if file.models_file else None  # None: the notebooks' own default
    if named is not None and not models_file.is_file():  # the run file's key, not a bare path
        raise OcgInputError(
            f"{path}: models_file",
            f"{models_file} is not a file" + ("" if models_file.exists() else " (no such file)"),
        )
    entries = _entries(file, path, models_file)
    check_permutations(f"{src}: permutations", file.permutations, file.n_concepts)
    _check_subset(file, src)
    _check_templates(file, src, entries)
    overrides, scoring = _scoring(file, src, named)
    if model is RunFile:  # a sweep's servers run on its compute nodes, whose programs are theirs
        _check_programs(entries, scoring, src)
    _check_pairs(file, src)
    resolved = file.model_copy(
        update={
            "samples": samples,
            "sampling": Sampling(**sampling) if sampling else None,
            "models_file": str(named) if named else None,
            "scoring": overrides,
            "outputs": _outputs(file, src),
        }
    )
    # absolute: results.json and the pages name it anywhere
    return CheckedRun(resolved, entries, models_file, scoring, path.resolve())
