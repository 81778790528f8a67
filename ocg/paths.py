"""Every path of the project in one place (no string paths scattered through notebooks)."""

from __future__ import annotations

import os
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parents[1]
PACKAGE_DATA = Path(__file__).resolve().parent / "data"
CONCEPT_SETS_FILE = PACKAGE_DATA / "commongen_lite_concept_sets.jsonl"
PAPER_TABLES_DIR = PACKAGE_DATA / "paper"

PARAMS_DIR = PROJECT_ROOT / "params"
TEMPLATES_FILE = PARAMS_DIR / "templates.yaml"
NOTEBOOKS_DIR = PROJECT_ROOT / "notebooks"


def outputs_dir() -> Path:
    """Root of everything a run writes; `OCG_OUTPUTS` moves it (e.g. to scratch on a cluster)."""
    return Path(os.environ.get("OCG_OUTPUTS", PROJECT_ROOT / "outputs")).resolve()


def data_dir() -> Path:
    return outputs_dir() / "data"


def executed_notebooks_dir() -> Path:
    return outputs_dir() / "notebooks"
