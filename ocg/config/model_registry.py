"""The model registry (params/models.yaml): validated entries, errors naming model and field."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path

from ..core.errors import OcgInputError
from ..core.files import read_extends_chain
from ..core.names import check_name
from ..core.paths import PARAMS_DIR
from .file_model import validate
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
    ApiBlock,
    ModelDefaults,
    ModelEntry,
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
    "ModelSpec",
    "generation_defaults",
    "get_model",
    "load_models",
    "parse_models",
]

MODELS_FILE = PARAMS_DIR / "models.yaml"
MAX_EXTENDS = 50  # models files in one `extends` chain: a longer one is a mistake, not a layout


@dataclass(frozen=True)
class ModelSpec:
    """One models-file entry. Its field defaults are every entry's (the schema's, ModelDefaults in
    ocg/config/models_file.py, are held equal to them by a test); a models file's `defaults:`
    mapping changes them for that file's entries."""

    name: str
    id: str
    backend: str = "transformers"
    revision: str = "main"
    quantization: str = "4bit"
    dtype: str = "bfloat16"
    attention: str = "auto"
    trust_remote_code: bool = False
    max_new_tokens: int = 128
    batch_size: int | str = 32  # auto: the largest that fits on CUDA (generation/batch_auto.py)
    pad_multiple: int | str = (
        "auto"  # prompts padded to a multiple of it; auto: 8 on CUDA, 1 elsewhere
    )
    seed: int = 42
    answer_extraction: str = "plain"
    system_mode: str = "auto"
    system_prompt: str = "paper"
    prompt_date: str = DEFAULT_PROMPT_DATE
    decoding: str = "greedy"
    generation_overrides: dict = field(default_factory=dict)
    batch_check: int = 16
    paper_name: str | None = None
    paper_id: str | None = (
        None  # the id the paper's Table 5 prints (the comparison joins on it); default: id
    )
    base_model: str | None = None
    api: dict = field(default_factory=dict)
    replay: dict = field(default_factory=dict)

    def as_dict(self) -> dict:
        return asdict(self)


# The api block's defaults (ocg/config/models_file.py, ApiBlock), filled in for openai entries.
API_DEFAULTS = {
    key: ApiBlock.model_fields[key].default
    for key in (
        "key_env",
        "concurrency",
        "timeout_s",
        "max_retries",
        "temperature",
        "backoff_s",
        "token_param",
        "max_retry_wait_s",
    )
}
SERVER_DEFAULTS = {"startup_timeout_s": 600}


def _validate_api(where: str, api: dict, backend: str) -> dict:
    """The api block with its defaults (its fields were checked with the entry's): only openai
    entries take one, and they need a key, or a server started for the run."""
    if backend != "openai":
        if api:
            raise OcgInputError(f"{where}.api", "only the openai backend takes an api block")
        return {}
    if "key_env" not in api and "server" not in api:  # a server started for the run needs no key
        raise OcgInputError(f"{where}.api.key_env", "missing (required by the openai backend)")
    merged = {**API_DEFAULTS, **api}
    if "server" in merged:
        merged["server"] = {**SERVER_DEFAULTS, **merged["server"]}
        if "{key}" in merged["server"]["command"] and not merged["key_env"]:
            raise OcgInputError(
                f"{where}.api.server.command",
                "uses {key}, but api.key_env names no variable to fill it from",
            )
    elif "{port}" in merged["base_url"]:
        raise OcgInputError(
            f"{where}.api.base_url", "{port} is only filled in when api.server starts a server"
        )
    return merged


def _check_quantization_said(where: str, entry: dict, defaults: dict, merged: dict) -> None:
    """A transformers entry that sets dtype says its quantization: left to the default (the
    paper's 4bit), `dtype: float32` meant as full weights would silently be a 4-bit model."""
    if (
        merged.get("backend", "transformers") == "transformers"
        and "dtype" in entry
        and "quantization" not in entry
        and "quantization" not in defaults
    ):
        raise OcgInputError(
            f"{where}.quantization",
            "missing: an entry that sets dtype must say its "
            "quantization (none: full weights in that dtype; 4bit or 8bit: bitsandbytes "
            f"with that compute dtype); left out it would be {ModelSpec.quantization!r}",
        )


def _api_entry(where: str, entry: dict, merged: dict) -> None:
    """An openai entry: weights, dtype, attention and decoding are the provider's business."""
    merged["quantization"] = entry.get("quantization", "none")
    merged["dtype"] = entry.get("dtype", "auto")
    merged["batch_check"] = entry.get("batch_check", 0)  # a server's batching is its own
    if merged["quantization"] != "none":
        raise OcgInputError(f"{where}.quantization", "an API model cannot be quantized here")
    merged["attention"] = entry.get("attention", "auto")
    if merged["attention"] != "auto":
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


def _replay_entry(where: str, entry: dict, merged: dict, source: str) -> None:
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
    merged.update(quantization="none", dtype="auto", attention="auto", batch_check=0)
    merged["replay"] = replay = dict(merged.get("replay") or {})
    file = replay.get("file")
    if file and not Path(file).expanduser().is_absolute() and Path(source).is_file():
        replay["file"] = str(Path(source).resolve().parent / file)


def _parse_entry(where: str, entry: object, defaults: dict, source: str) -> dict:
    """One entry's fields, `defaults` under them, checked (ocg/config/models_file.py, ModelEntry)."""
    if isinstance(entry, dict):
        validate(ModelEntry, {**defaults, **entry}, where)
    else:
        validate(ModelEntry, entry, where)  # the error: expected a mapping
    merged = {**defaults, **entry}
    _check_quantization_said(where, entry, defaults, merged)
    backend = merged.get("backend", "transformers")
    if backend == "openai":
        _api_entry(where, entry, merged)
    if backend == "replay":
        _replay_entry(where, entry, merged, source)
    elif merged.get("replay"):
        raise OcgInputError(f"{where}.replay", "only the replay backend takes a replay block")
    merged["api"] = _validate_api(where, merged.get("api") or {}, backend)
    merged["paper_id"] = merged.get("paper_id") or merged["id"]
    return merged


def _file_defaults(raw: dict, source: str) -> dict:
    """A models file's `defaults:` mapping, checked as an entry's fields (less its id)."""
    defaults = raw.get("defaults") or {}
    for key in defaults if isinstance(defaults, dict) else ():
        if key not in ModelDefaults.model_fields:
            raise OcgInputError(f"{source}: defaults.{key}", "unknown or not defaultable field")
    validate(ModelDefaults, defaults, f"{source}: defaults")
    return defaults


def parse_models(
    raw: object, source: str, inherited: dict[str, ModelSpec] | None = None
) -> dict[str, ModelSpec]:
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
        specs[str(name)] = ModelSpec(name=str(name), **_parse_entry(where, entry, defaults, source))
    for spec in specs.values():
        if spec.base_model and spec.base_model not in specs and spec.base_model not in inherited:
            raise OcgInputError(
                f"{source}: models.{spec.name}.base_model",
                f"{spec.base_model!r} is not an entry of this file",
            )
    return {**inherited, **specs}


def load_models(path: str | Path = MODELS_FILE) -> dict[str, ModelSpec]:
    """A models file's entries, with those of the file it `extends` (a path relative to it, e.g.
    the shipped params/models.yaml): add a model without copying anyone's entries (a loop: a deep
    chain is an error naming the file, not Python's recursion limit)."""
    chain = read_extends_chain(path, "models", MAX_EXTENDS)
    specs = None  # the base first: each file's entries may name those of the files it extends
    for file, raw in reversed(chain):
        specs = parse_models(raw, str(file), specs)
    return specs


def get_model(name: str, path: str | Path = MODELS_FILE) -> ModelSpec:
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
