"""The JSON Schemas of the parameter files, written to params/schema/ for editors: a YAML file
whose first line is `# yaml-language-server: $schema=<its schema>` is completed and checked as
it is typed (VS Code's YAML extension, or any editor with yaml-language-server)."""

from __future__ import annotations

import json
from pathlib import Path

from ..core.paths import PARAMS_DIR
from .file_model import ConfigModel
from .models_file import ModelsFile
from .run_file import RunFile
from .scoring_file import ScoringFile
from .sweep_file import SweepFile
from .templates_file import TemplatesFile

SCHEMA_DIR = PARAMS_DIR / "schema"
KINDS: dict[str, type[ConfigModel]] = {
    "models": ModelsFile,
    "run": RunFile,
    "sweep": SweepFile,
    "scoring": ScoringFile,
    "templates": TemplatesFile,
}


def schema_of(kind: str) -> dict:
    """The JSON Schema (draft 2020-12) of one kind of parameter file."""
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        **KINDS[kind].model_json_schema(),
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
