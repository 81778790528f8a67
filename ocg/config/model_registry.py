"""The model registry (params/models.yaml): its entries loaded as ModelEntry objects
(ocg/config/models_file.py), errors naming model and field."""

from __future__ import annotations

from pathlib import Path

from ..core.errors import OcgInputError
from ..core.files import read_extends_chain
from ..core.names import check_name
from ..core.paths import PARAMS_DIR, SHIPPED_DATA
from .file_model import file_fields, validate
from .local_paths import base_of, checked_path, looks_local, resolved
from .model_checks import RATE_KEYS, generation_defaults
from .models_file import (
    ATTENTIONS,
    BACKENDS,
    DECODINGS,
    DEFAULT_PROMPT_DATE,
    DTYPES,
    ENTRY_CLASSES,
    EXTRACTIONS,
    FIXED_BY_BACKEND,
    MAX_SECONDS,
    QUANTIZATIONS,
    SEED_MAX,
    SYSTEM_MODES,
    SYSTEM_PROMPTS,
    ModelDefaults,
    ModelEntry,
    ReplayEntry,
    TransformersEntry,
)

__all__ = [  # the entries' vocabulary, written in ocg/config/models_file.py
    "ATTENTIONS",
    "BACKENDS",
    "DECODINGS",
    "DEFAULT_PROMPT_DATE",
    "DTYPES",
    "EXTRACTIONS",
    "MAX_EXTENDS",
    "MAX_SECONDS",
    "MODELS_FILE",
    "QUANTIZATIONS",
    "RATE_KEYS",
    "SEED_MAX",
    "SYSTEM_MODES",
    "SYSTEM_PROMPTS",
    "ModelEntry",
    "generation_defaults",
    "get_model",
    "load_models",
    "parse_models",
]

MODELS_FILE = PARAMS_DIR / "models.yaml"
MAX_EXTENDS = 50  # models files in one `extends` chain: a longer one is a mistake, not a layout


def _check_quantization_said(where: str, entry: dict, defaults: dict, merged: dict) -> None:
    """A transformers entry that sets dtype says its quantization: left to the default (the
    paper's 4bit), `dtype: float32` meant as full weights would silently be a 4-bit model."""
    if (
        merged.get("backend", "transformers") == "transformers"
        and "dtype" in entry
        and "quantization" not in entry
        and "quantization" not in defaults
    ):
        default = TransformersEntry.model_fields["quantization"].default
        raise OcgInputError(
            f"{where}.quantization",
            "missing: an entry that sets dtype must say its "
            "quantization (none: full weights in that dtype; 4bit or 8bit: bitsandbytes "
            f"with that compute dtype); left out it would be {default!r}",
        )


def _check_own_keys(where: str, entry: dict, backend: str) -> None:
    """What an openai or replay entry itself may not say (a file's `defaults:` may: they are for
    its transformers entries, and reach these two fields of the others unchecked)."""
    if backend == "openai" and (
        entry.get("generation_overrides") or entry.get("decoding", "greedy") != "greedy"
    ):
        raise OcgInputError(
            f"{where}.generation_overrides",
            "API models decode as the "
            "api block says (temperature); these fields are for transformers",
        )
    if backend == "replay" and entry.get("decoding", "greedy") != "greedy":
        raise OcgInputError(
            f"{where}.decoding", "a replay entry replays answers; decoding does not apply"
        )


def _beside(entry: ModelEntry, source: str, where: str) -> ModelEntry:
    """The entry's local paths resolved against the models file's folder, as `extends` is, and
    checked to exist (ocg/config/local_paths.py): a transformers entry's `id` when it names a
    folder, a served entry's `id` and `api.server.model_dir`; a replay entry's `replay.file` is
    resolved here and checked by a run that asks the entry. A hub id, an embedded model and `ocg-data:NAME` stay as written."""
    base = base_of(source)
    if base is None:
        return entry
    update: dict = {}
    if isinstance(entry, ReplayEntry) and entry.replay and entry.replay.file:
        file = entry.replay.file
        if not file.startswith(SHIPPED_DATA):  # ocg-data:NAME: ocg/data/NAME
            # resolved, not checked here: a file of answers may be written after the models file
            # names it; a run checks its own entries' files before any work (run_checks.py)
            path = resolved(file, base)
            update["replay"] = entry.replay.model_copy(update={"file": path})
    server = entry.api.server if entry.api is not None else None
    if entry.backend == "transformers" or server is not None:
        if looks_local(entry.id, base):
            # a served entry's id may be one file (a GGUF): the server's business
            path = checked_path(f"{where}.id", entry.id, base, folder=server is None)
            update["id"] = path
            if entry.paper_id == entry.id:  # filled in from the id
                update["paper_id"] = path
    if server is not None and server.model_dir:
        path = checked_path(f"{where}.api.server.model_dir", server.model_dir, base, folder=False)
        api = entry.api.model_copy(update={"server": server.model_copy(update={"model_dir": path})})
        update["api"] = api
    return entry.model_copy(update=update) if update else entry


def _parse_entry(name: str, where: str, entry: object, defaults: dict, source: str) -> ModelEntry:
    """One entry, `defaults` under its fields (less those its backend fixes), checked as its
    backend's class (ocg/config/models_file.py: TransformersEntry, OpenAIEntry, ReplayEntry)."""
    if not isinstance(entry, dict):
        return validate(TransformersEntry, entry, where)  # the error: expected a mapping
    if "name" in entry:  # the key above the entry names it
        raise OcgInputError(
            f"{where}.name", f"unknown key; known: {sorted(file_fields(TransformersEntry))}"
        )
    backend = {**defaults, **entry}.get("backend", "transformers")
    if backend not in ENTRY_CLASSES:
        validate(ModelDefaults, {"backend": backend}, where)  # the error: expected one of ...
    fixed = FIXED_BY_BACKEND.get(backend, set())
    merged = {**{k: v for k, v in defaults.items() if k not in fixed}, **entry}
    loaded = validate(ENTRY_CLASSES[backend], {**merged, "name": name}, where)
    _check_quantization_said(where, entry, defaults, merged)
    _check_own_keys(where, entry, backend)
    return _beside(loaded, source, where)


def _file_defaults(raw: dict, source: str) -> dict:
    """A models file's `defaults:` mapping, checked as an entry's fields (less its id)."""
    defaults = raw.get("defaults") or {}
    for key in defaults if isinstance(defaults, dict) else ():
        if key not in ModelDefaults.model_fields:
            raise OcgInputError(f"{source}: defaults.{key}", "unknown or not defaultable field")
    validate(ModelDefaults, defaults, f"{source}: defaults")
    return defaults


def parse_models(
    raw: object, source: str, inherited: dict[str, ModelEntry] | None = None
) -> dict[str, ModelEntry]:
    """The entries of one models file; `inherited`: those of the file it `extends`, which its
    entries may name as base_model but not redefine."""
    if not isinstance(raw, dict) or not isinstance(raw.get("models"), dict):
        raise OcgInputError(source, "expected a mapping with a 'models' mapping")
    if extra := sorted(set(raw) - {"defaults", "models", "extends"}):
        raise OcgInputError(
            source, f"unknown top-level key(s) {extra}; expected extends, defaults, models"
        )
    inherited = inherited or {}
    defaults = _file_defaults(raw, source)
    specs = {}
    for name, entry in raw["models"].items():
        where = f"{source}: models.{name}"
        check_name(where, name)
        if str(name) in inherited:
            raise OcgInputError(
                where, "already an entry of the file this one extends; give yours another name"
            )
        specs[str(name)] = _parse_entry(str(name), where, entry, defaults, source)
    for spec in specs.values():
        if spec.base_model and spec.base_model not in specs and spec.base_model not in inherited:
            raise OcgInputError(
                f"{source}: models.{spec.name}.base_model",
                f"{spec.base_model!r} is not an entry of this file",
            )
    return {**inherited, **specs}


def load_models(path: str | Path = MODELS_FILE) -> dict[str, ModelEntry]:
    """A models file's entries, with those of the file it `extends` (a path relative to it, e.g.
    the shipped params/models.yaml): add a model without copying anyone's entries (a loop: a deep
    chain is an error naming the file, not Python's recursion limit)."""
    chain = read_extends_chain(path, "models", MAX_EXTENDS)
    specs: dict[str, ModelEntry] = {}  # the base first: its entries may be named by the others'
    for file, raw in reversed(chain):
        specs = parse_models(raw, str(file), specs)
    return specs


def get_model(name: str, path: str | Path = MODELS_FILE) -> ModelEntry:
    models = load_models(path)
    if name not in models:
        import difflib

        close = difflib.get_close_matches(name, models, n=3)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        raise OcgInputError(
            f"{path}",
            f"unknown model {name!r}{hint} (known: {len(models)} entries, see params/models.yaml)",
        )
    return models[name]
