"""Run files (params/runs/): what to run (a sweep file, params/sweeps/, is a run file plus where its
outputs go and each model's task's resources: ocg/config/sweep_file.py)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

from ..core.arguments import distinct
from ..core.errors import OcgInputError
from ..core.frames import DEFAULT_N_CONCEPTS, N_CONCEPTS_TEXT
from ..core.names import NAME_PATTERN, check_name
from ..core.notebook_names import ANALYSES, MODEL_NOTEBOOKS
from .field_types import NAMES_AS_KEYS, Label, Name
from .file_model import ConfigModel, KeepInt, Says, checked
from .scoring_file import METRICS_SCHEMA, ScoringFile


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
# ocg/core/frames.py's N_CONCEPTS as a Literal type checkers read (a test holds the two equal)
NConcepts = Literal[4, 5]


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


Temperature = Annotated[float, Field(gt=0), KeepInt, Says("a temperature > 0")]
TopP = Annotated[float, Field(gt=0, le=1.0), KeepInt, Says("a number with 0 < top_p <= 1")]


class Sampling(ConfigModel):
    """Sampled decoding for repeated samples (docs/METHODS.md, "Repeated samples and pass@k")."""

    temperature: Temperature
    """The sampling temperature."""
    top_p: TopP = 1.0
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
    # the ignore: core's DEFAULT_N_CONCEPTS is typed int
    n_concepts: Annotated[NConcepts, Says(N_CONCEPTS_TEXT)] = DEFAULT_N_CONCEPTS  # type: ignore[assignment]
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
