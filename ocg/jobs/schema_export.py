"""The JSON Schemas of the parameter files, written to params/schema/ for editors: a YAML file
whose first line is `# yaml-language-server: $schema=<its schema>` is completed and checked as
it is typed (VS Code's YAML extension, or any editor with yaml-language-server).

`python -m ocg.jobs.schema_export` writes them again (after a model of ocg/config changes). The
models of ocg/config say every field; the choices that are another floor's own list (ocg/metrics'
spaCy pipelines and matching rules, ocg/scoring's metric families) are filled in here, from those
lists themselves, so a choice added there reaches the schemas the next time they are written."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..config.file_model import ConfigModel
from ..config.models_file import ModelsFile
from ..config.run_file import RunFile
from ..config.scoring_file import CHOICES_MARK, ScoringFile
from ..config.sweep_file import SweepFile
from ..config.templates_file import TemplatesFile
from ..core.paths import PARAMS_DIR

SCHEMA_DIR = PARAMS_DIR / "schema"
KINDS: dict[str, type[ConfigModel]] = {
    "models": ModelsFile,
    "run": RunFile,
    "sweep": SweepFile,
    "scoring": ScoringFile,
    "templates": TemplatesFile,
}


def _metric_families() -> list[str]:
    from ..scoring.families import FAMILIES

    return list(FAMILIES)


def _spacy_pipelines() -> list[str]:
    from ..metrics.coverage import SPACY_PIPELINES

    return list(SPACY_PIPELINES)


def _matching_rules() -> list[str]:
    from ..metrics.matching import MATCHING_RULES

    return list(MATCHING_RULES)


# Each choices(name) of ocg/config, by name: the list it stands for (read when a schema is made)
CHOICES: dict[str, Callable[[], list[str]]] = {
    "metric families": _metric_families,
    "spaCy pipelines": _spacy_pipelines,
    "matching rules": _matching_rules,
}


def _filled(node: Any) -> Any:
    """`node` with every choices(name) mark replaced by its list (the keys keep their order)."""
    if isinstance(node, str) and node.startswith(CHOICES_MARK):
        return CHOICES[node.removeprefix(CHOICES_MARK)]()
    if isinstance(node, dict):
        return {k: _filled(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_filled(v) for v in node]
    return node


def schema_of(kind: str) -> dict:
    """The JSON Schema (draft 2020-12) of one kind of parameter file."""
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        **_filled(KINDS[kind].model_json_schema()),
    }


def schema_text(kind: str) -> str:
    return json.dumps(schema_of(kind), indent=2, sort_keys=False) + "\n"


def schema_path(kind: str, folder: Path = SCHEMA_DIR) -> Path:
    return folder / f"{kind}.schema.json"


def write_schemas(folder: Path = SCHEMA_DIR) -> list[Path]:
    """Every kind's schema, written to `folder` (params/schema/ by default)."""
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for kind in KINDS:
        schema_path(kind, folder).write_text(schema_text(kind))
        written.append(schema_path(kind, folder))
    return written


if __name__ == "__main__":
    for path in write_schemas():
        print(path)
