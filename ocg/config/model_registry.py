"""The model registry (params/models.yaml): its entries loaded as ModelEntry objects
(ocg/config/models_file.py), errors naming model and field."""

from __future__ import annotations

from pathlib import Path

from ..core.errors import OcgInputError
from ..core.files import read_extends_chain
from ..core.names import check_name
from ..core.paths import PARAMS_DIR, SHIPPED_DATA
from .file_model import file_fields, validate
from .model_checks import RATE_KEYS, generation_defaults
from .models_file import (
    ATTENTIONS,
    BACKENDS,
    DECODINGS,
    DEFAULT_PROMPT_DATE,
    DTYPES,
    EXTRACTIONS,
    MAX_SECONDS,
    QUANTIZATIONS,
    SEED_MAX,
    SYSTEM_MODES,
    SYSTEM_PROMPTS,
    ModelDefaults,
    ModelEntry,
    ReplayBlock,
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


def _check_api(where: str, entry: ModelEntry) -> None:
    """Only openai entries take an api block, and they need one (its base_url). A key is the
    server's business: without `key_env` none is sent (a local server that takes none, started
    by ocg or not); a server that wants one answers 401, and the error names `api.key_env`."""
    api = entry.api
    if entry.backend != "openai":
        if api is not None:
            raise OcgInputError(f"{where}.api", "only the openai backend takes an api block")
        return
    if api is None:
        raise OcgInputError(
            f"{where}.api",
            "missing: the openai backend needs api.base_url (and api.key_env for a key)",
        )
    if api.server is not None:
        if "{key}" in api.server.command and not api.key_env:
            raise OcgInputError(
                f"{where}.api.server.command",
                "uses {key}, but api.key_env names no variable to fill it from",
            )
    elif "{port}" in api.base_url:
        raise OcgInputError(
            f"{where}.api.base_url", "{port} is only filled in when api.server starts a server"
        )


def _check_quantization_said(where: str, entry: dict, defaults: dict, merged: dict) -> None:
    """A transformers entry that sets dtype says its quantization: left to the default (the
    paper's 4bit), `dtype: float32` meant as full weights would silently be a 4-bit model."""
    if (
        merged.get("backend", "transformers") == "transformers"
        and "dtype" in entry
        and "quantization" not in entry
        and "quantization" not in defaults
    ):
        default = ModelEntry.model_fields["quantization"].default
        raise OcgInputError(
            f"{where}.quantization",
            "missing: an entry that sets dtype must say its "
            "quantization (none: full weights in that dtype; 4bit or 8bit: bitsandbytes "
            f"with that compute dtype); left out it would be {default!r}",
        )


def _api_entry(where: str, entry: dict) -> dict:
    """An openai entry: weights, dtype, attention and decoding are the provider's business (the
    fields it takes instead of the file's defaults)."""
    fixed = {
        "quantization": entry.get("quantization", "none"),
        "dtype": entry.get("dtype", "auto"),
        "batch_check": entry.get("batch_check", 0),  # a server's batching is its own
        "attention": entry.get("attention", "auto"),
    }
    if fixed["quantization"] != "none":
        raise OcgInputError(f"{where}.quantization", "an API model cannot be quantized here")
    if fixed["attention"] != "auto":
        raise OcgInputError(
            f"{where}.attention",
            "an API model's attention is the server's; this field is for transformers",
        )
    if entry.get("generation_overrides") or entry.get("decoding", "greedy") != "greedy":
        raise OcgInputError(
            f"{where}.generation_overrides",
            "API models decode as the "
            "api block says (temperature); these fields are for transformers",
        )
    return fixed


def _replay_entry(where: str, entry: dict, loaded: ModelEntry, source: str) -> dict:
    """A replay entry: nothing runs (no weights, no decoding, no batching); its file is read
    beside the models file, as `extends` is."""
    for key, fixed in (
        ("quantization", "none"),
        ("dtype", "auto"),
        ("decoding", "greedy"),
        ("attention", "auto"),
    ):
        if entry.get(key, fixed) != fixed:
            raise OcgInputError(
                f"{where}.{key}", f"a replay entry replays answers; {key} does not apply"
            )
    fixed = {"quantization": "none", "dtype": "auto", "attention": "auto", "batch_check": 0}
    replay = loaded.replay or ReplayBlock()
    file = replay.file
    if replay.key != "instance_id" and not file:
        raise OcgInputError(f"{where}.replay.key", "answers per concept set need replay.file")
    shipped = file and file.startswith(SHIPPED_DATA)  # ocg-data:NAME: ocg/data/NAME
    if (
        file
        and not shipped
        and not Path(file).expanduser().is_absolute()
        and Path(source).is_file()
    ):
        replay = replay.model_copy(update={"file": str(Path(source).resolve().parent / file)})
    return {**fixed, "replay": replay}


def _parse_entry(name: str, where: str, entry: object, defaults: dict, source: str) -> ModelEntry:
    """One entry, `defaults` under its fields, checked (ocg/config/models_file.py, ModelEntry),
    with what its backend fixes and paper_id filled in."""
    if not isinstance(entry, dict):
        validate(ModelEntry, entry, where)  # the error: expected a mapping
    if "name" in entry:  # the key above the entry names it
        raise OcgInputError(
            f"{where}.name", f"unknown key; known: {sorted(file_fields(ModelEntry))}"
        )
    merged = {**defaults, **entry}
    loaded = validate(ModelEntry, {**merged, "name": name}, where)
    _check_quantization_said(where, entry, defaults, merged)
    fixed = {}
    if loaded.backend == "openai":
        fixed = _api_entry(where, entry)
    if loaded.backend == "replay":
        fixed = _replay_entry(where, entry, loaded, source)
    elif loaded.replay is not None:
        raise OcgInputError(f"{where}.replay", "only the replay backend takes a replay block")
    _check_api(where, loaded)
    return loaded.model_copy(update={**fixed, "paper_id": loaded.paper_id or loaded.id})


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
    specs = None  # the base first: each file's entries may name those of the files it extends
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
