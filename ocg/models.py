"""The model registry (params/models.yaml): validated entries, errors naming model and field."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from pathlib import Path

from .embedded import EMBEDDED_MODELS, EMBEDDED_PREFIX
from .errors import OcgInputError, shown
from .io import read_extends_chain
from .names import check_name
from .paths import PARAMS_DIR
from .schema import AUTO_OR_POSITIVE, Field, check_fields, check_value

MODELS_FILE = PARAMS_DIR / "models.yaml"

BACKENDS = ("transformers", "openai", "replay")  # replay: answers from a file or a synthetic writer
QUANTIZATIONS = ("none", "4bit", "8bit")
DTYPES = ("auto", "float32", "bfloat16", "float16")
# auto: transformers' choice (sdpa where the model supports it); docs/METHODS.md, "Decoding"
ATTENTIONS = ("auto", "sdpa", "eager")
EXTRACTIONS = ("plain", "think", "marco_o1")
SYSTEM_MODES = ("auto", "system", "folded")  # auto: probe the chat template (API models: system)
DECODINGS = ("greedy", "model_defaults")  # see docs/METHODS.md, "Decoding"
SYSTEM_PROMPTS = ("paper", "template_default")
# The calendar date every chat template sees (Llama 3.x writes "Today Date: ..." into the system
# turn). The Llama 3.1 template's own fallback date; pinned so a rerun asks the same prompt.
DEFAULT_PROMPT_DATE = "2024-07-26"
SEED_MAX = 2**32 - 1  # transformers' set_seed seeds numpy, which takes no more
MAX_SECONDS = 7 * 24 * 3600  # a wait longer than a week is a typo (sockets overflow near 1e12 s)
MAX_EXTENDS = 50  # models files in one `extends` chain: a longer one is a mistake, not a layout


@dataclass(frozen=True)
class ModelSpec:
    """One models-file entry. Its field defaults are every entry's (the one place they are written);
    a models file's `defaults:` mapping changes them for that file's entries."""

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


def _check_id(where: str, value: str) -> None:
    if not value.strip():
        raise OcgInputError(where, "empty id")
    name = value[len(EMBEDDED_PREFIX) :]
    if value.startswith(EMBEDDED_PREFIX) and name not in EMBEDDED_MODELS:
        raise OcgInputError(where, f"no embedded model {name!r}; known: {sorted(EMBEDDED_MODELS)}")


def _check_date(where: str, value: str) -> None:
    import datetime as _dt

    try:
        _dt.date.fromisoformat(value)
    except ValueError:
        raise OcgInputError(where, f"got {shown(value)}; expected an ISO date YYYY-MM-DD") from None


# Settings that only stop generation or select tokens in ways a user may want to change on
# purpose; anything else a GenerationConfig knows is accepted too, after a type check.
_NEVER_OVERRIDE = {
    "max_new_tokens",
    "do_sample",
    "num_beams",
    "eos_token_id",
    "pad_token_id",
    "bos_token_id",
}


def generation_defaults() -> dict:
    """Every GenerationConfig setting with the value generate() uses when nobody sets it.
    transformers 5 leaves them None on a fresh config and fills them in inside generate() from
    a table of its own (4.x's fresh config holds them, and has no such table)."""
    from transformers import GenerationConfig

    values = GenerationConfig().to_dict()
    table = getattr(GenerationConfig, "_get_default_generation_params", None)
    values.update({k: v for k, v in (table() if table else {}).items() if values.get(k) is None})
    return values


def _check_generation_overrides(where: str, overrides: dict) -> None:
    known = generation_defaults()
    for key, value in overrides.items():
        if key in _NEVER_OVERRIDE:
            raise OcgInputError(
                f"{where}.{key}",
                "set through its own field (max_new_tokens, "
                "decoding) or fixed by ocg (greedy: do_sample false, one beam)",
            )
        if key not in known:
            raise OcgInputError(f"{where}.{key}", "not a transformers GenerationConfig setting")
        default = known[key]
        if (
            default is not None
            and not isinstance(value, type(default))
            and not (
                isinstance(default, float)
                and isinstance(value, int)
                and not isinstance(value, bool)
            )
        ):
            raise OcgInputError(
                f"{where}.{key}", f"got {shown(value)}; expected {type(default).__name__}"
            )
        if isinstance(value, float) and not math.isfinite(value):
            raise OcgInputError(f"{where}.{key}", f"got {shown(value)}; expected a finite number")


def _check_url(where: str, value: str) -> None:
    from urllib.parse import urlsplit

    if not value.startswith(("http://", "https://")):
        raise OcgInputError(where, f"got {shown(value)}; expected an http(s) URL")
    if (
        "@" in urlsplit(value).netloc
    ):  # requests would send them instead of the key, and cards keep URLs
        raise OcgInputError(
            where,
            "holds credentials (user:password@host); they would replace the key and be "
            "written into the run card: put the key in the variable api.key_env names",
        )


# Every field of an entry (params/models.yaml documents them), checked by ocg/schema.py.
FIELDS = {
    "id": Field(str, required=True, check=_check_id),
    "backend": Field(str, choices=BACKENDS),
    "revision": Field(str),
    "quantization": Field(str, choices=QUANTIZATIONS),
    "dtype": Field(str, choices=DTYPES),
    "attention": Field(str, choices=ATTENTIONS),
    "trust_remote_code": Field(bool),
    "max_new_tokens": Field(int, minimum=1),
    "batch_size": AUTO_OR_POSITIVE,
    "pad_multiple": AUTO_OR_POSITIVE,
    "seed": Field(int, minimum=0, maximum=SEED_MAX),
    "answer_extraction": Field(str, choices=EXTRACTIONS),
    "system_mode": Field(str, choices=SYSTEM_MODES),
    "system_prompt": Field(str, choices=SYSTEM_PROMPTS),
    "prompt_date": Field(str, check=_check_date),
    "decoding": Field(str, choices=DECODINGS),
    "generation_overrides": Field(dict, check=_check_generation_overrides),
    "batch_check": Field(int, minimum=0),
    "paper_name": Field(str, nullable=True),
    "paper_id": Field(str, nullable=True),
    "base_model": Field(str, nullable=True),
    "api": Field(dict),
    "replay": Field(dict),
}
SECONDS = Field(float, minimum=0, maximum=MAX_SECONDS)
API_FIELDS = {
    "base_url": Field(str, required=True, check=_check_url),
    "key_env": Field(str, nullable=True),
    "concurrency": Field(int, minimum=1),
    "timeout_s": Field(float, minimum=0, exclusive=True, maximum=MAX_SECONDS),
    "max_retries": Field(int, minimum=0),
    "temperature": Field(float, nullable=True, minimum=0),
    "backoff_s": SECONDS,
    "token_param": Field(str),
    "max_retry_wait_s": SECONDS,
    "server": Field(dict),
    # false: the API takes no `seed` (none is sent; a sampled run's card says seeds were not honoured)
    "takes_seed": Field(bool),
    # how a constrained condition's regex is sent (ocg/generation/api_backend.py, REGEX_PARAMS):
    # structured_outputs (vLLM >= 0.10.2; the default) or guided_regex (older vLLM)
    "regex_param": Field(str, choices=("structured_outputs", "guided_regex")),
}
API_DEFAULTS = {
    "key_env": None,
    "concurrency": 8,
    "timeout_s": 120,
    "max_retries": 6,
    "temperature": 0,
    "backoff_s": 1.0,
    "token_param": "max_tokens",
    "max_retry_wait_s": 300,
}
# The replay backend: answers from `file` (JSONL keyed by instance id), else from the synthetic
# writer, whose per-model rates (ocg/generation/synthetic.py, model_rates) `rates` may set.
RATE_KEYS = ("reorder", "drop", "inflect", "repeat", "degenerate")
REPLAY_FIELDS = {
    "file": Field(str),
    "rates": Field(dict, check=lambda where, value: _check_rates(where, value)),
}


def _check_rates(where: str, rates: dict) -> None:
    for key, value in rates.items():
        if key not in RATE_KEYS:
            raise OcgInputError(f"{where}.{key}", f"unknown rate; known: {list(RATE_KEYS)}")
        check_value(f"{where}.{key}", value, Field(float, minimum=0))
        if value > 1:
            raise OcgInputError(
                f"{where}.{key}", f"got {shown(value)}; expected a rate between 0 and 1"
            )


def _check_command(where: str, command: str) -> None:
    import shlex

    try:
        words = shlex.split(command)
    except ValueError as exc:
        raise OcgInputError(where, f"cannot be split into words as a shell would ({exc})") from None
    if not words:
        raise OcgInputError(where, "empty; expected the command that starts the server")


# A server started for the run: its command ({id}, {port}, {model_dir}, {key} filled in).
SERVER_FIELDS = {
    "command": Field(str, required=True, check=_check_command),
    "startup_timeout_s": Field(float, minimum=0, exclusive=True, maximum=MAX_SECONDS),
    "port": Field(int, minimum=1, maximum=65535),
    "model_dir": Field(str),
}


def _validate_api(where: str, api: dict, backend: str) -> dict:
    if backend != "openai":
        if api:
            raise OcgInputError(f"{where}.api", "only the openai backend takes an api block")
        return {}
    if "key_env" not in api and "server" not in api:  # a server started for the run needs no key
        raise OcgInputError(f"{where}.api.key_env", "missing (required by the openai backend)")
    merged = check_fields(f"{where}.api", api, API_FIELDS, API_DEFAULTS)
    if "server" in merged:
        merged["server"] = check_fields(
            f"{where}.api.server", merged["server"], SERVER_FIELDS, {"startup_timeout_s": 600}
        )
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
    defaults = raw.get("defaults") or {}
    for key, value in defaults.items():
        if key not in FIELDS or key == "id":
            raise OcgInputError(f"{source}: defaults.{key}", "unknown or not defaultable field")
        check_value(f"{source}: defaults.{key}", value, FIELDS[key])
    specs = {}
    for name, entry in raw["models"].items():
        where = f"{source}: models.{name}"
        check_name(where, name)
        if str(name) in inherited:
            raise OcgInputError(
                where, "already an entry of the file this one extends; give yours another name"
            )
        merged = check_fields(where, entry, FIELDS, defaults)
        _check_quantization_said(where, entry, defaults, merged)
        if merged.get("backend") == "openai":  # weights and dtype are the provider's business
            merged["quantization"] = entry.get("quantization", "none")
            merged["dtype"] = entry.get("dtype", "auto")
            merged["batch_check"] = entry.get("batch_check", 0)  # a server's batching is its own
            if merged["quantization"] != "none":
                raise OcgInputError(
                    f"{where}.quantization", "an API model cannot be quantized here"
                )
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
            check_fields(where, merged, FIELDS)
        if merged.get("backend") == "replay":  # nothing runs: no weights, no decoding, no batching
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
            merged["replay"] = replay = check_fields(
                f"{where}.replay", merged.get("replay") or {}, REPLAY_FIELDS
            )
            if (
                replay.get("file")
                and not Path(replay["file"]).expanduser().is_absolute()
                and Path(source).is_file()
            ):
                replay["file"] = str(
                    Path(source).resolve().parent / replay["file"]
                )  # as `extends`: beside this file
        elif merged.get("replay"):
            raise OcgInputError(f"{where}.replay", "only the replay backend takes a replay block")
        merged["api"] = _validate_api(
            where, merged.get("api") or {}, merged.get("backend", "transformers")
        )
        merged["paper_id"] = merged.get("paper_id") or merged["id"]
        specs[str(name)] = ModelSpec(name=str(name), **merged)
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
