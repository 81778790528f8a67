"""Every path of the project's inputs in one place, and the two roots of its outputs.

outputs/ (moved by OCG_OUTPUTS, e.g. to scratch on a cluster) and the model cache (moved by
OCG_MODEL_CACHE only) are resolved here, at call time; what lies inside them is ocg/core/layout.py's.
"""

from __future__ import annotations

import os
from pathlib import Path

from .errors import OcgInputError

PACKAGE = Path(__file__).resolve().parents[1]  # ocg/
PROJECT_ROOT = PACKAGE.parent
PACKAGE_DATA = PACKAGE / "data"
CONCEPT_SETS_FILE = PACKAGE_DATA / "commongen_lite_concept_sets.jsonl"
# CommonGen-Eval's 12 models' sentences for the 208 five-concept sets (ocg/data/README.md)
COMMONGEN_EVAL_5CONCEPT = PACKAGE_DATA / "commongen_eval_outputs_5concept.jsonl"
# How a params file names a file ocg ships (ocg-data:NAME is ocg/data/NAME): the same in a
# checkout and in an installed wheel, where params/ and ocg/data/ lie at other distances
SHIPPED_DATA = "ocg-data:"
PAPER_TABLES_DIR = PACKAGE_DATA / "paper"

# params/ of the checkout; an installed wheel (no checkout) carries it as the package ocg/params
PARAMS_DIR = PROJECT_ROOT / "params" if (PROJECT_ROOT / "params").is_dir() else PACKAGE / "params"
TEMPLATES_FILE = PARAMS_DIR / "templates.yaml"
# docs/METHODS.md, rendered into every report: the checkout's, which a wheel carries as
# ocg/docs/METHODS.md (pyproject.toml maps docs/ to the package ocg.docs for this one file)
METHODS_FILE = (
    PACKAGE / "docs" / "METHODS.md"
    if (PACKAGE / "docs" / "METHODS.md").is_file()
    else PROJECT_ROOT / "docs" / "METHODS.md"
)
NOTEBOOKS_DIR = PROJECT_ROOT / "notebooks"
# ocg runs from a source checkout (a clone, installed editable or not at all), not from an
# installed wheel, whose PROJECT_ROOT is site-packages: outputs then go to the working directory
SOURCE_CHECKOUT = (PROJECT_ROOT / "pyproject.toml").is_file()


FOLDER_VARIABLES = ("OCG_OUTPUTS", "OCG_MODEL_CACHE")


def _folder_from_env(name: str) -> Path | None:
    value = os.environ.get(name)
    if value is None:
        return None
    if not value.strip():
        raise OcgInputError(
            name,
            "set but empty (an unset variable such as $SCRATCH?); unset it "
            "for the default, or give a folder",
        )
    return (
        Path(value).expanduser().resolve()
    )  # '~/x' quoted in a job script: the home folder, not ./~


def settle_folder_variables() -> None:
    """Make OCG_OUTPUTS and OCG_MODEL_CACHE absolute, once, where a command starts: notebook
    kernels (which run in notebooks/), sweep tasks and Slurm jobs inherit them and must read the
    same folders, not resolve a relative value against their own working directory."""
    for name in FOLDER_VARIABLES:
        folder = _folder_from_env(name)
        if folder and folder.exists() and not folder.is_dir():  # said now, naming the variable
            raise OcgInputError(name, f"{folder} is a file; expected a folder (or unset {name})")
        if folder:
            os.environ[name] = str(folder)


def outputs_base() -> Path:
    """What a relative outputs folder lies under, OCG_OUTPUTS unset: the checkout's root, or
    for an installed wheel the working directory (never site-packages)."""
    return PROJECT_ROOT if SOURCE_CHECKOUT else Path.cwd()


def outputs_dir() -> Path:
    """Root of everything a run writes; `OCG_OUTPUTS` moves it (e.g. to scratch on a cluster).
    Unset: outputs/ of the checkout, or of the working directory for an installed wheel."""
    return _folder_from_env("OCG_OUTPUTS") or outputs_base() / "outputs"


def outputs_field(value: str) -> Path:
    """A run or sweep file's `outputs:`. The one rule: absolute as written; relative, under
    OCG_OUTPUTS when it is set (so moving outputs to scratch moves every run and sweep with
    them), else under the project root (the shipped `outputs/sweeps/demo` is then in outputs/;
    an installed wheel: under the working directory)
    A leading `~` is the home folder, as a shell would read it unquoted."""
    path = Path(value).expanduser()
    if path.is_absolute():
        return path
    return ((_folder_from_env("OCG_OUTPUTS") or outputs_base()) / path).resolve()


def model_cache_dir() -> Path:
    """Where converted models live; `OCG_MODEL_CACHE` moves it (e.g. a shared cluster disk).
    Unset, it does not follow OCG_OUTPUTS (a conversion is 517 MB and ~25 s, and outputs moved to
    scratch must find the one already made): outputs/models of the checkout, or for an installed
    wheel, which has no checkout, the user's cache ($XDG_CACHE_HOME, else ~/.cache, /ocg/models)."""
    found = _folder_from_env("OCG_MODEL_CACHE")
    if found:
        return found
    if SOURCE_CHECKOUT:
        return PROJECT_ROOT / "outputs" / "models"
    cache = os.environ.get("XDG_CACHE_HOME", "").strip()
    base = Path(cache) if cache and Path(cache).is_absolute() else Path.home() / ".cache"
    return base / "ocg" / "models"
