"""Run files (params/runs/) and sweep files (params/sweeps/): what to run, and for a sweep where
its outputs go and the resources and Slurm settings of each model's task."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

from ..core.arguments import distinct
from ..core.errors import OcgInputError
from ..core.frames import DEFAULT_N_CONCEPTS, N_CONCEPTS, N_CONCEPTS_TEXT
from ..core.names import NAME_PATTERN, check_name
from ..core.notebook_names import ANALYSES, MODEL_NOTEBOOKS
from .field_types import NAMES_AS_KEYS, Label, Name
from .file_model import ConfigModel, Says, checked, number
from .scoring_file import METRICS_SCHEMA, ScoringFile
from .sweep_file import (
    ENV_SCHEMA,
    EXTRA_ARGS_SCHEMA,
    MEM_PATTERN,
    SETUP_SCHEMA,
    TIME_PATTERN,
    check_env,
    check_extra_args,
    check_mem,
    check_setup,
    check_time,
)


def _names(where: str, models: list) -> None:
    for i, model in enumerate(models):
        check_name(f"{where}[{i}]", model)
    distinct(where, models)


def _notebooks(allowed: tuple[str, ...]):
    def check(where: str, notebooks: list) -> None:
        for i, nb in enumerate(notebooks):
            if nb not in allowed:
                raise OcgInputError(
                    f"{where}[{i}]", f"unknown notebook {nb!r}; known: {list(allowed)}"
                )

    return check


NonEmpty = Field(min_length=1)


def _one_of(allowed: tuple[str, ...]) -> dict:
    return {"items": {"enum": list(allowed)}}


MAX_SAMPLES = 1000  # answers per instance: pass@k's k is at most 100 anywhere in the literature


def check_folder(where: str, value: str) -> None:
    """A folder a run writes: not blank, never the file system's root (ocg/core/paths.py)."""
    if not value.strip():
        raise OcgInputError(
            where,
            "empty: expected a folder (relative: under OCG_OUTPUTS "
            "when set, else the project root; or absolute)",
        )
    if value.strip("/\\") == "":
        raise OcgInputError(where, f"got {value!r}: the file system's root; expected a folder")


# check_folder as a pattern, for the JSON Schemas
FOLDER_PATTERN = r"^(?![/\\]+$)[\s\S]*\S[\s\S]*$"
Folder = Annotated[str, checked(check_folder), Field(json_schema_extra={"pattern": FOLDER_PATTERN})]


def _overrides(schema: dict) -> None:
    """A run's `scoring:` block: any of params/scoring.yaml's settings (null: the file's)."""
    settings = ScoringFile.model_json_schema()
    schema.pop("additionalProperties", None)
    schema.update(
        properties={k: {"anyOf": [v, {"type": "null"}]} for k, v in settings["properties"].items()},
        additionalProperties=False,
    )


class Sampling(ConfigModel):
    """Sampled decoding for repeated samples (docs/METHODS.md, "Repeated samples and pass@k")."""

    temperature: Annotated[number(gt=0), Says("a temperature > 0")]
    """The sampling temperature."""
    top_p: Annotated[number(gt=0, le=1.0), Says("a number with 0 < top_p <= 1")] = 1.0
    """Nucleus sampling's share of probability mass."""


class RunFile(ConfigModel):
    """A run file: which models answer which conditions, and what is scored and reported."""

    name: Name
    """The run's name (its markers and report are kept under it)."""
    models: Annotated[
        list[Name], NonEmpty, checked(_names), Field(json_schema_extra={"uniqueItems": True})
    ]
    """Entries of the models file, each once."""
    conditions: Annotated[
        list[Name], NonEmpty, checked(distinct), Field(json_schema_extra={"uniqueItems": True})
    ]
    """Conditions of params/templates.yaml (original, ordered, ordered_one_shot, ...)."""
    models_file: Annotated[Label | None, Says("a path or null")] = None
    """The models file its models come from (relative: to this file); null: params/models.yaml."""
    n_concepts: Annotated[Literal[N_CONCEPTS], Says(N_CONCEPTS_TEXT)] = DEFAULT_N_CONCEPTS
    """Concepts per set: the paper's 4, or 5 for the extension."""
    subset_k: Annotated[
        int | None, Field(ge=1), Says("a positive number of concept sets, or null for all")
    ] = None
    """Concept sets to run (a fixed selection covering the compositions); null: all."""
    permutations: Annotated[
        int | None,
        Field(ge=1),
        Says("a positive number of permutations per concept set, or null for all"),
    ] = None
    """A seeded sample of this many orders per concept set; null: all n! of them."""
    template_ids: Annotated[
        list[Annotated[int, Field(ge=0)]] | None,
        NonEmpty,
        checked(distinct),
        Field(json_schema_extra={"uniqueItems": True}),
    ] = None
    """Templates of params/templates.yaml to run; null: all six."""
    metrics: (
        Annotated[
            list[Any],
            checked(distinct),
            Field(json_schema_extra={**METRICS_SCHEMA, "uniqueItems": True}),
        ]
        | None
    ) = None
    """Metrics to score (ocg/scoring/families.py); null: params/scoring.yaml's."""
    scoring: Annotated[
        dict[str, Any],
        Says("a mapping of params/scoring.yaml overrides"),
        Field(json_schema_extra=_overrides),
    ] = {}
    """params/scoring.yaml's settings this run changes, e.g. {perplexity_fallback: ...}."""
    notebooks: Annotated[
        list[str],
        checked(_notebooks(MODEL_NOTEBOOKS)),
        Field(json_schema_extra=_one_of(MODEL_NOTEBOOKS)),
    ] = list(MODEL_NOTEBOOKS)
    """The notebooks run per model."""
    analysis: Annotated[
        list[str], checked(_notebooks(ANALYSES)), Field(json_schema_extra=_one_of(ANALYSES))
    ] = list(ANALYSES)
    """The analysis notebooks run once all models are done."""
    table7_pairs: Annotated[
        dict[str, Any] | None,
        Says("{reasoning model: base model}"),
        Field(
            json_schema_extra={**NAMES_AS_KEYS, "additionalProperties": {"pattern": NAME_PATTERN}}
        ),
    ] = None
    """Table 7's pairs; null: from each entry's base_model."""
    table7_note: Annotated[str, Says("text")] = ""
    """A note printed under Table 7."""
    allow_incomplete: Annotated[bool, Says("true or false")] = False
    """Report even where a model's answers are incomplete."""
    outputs: Annotated[Folder | None, Says("a folder, or null")] = None
    """Where this run's outputs go (relative: under OCG_OUTPUTS when set, else the project
    root, or the working directory for an installed ocg); null: OCG_OUTPUTS, else outputs/."""
    samples: Annotated[
        int, Field(ge=1, le=MAX_SAMPLES), Says("a positive number of samples per instance")
    ] = 1
    """Answers per instance (pass@k); more than one needs `sampling`."""
    sampling: Annotated[Sampling | None, Says("{temperature: T, top_p: p}, or null for greedy")] = (
        None
    )
    """{temperature: T, top_p: p} for sampled decoding; null: the entries' own (greedy)."""
    batch_check: Annotated[
        int | None, Field(ge=0), Says("a number of answers (0: none), or null for the entries'")
    ] = None
    """The batch-1 check's size (answers regenerated alone) for each model of this run that has
    one; null: each entry's `batch_check`. Entries without a check (batch_check: 0, openai and
    replay entries) keep none."""


class Site(ConfigModel):
    """Where a group's jobs queue; unset, the sweep's `slurm:` values hold."""

    partition: Label | None = None
    """The Slurm partition."""
    account: Label | None = None
    """The Slurm account."""
    extra_args: Annotated[
        list[str], checked(check_extra_args), Field(json_schema_extra=EXTRA_ARGS_SCHEMA)
    ] = []
    """More sbatch options (after the sweep's: the last wins); never those ocg sets itself."""


class Resources(Site):
    """What one task asks Slurm for."""

    gpus: int = Field(0, ge=0)
    """GPUs per task."""
    cpus: int = Field(1, ge=1)
    """CPU cores per task."""
    mem: Annotated[str, checked(check_mem), Field(json_schema_extra={"pattern": MEM_PATTERN})] = (
        "4G"
    )
    """Memory, e.g. 16G or 500M."""
    time: Annotated[
        str, checked(check_time), Field(json_schema_extra={"pattern": TIME_PATTERN})
    ] = "01:00:00"
    """Slurm's time limit: MM, MM:SS, HH:MM:SS or D-HH[:MM[:SS]]; 0 or UNLIMITED for none."""

    def recorded(self) -> dict:
        """As a sweep's manifest.json records a task's request: gpus, cpus, mem and time, then
        where it queues, where the file says."""
        data = self.model_dump()
        asked = ("gpus", "cpus", "mem", "time")
        said = [k for k in data if k in self.model_fields_set and k not in asked]
        return {k: data[k] for k in (*asked, *said)}

    def queue(self, key: str, slurm: Site) -> object:
        """Where the task queues (partition, account): its own where it says, else the sweep's."""
        return getattr(self, key) if key in self.model_fields_set else getattr(slurm, key)


class ResourcesBlock(ConfigModel):
    """Each model's task's resources: a default, and per-model changes."""

    default: Resources = Resources()
    """Every task's resources."""
    models: Annotated[
        dict[str, Resources] | None,
        Says("a mapping of model: resources"),
        Field(json_schema_extra=NAMES_AS_KEYS),
    ] = None
    """Per model, what differs from the default."""


class Slurm(Site):
    """How the sweep's jobs are submitted with `--executor slurm`."""

    throttle: int = Field(8, ge=1)
    """Tasks of the array that run at once."""
    analysis: Resources = Resources(cpus=2, mem="8G", time="02:00:00", gpus=0)
    """The analysis job's resources."""
    setup: Annotated[list[str], checked(check_setup), Field(json_schema_extra=SETUP_SCHEMA)] = []
    """Shell lines each job runs first (module load ...)."""
    env: Annotated[dict[Any, Any], checked(check_env), Field(json_schema_extra=ENV_SCHEMA)] = {}
    """Environment variables of each job (never ocg's own folders)."""
    warn_before_limit_s: int = Field(600, ge=10)
    """Seconds before the time limit that a task is told to stop (it resumes on the next start)."""


def _file_schema(schema: dict) -> None:
    """A file that `extends` another needs only a name of its own (the base supplies the rest);
    any other names its models, conditions and the folder it writes (ocg/sweep/config.py)."""
    required = schema.pop("required", [])
    schema["anyOf"] = [{"required": ["extends", "name"]}, {"required": [*required, "outputs"]}]


class SweepFile(RunFile, json_schema_extra=_file_schema):
    """A sweep file: a run file, plus where outputs go and each model's task's resources."""

    extends: Label = None
    """Another sweep file (relative to this one): its keys hold unless this file sets them
    (resources and slurm: key by key)."""
    outputs: Annotated[Folder | None, Says("a folder, or null")] = None
    """The folder this sweep writes (required; relative: under OCG_OUTPUTS when set, else the
    project root)."""
    resources: Annotated[ResourcesBlock, Says("a mapping with default and models")] = (
        ResourcesBlock()
    )
    """Each model's task's resources."""
    slurm: Slurm = Slurm()
    """Slurm settings (partition, account, throttle, setup, env, ...)."""
